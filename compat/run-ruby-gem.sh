#!/usr/bin/env bash
# The Ruby gem cassieq-client (unchanged) against a cassieq server whose queues are
# partitioned: first the gem's own RSpec suite, then compat/ruby/compat_check.rb.
#
#   CASSIEQ_RUBY_GEM_DIR=<a checkout of the gem: lib/, spec/, .rspec>
#   PARTITIONS=4 compat/run-ruby-gem.sh         # PARTITIONS=1 for the comparison
#
# Needs ruby and rspec, and the gem's dependencies faraday, faraday_middleware and
# activesupport (Debian: ruby ruby-rspec ruby-faraday ruby-faraday-middleware
# ruby-activesupport); the gem's lib/ is put on the load path, no bundler.
#
# The gem's suite talks to port 8080 (its clients take the gem's default port), so the
# server listens there: the script stops when 8080 is taken. The suite is configured as
# its own rake task does it (an account and a signed query string with the levels p u a g
# from CassieQ's admin routes, written to spec/config.yml of a copy of the gem made for the
# run). Prints "TOTAL ... passed=N failed=M" (an RSpec example is one check); exit 0 only
# when nothing failed. Bounded: the server lives at most SERVER_LIFETIME seconds (600), the
# suite and each phase at most 300.
# shellcheck source=compat/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -z "${CASSIEQ_RUBY_GEM_DIR:-}" ] || [ ! -d "$CASSIEQ_RUBY_GEM_DIR/spec" ]; then
    echo "set CASSIEQ_RUBY_GEM_DIR to a checkout of the cassieq-client gem (with spec/)" >&2
    exit 2
fi
if ! port_free 8080; then
    echo "port 8080 is taken: the gem's suite talks to 8080 only" >&2
    exit 2
fi

start_server 8080 "$(free_port)"
make_account ruby

echo "--- the gem's RSpec suite"
mkdir -p "$WORK/gem"
cp -r "$CASSIEQ_RUBY_GEM_DIR/lib" "$CASSIEQ_RUBY_GEM_DIR/spec" "$CASSIEQ_RUBY_GEM_DIR/.rspec" "$WORK/gem/"
SUITE_GRANT="$(make_grant p u a g)"
# As tasks/cassieq.rake writes it.
printf -- '---\nhost: 127.0.0.1\nkey: %s\nprovided_params: %s\naccount: %s\n' \
    "$KEY" "$SUITE_GRANT" "$ACCOUNT" >"$WORK/gem/spec/config.yml"
(cd "$WORK/gem" && timeout 300 rspec -I lib --format documentation) | tee "$WORK/rspec.out" || true
summary="$(grep -E '^[0-9]+ examples?, [0-9]+ failures?' "$WORK/rspec.out" || true)"
if [ -n "$summary" ]; then
    examples="$(echo "$summary" | sed -E 's/^([0-9]+) examples?.*/\1/')"
    failures="$(echo "$summary" | sed -E 's/^[0-9]+ examples?, ([0-9]+) failures?.*/\1/')"
    CHECKS_PASSED=$((CHECKS_PASSED + examples - failures))
    CHECKS_FAILED=$((CHECKS_FAILED + failures))
    echo "gem suite: $summary"
else
    fail "gem_suite_ran_to_its_end"
fi

echo "--- phase 1: more checks through the gem, then 40 messages put into compat_spread"
GRANT="$(make_grant r p u a c d g)"
timeout 300 ruby -I "$WORK/gem/lib" "$COMPAT_DIR/ruby/compat_check.rb" suite 8080 "$ACCOUNT" "$KEY" "$GRANT" |
    tee "$WORK/suite.out" || true
count_results "$WORK/suite.out" ruby_suite "^RESULT "

echo "--- between the phases: the queue as v2 sees it"
check_partitioned compat_spread 40

echo "--- phase 2: every message of compat_spread taken through the gem, each once"
timeout 300 ruby -I "$WORK/gem/lib" "$COMPAT_DIR/ruby/compat_check.rb" drain 8080 "$ACCOUNT" "$KEY" |
    tee "$WORK/drain.out" || true
count_results "$WORK/drain.out" ruby_drain "^RESULT "

finish "Ruby gem cassieq-client"
