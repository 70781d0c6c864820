# The Ruby gem cassieq-client (unchanged, its lib/ on the load path) against a cassieq server.
#
# Run by compat/run-ruby-gem.sh, after the gem's own RSpec suite: these checks add what
# the suite does not do (many messages, every one taken once, statistics over them, stale
# receipts, leases ending), on a server whose queues are partitioned.
#
#   ruby -I <gem>/lib compat_check.rb suite <port> <account> <key> <grant>
#     every check below, then fills "compat_spread" with SPREAD messages and leaves them;
#   ruby -I <gem>/lib compat_check.rb drain <port> <account> <key>
#     takes every message of "compat_spread" through the gem, each exactly once.
#
# Prints "PASS <check>" / "FAIL <check>: <why>" and "RESULT passed=N failed=M".

require "cassieq/client"

SPREAD = 40
SPREAD_QUEUE = "compat_spread"

class Failed < StandardError; end

class CompatCheck
  attr_reader :passed, :failed

  def initialize(port, account, key)
    @port = port
    @account = account
    @key = key
    @client = Cassieq::Client.new(host: "127.0.0.1", port: port, account: account, key: key)
    @passed = 0
    @failed = 0
  end

  def expect(ok, why)
    raise Failed, why unless ok
  end

  def check(name)
    yield
    @passed += 1
    puts "PASS #{name}"
  rescue StandardError => e
    @failed += 1
    puts "FAIL #{name}: #{e.class}: #{e.message}"
  ensure
    $stdout.flush
  end

  def raises(klass)
    yield
    false
  rescue klass
    true
  end

  # Every message of the queue, taken and acked, until a get answers none (the gem's
  # answer to an empty body is true); payload => times seen.
  def drain_all(queue, at_most)
    seen = Hash.new(0)
    at_most.times do
      m = @client.next_message(queue)
      return seen if m == true
      seen[m[:message]] += 1
      expect(@client.ack_message(queue, m[:pop_receipt]) == true, "ack of #{m[:message]} refused")
    end
    raise Failed, "still messages after #{at_most} gets"
  end

  def suite(grant)
    c = @client
    check("create_queue") { expect(c.create_queue(queue_name: "basic") == true, "not true") }
    check("create_queue_error_if_exists_conflicts") do
      expect(raises(Cassieq::Conflict) { c.create_queue({ queue_name: "basic" }, true) }, "no Conflict")
    end
    check("queue_definition") do
      q = c.queue("basic")
      expect(q.size == 13, "#{q.size} fields: #{q.keys}")
      expect(q[:queue_name] == "basic" && q[:account_name] == @account, q.inspect)
      expect(q[:id] == "#{@account}:basic_v0", "id #{q[:id]}")
    end
    check("queues_lists_it") { expect(c.queues.any? { |q| q[:queue_name] == "basic" }, "not listed") }
    check("publish_next_ack") do
      expect(c.publish_message("basic", "hello") == true, "publish not true")
      m = c.next_message("basic")
      expect(m.is_a?(Hash) && m.size == 4, "got #{m.inspect}")
      expect(m[:message] == "hello" && m[:delivery_count] == 0, m.inspect)
      expect(c.ack_message("basic", m[:pop_receipt]) == true, "ack not true")
      expect(c.next_message("basic") == true, "a message after the ack")
    end
    check("initial_invisibility_respected") do
      c.publish_message("basic", "later", 3600)
      c.publish_message("basic", "now")
      m = c.next_message("basic")
      expect(m.is_a?(Hash) && m[:message] == "now", "got #{m.inspect}")
      c.ack_message("basic", m[:pop_receipt])
      expect(c.next_message("basic") == true, "the invisible message was delivered")
      expect(c.statistics("basic") == { size: 1 }, "statistics #{c.statistics("basic")}")
    end
    check("many_messages_each_once_and_statistics") do
      c.create_queue(queue_name: "many")
      40.times { |i| c.publish_message("many", "m-#{i}") }
      expect(c.statistics("many") == { size: 40 }, "statistics #{c.statistics("many")}")
      seen = drain_all("many", 200)
      expect(seen.size == 40 && seen.values.max == 1, "seen #{seen}")
      expect(c.statistics("many") == { size: 0 }, "statistics after #{c.statistics("many")}")
    end
    check("edit_message_and_stale_receipt") do
      c.publish_message("basic", "foo")
      m = c.next_message("basic")
      e = c.edit_message("basic", m[:pop_receipt], message: "foo2")
      expect(e.size == 2 && e[:pop_receipt].is_a?(String), "edit answered #{e.inspect}")
      expect(raises(Cassieq::Conflict) { c.ack_message("basic", m[:pop_receipt]) }, "stale receipt acked")
      expect(c.ack_message("basic", e[:pop_receipt]) == true, "ack refused")
    end
    check("edit_to_visible_redelivers_new_payload") do
      c.publish_message("basic", "before")
      m = c.next_message("basic")
      c.edit_message("basic", m[:pop_receipt], message: "after", new_invisibility_seconds: 0)
      again = c.next_message("basic")
      expect(again.is_a?(Hash) && again[:message] == "after", "got #{again.inspect}")
      c.ack_message("basic", again[:pop_receipt])
    end
    check("lease_end_redelivers") do
      c.publish_message("basic", "x")
      m = c.next_message("basic")
      # The gem's next_message sets no lease (it sends initialInvisibilitySeconds, which a
      # get ignores): an edit shortens it to 1 s.
      e = c.edit_message("basic", m[:pop_receipt], new_invisibility_seconds: 1)
      again = true
      deadline = Time.now + 15
      while again == true && Time.now < deadline
        sleep 0.2 # waiting on the server's real clock
        again = c.next_message("basic")
      end
      expect(again.is_a?(Hash) && again[:message] == "x", "got #{again.inspect}")
      expect(again[:delivery_count] >= 1, "delivery_count #{again[:delivery_count]}")
      expect(raises(Cassieq::Conflict) { c.ack_message("basic", e[:pop_receipt]) }, "expired receipt acked")
      expect(c.ack_message("basic", again[:pop_receipt]) == true, "ack refused")
    end
    check("provided_params_credentials") do
      g = Cassieq::Client.new(host: "127.0.0.1", port: @port, account: @account, provided_params: grant)
      expect(g.create_queue(queue_name: "granted") == true, "create")
      expect(g.publish_message("granted", "g") == true, "publish")
      m = g.next_message("granted")
      expect(m.is_a?(Hash) && m[:message] == "g", "got #{m.inspect}")
      expect(g.ack_message("granted", m[:pop_receipt]) == true, "ack")
    end
    check("no_credentials_unauthorized") do
      anon = Cassieq::Client.new(host: "127.0.0.1", port: @port, account: @account)
      expect(raises(Cassieq::Unauthorized) { anon.queues }, "no Unauthorized")
    end
    check("delete_queue") do
      expect(c.delete_queue("basic") == true, "delete not true")
      expect(raises(Cassieq::NotFound) { c.queue("basic") }, "still found")
    end
    check("fill_spread_queue") do
      c.create_queue(queue_name: SPREAD_QUEUE)
      SPREAD.times { |i| expect(c.publish_message(SPREAD_QUEUE, "s-#{i}") == true, "publish #{i}") }
    end
  end

  def drain
    check("drain_spread_queue_each_once") do
      expect(@client.statistics(SPREAD_QUEUE) == { size: SPREAD }, "statistics before")
      seen = drain_all(SPREAD_QUEUE, 5 * SPREAD)
      expect(seen.keys.sort == (0...SPREAD).map { |i| "s-#{i}" }.sort, "seen #{seen.keys}")
      expect(seen.values.max == 1, "some taken twice: #{seen}")
      expect(@client.statistics(SPREAD_QUEUE) == { size: 0 }, "statistics after")
      expect(@client.delete_queue(SPREAD_QUEUE) == true, "delete")
    end
  end
end

mode, port, account, key, grant = ARGV
check = CompatCheck.new(Integer(port), account, key)
mode == "suite" ? check.suite(grant) : check.drain
puts "RESULT passed=#{check.passed} failed=#{check.failed}"
exit(check.failed.zero? ? 0 : 1)
