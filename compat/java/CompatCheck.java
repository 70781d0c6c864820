// CassieQ's Java client (io.paradoxical:cassieq-client, unchanged) against a cassieq server.
//
// Run by compat/run-java-client.sh, which starts the server (every queue partitioned when
// CASSIEQ_DEFAULT_PARTITIONS > 1), makes the account and a grant, and checks between the two
// phases that the queue the client filled really is spread over partitions (v2).
//
//   java CompatCheck suite <baseUrl> <account> <key> <grantQueryString>
//     every check below, then fills the queue "compat.spread" with SPREAD messages and
//     leaves them there for the script to look at;
//   java CompatCheck drain <baseUrl> <account> <key>
//     takes every message of "compat.spread" through the client, each exactly once, and
//     deletes the queue.
//
// Prints "PASS <check>" / "FAIL <check>: <why>" lines and "RESULT passed=N failed=M";
// exits 1 when a check failed. The checks follow the client's own StandardApiTests of
// CassieQ's repository, with the real clock for its test clock.

import com.squareup.okhttp.ResponseBody;
import io.paradoxical.cassieq.api.client.CassieqApi;
import io.paradoxical.cassieq.api.client.CassieqCredentials;
import io.paradoxical.cassieq.model.GetMessageResponse;
import io.paradoxical.cassieq.model.QueueCreateOptions;
import io.paradoxical.cassieq.model.QueueName;
import io.paradoxical.cassieq.model.UpdateMessageRequest;
import io.paradoxical.cassieq.model.UpdateMessageResponse;
import io.paradoxical.cassieq.model.accounts.AccountKey;
import io.paradoxical.cassieq.model.accounts.AccountName;
import retrofit.Response;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public final class CompatCheck {
    static final int SPREAD = 40;
    static final QueueName SPREAD_QUEUE = QueueName.valueOf("compat.spread");

    interface Check {
        void run() throws Exception;
    }

    static final class Failed extends Exception {
        Failed(String why) {
            super(why);
        }
    }

    private final CassieqApi client;
    private final AccountName account;
    private final String baseUrl;
    private final CassieqCredentials credentials;
    private int passed;
    private int failed;

    CompatCheck(String baseUrl, String account, String key) {
        this.baseUrl = baseUrl;
        this.account = AccountName.valueOf(account);
        this.credentials = CassieqCredentials.key(this.account, AccountKey.valueOf(key));
        this.client = CassieqApi.createClient(baseUrl, credentials);
    }

    /** How a payload comes back: the client sends it JSON-serialised, the server keeps the
     *  body verbatim (CassieQ's behaviour), so a String put as hi is got as "hi". */
    static String wire(String payload) {
        return "\"" + payload + "\"";
    }

    static void expect(boolean ok, String why) throws Failed {
        if (!ok) {
            throw new Failed(why);
        }
    }

    void check(String name, Check body) {
        try {
            body.run();
            passed++;
            System.out.println("PASS " + name);
        } catch (Throwable t) {
            failed++;
            System.out.println("FAIL " + name + ": " + t);
        }
        System.out.flush();
    }

    QueueName create(String name) throws Exception {
        QueueName q = QueueName.valueOf(name);
        Response<ResponseBody> r = client.createQueue(account, new QueueCreateOptions(q)).execute();
        expect(r.isSuccess(), "create " + name + " answered " + r.code());
        return q;
    }

    void put(QueueName q, String message) throws Exception {
        Response<ResponseBody> r = client.addMessage(account, q, message).execute();
        expect(r.isSuccess(), "put answered " + r.code());
    }

    GetMessageResponse get(CassieqApi c, QueueName q, long invisibilitySeconds) throws Exception {
        Response<GetMessageResponse> r = c.getMessage(account, q, invisibilitySeconds).execute();
        expect(r.isSuccess(), "get answered " + r.code());
        return r.body();
    }

    boolean ack(CassieqApi c, QueueName q, String receipt) throws Exception {
        return c.ackMessage(account, q, receipt).execute().isSuccess();
    }

    /** Every message of q, taken and acked, until a get answers none; payload -> times seen. */
    Map<String, Integer> drainAll(QueueName q, int atMost) throws Exception {
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < atMost; i++) {
            GetMessageResponse m = get(client, q, 60);
            if (m == null) {
                return seen;
            }
            seen.merge(m.getMessage(), 1, Integer::sum);
            expect(ack(client, q, m.getPopReceipt()), "ack of " + m.getMessage() + " refused");
        }
        throw new Failed("still messages after " + atMost + " gets");
    }

    void suite(String grant) {
        check("create_queue", () -> create("compat.basic"));
        check("create_queue_with_invalid_name_fails", () -> {
            Response<ResponseBody> r =
                    client.createQueue(account, new QueueCreateOptions(QueueName.valueOf("invalid!"))).execute();
            expect(!r.isSuccess(), "answered " + r.code());
        });
        check("create_queue_with_dots_works", () -> create("create.queue.with.dots.works"));
        check("put_into_deleted_queue_fails", () -> {
            QueueName q = create("put_into_deleted_queue_fails");
            expect(client.deleteQueue(account, q).execute().isSuccess(), "delete refused");
            expect(!client.addMessage(account, q, "foo").execute().isSuccess(), "put succeeded");
        });
        check("put_get_ack", () -> {
            QueueName q = create("put_get_ack");
            put(q, "hi");
            GetMessageResponse m = get(client, q, 30);
            expect(m != null, "no message");
            expect(wire("hi").equals(m.getMessage()), "message " + m.getMessage());
            expect(m.getDeliveryCount() == 0, "deliveryCount " + m.getDeliveryCount());
            expect(m.getPopReceipt() != null && m.getMessageTag() != null, "no receipt or tag");
            expect(ack(client, q, m.getPopReceipt()), "ack refused");
            expect(get(client, q, 30) == null, "a message after the ack");
        });
        check("initial_invis_respected", () -> {
            QueueName q = create("initial_invis_respected");
            client.addMessage(account, q, "0").execute();
            client.addMessage(account, q, "4", 400000L).execute();
            client.addMessage(account, q, "3", 300000L).execute();
            client.addMessage(account, q, "2", 200000L).execute();
            client.addMessage(account, q, "1").execute();
            Set<String> got = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                GetMessageResponse m = get(client, q, 10000);
                if (m != null) {
                    got.add(m.getMessage());
                }
            }
            expect(got.equals(new HashSet<>(List.of(wire("0"), wire("1")))), "got " + got);
        });
        check("many_messages_each_once", () -> {
            QueueName q = create("many_messages");
            for (int i = 0; i < 40; i++) {
                put(q, "m-" + i);
            }
            Map<String, Integer> seen = drainAll(q, 200);
            expect(seen.size() == 40, seen.size() + " distinct of 40");
            expect(Collections.max(seen.values()) == 1, "some taken twice: " + seen);
        });
        check("concurrent_consumers_each_once", () -> {
            QueueName q = create("concurrent_consumers");
            int count = 60;
            for (int i = 0; i < count; i++) {
                put(q, "c-" + i);
            }
            Map<String, Integer> seen = new ConcurrentHashMap<>();
            AtomicInteger refused = new AtomicInteger();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                CassieqApi own = CassieqApi.createClient(baseUrl, credentials);
                workers.add(pool.submit(() -> {
                    while (seen.size() < count && System.nanoTime() < deadline) {
                        GetMessageResponse m = get(own, q, 60);
                        if (m == null) {
                            continue;
                        }
                        seen.merge(m.getMessage(), 1, Integer::sum);
                        if (!ack(own, q, m.getPopReceipt())) {
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : workers) {
                f.get();
            }
            pool.shutdown();
            expect(seen.size() == count, seen.size() + " distinct of " + count);
            expect(Collections.max(seen.values()) == 1, "some taken twice");
            expect(refused.get() == 0, refused.get() + " acks refused");
            expect(get(client, q, 30) == null, "a message left");
        });
        check("update_message", () -> {
            QueueName q = create("update_message");
            put(q, "foo");
            GetMessageResponse m = get(client, q, 30);
            expect(m != null, "no message");
            UpdateMessageResponse u = client.updateMessage(
                    account, q, m.getPopReceipt(), new UpdateMessageRequest("foo2", 10L)).execute().body();
            expect(u != null && u.getPopReceipt() != null, "update answered no receipt");
            expect(!ack(client, q, m.getPopReceipt()), "the receipt from before the update still acks");
            expect(ack(client, q, u.getPopReceipt()), "ack with the update's receipt refused");
            expect(client.getMessage(account, q).execute().code() == 204, "a message after the ack");
        });
        check("update_to_visible_redelivers_new_payload", () -> {
            QueueName q = create("update_visible");
            put(q, "before");
            GetMessageResponse m = get(client, q, 30);
            expect(m != null, "no message");
            UpdateMessageResponse u = client.updateMessage(
                    account, q, m.getPopReceipt(), new UpdateMessageRequest("after", 0L)).execute().body();
            expect(u != null, "update refused");
            GetMessageResponse again = get(client, q, 30);
            // The update's message is a field of its JSON body: it is stored as its value.
            expect(again != null && "after".equals(again.getMessage()), "got " + again);
            expect(ack(client, q, again.getPopReceipt()), "ack refused");
        });
        check("lease_end_redelivers", () -> {
            QueueName q = create("lease_end");
            put(q, "x");
            GetMessageResponse first = get(client, q, 1);
            expect(first != null, "no message");
            GetMessageResponse again = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (again == null && System.nanoTime() < deadline) {
                Thread.sleep(200); // waiting on the server's real clock: the lease is 1 s
                again = get(client, q, 30);
            }
            expect(again != null, "not delivered again within 15 s");
            expect(wire("x").equals(again.getMessage()), "message " + again.getMessage());
            expect(again.getDeliveryCount() >= 1, "deliveryCount " + again.getDeliveryCount());
            expect(!ack(client, q, first.getPopReceipt()), "the expired lease's receipt acked");
            expect(ack(client, q, again.getPopReceipt()), "ack refused");
        });
        check("signed_query_string_credentials", () -> {
            CassieqApi granted = CassieqApi.createClient(baseUrl, CassieqCredentials.signedQueryString(grant));
            QueueName q = QueueName.valueOf("granted");
            expect(granted.createQueue(account, new QueueCreateOptions(q)).execute().isSuccess(), "create refused");
            expect(granted.addMessage(account, q, "g").execute().isSuccess(), "put refused");
            GetMessageResponse m = get(granted, q, 30);
            expect(m != null && wire("g").equals(m.getMessage()), "got " + m);
            expect(ack(granted, q, m.getPopReceipt()), "ack refused");
        });
        check("no_credentials_unauthorized", () -> {
            CassieqApi anonymous = CassieqApi.createClient(baseUrl, request -> request);
            int code = anonymous.createQueue(account, new QueueCreateOptions(QueueName.valueOf("anon"))).execute().code();
            expect(code == 401, "answered " + code);
        });
        check("delete_queue", () -> {
            QueueName q = create("delete_queue");
            expect(client.deleteQueue(account, q).execute().isSuccess(), "delete refused");
            expect(!client.getMessage(account, q).execute().isSuccess(), "get on a deleted queue succeeded");
        });
        check("delete_on_non_existent_queue_fails", () -> expect(
                !client.deleteQueue(account, QueueName.valueOf("non_existent_queue")).execute().isSuccess(),
                "delete succeeded"));
        check("fill_spread_queue", () -> {
            create(SPREAD_QUEUE.get());
            for (int i = 0; i < SPREAD; i++) {
                put(SPREAD_QUEUE, "s-" + i);
            }
        });
    }

    void drain() {
        check("drain_spread_queue_each_once", () -> {
            Map<String, Integer> seen = drainAll(SPREAD_QUEUE, 5 * SPREAD);
            expect(seen.size() == SPREAD, seen.size() + " distinct of " + SPREAD);
            expect(Collections.max(seen.values()) == 1, "some taken twice: " + seen);
            for (int i = 0; i < SPREAD; i++) {
                expect(seen.containsKey(wire("s-" + i)), "s-" + i + " never delivered");
            }
            expect(client.deleteQueue(account, SPREAD_QUEUE).execute().isSuccess(), "delete refused");
        });
    }

    public static void main(String[] args) throws Exception {
        CompatCheck c = new CompatCheck(args[1], args[2], args[3]);
        if (args[0].equals("suite")) {
            c.suite(args[4]);
        } else {
            c.drain();
        }
        System.out.println("RESULT passed=" + c.passed + " failed=" + c.failed);
        // OkHttp's connection pool threads would keep the JVM alive for a minute.
        System.exit(c.failed == 0 ? 0 : 1);
    }
}
