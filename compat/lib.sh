# shellcheck shell=bash
# Shared by compat/run-java-client.sh and compat/run-ruby-gem.sh (sourced, not run).
#
# A cassieq server of its own for one check: `cassieq serve` on the Cassandra node of
# CASSIEQ_CASSANDRA_HOSTS (default 127.0.0.1) in the keyspace CASSIEQ_COMPAT_KEYSPACE
# (default cassieq_compat; the schema is applied, nothing is dropped), with
# CASSIEQ_DEFAULT_PARTITIONS=$PARTITIONS (default 4): every queue a v1 client creates there
# is a queue of that many partitions. Each run makes an account of its own (a random name)
# and deletes it at the end, and the server is stopped on exit, whatever happens.

set -euo pipefail

COMPAT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$COMPAT_DIR/.." && pwd)"
CQ="${CASSIEQ_BIN:-$ROOT/.venv/bin/cassieq}"
PY="${CASSIEQ_PYTHON:-$ROOT/.venv/bin/python}"
PARTITIONS="${PARTITIONS:-4}"
KEYSPACE="${CASSIEQ_COMPAT_KEYSPACE:-cassieq_compat}"
WORKERS="${WORKERS:-1}"
# The server is killed after this many seconds even if this script is (a bound on the run).
SERVER_LIFETIME="${SERVER_LIFETIME:-600}"

CHECKS_PASSED=0
CHECKS_FAILED=0
SERVER_PID=""
ACCOUNT=""
ADMIN_TOKEN="$(openssl rand -hex 24)"
WORK="$(mktemp -d -t cassieq-compat.XXXXXX)"

pass() { CHECKS_PASSED=$((CHECKS_PASSED + 1)); echo "PASS $1"; }
fail() { CHECKS_FAILED=$((CHECKS_FAILED + 1)); echo "FAIL $1"; }

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port_free() {
    "$PY" -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

# start_server PORT ADMIN_PORT: returns once /health answers (60 s at most).
start_server() {
    PORT="$1"
    ADMIN_PORT="$2"
    URL="http://127.0.0.1:$PORT"
    ADMIN_URL="http://127.0.0.1:$ADMIN_PORT"
    "$CQ" schema apply --keyspace "$KEYSPACE" >"$WORK/schema.log" 2>&1 || {
        cat "$WORK/schema.log"
        echo "schema apply failed (is Cassandra running?)"
        exit 2
    }
    CASSIEQ_KEYSPACE="$KEYSPACE" CASSIEQ_DEFAULT_PARTITIONS="$PARTITIONS" \
        CASSIEQ_ADMIN_TOKEN="$ADMIN_TOKEN" CASSIEQ_LOG_LEVEL=warning \
        timeout "$SERVER_LIFETIME" "$CQ" serve --workers "$WORKERS" --port "$PORT" \
        --admin-port "$ADMIN_PORT" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 120); do
        if curl -fs -o /dev/null "$URL/health"; then
            echo "server: $URL (admin $ADMIN_URL), keyspace $KEYSPACE," \
                "CASSIEQ_DEFAULT_PARTITIONS=$PARTITIONS, workers $WORKERS"
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            break
        fi
        sleep 0.5
    done
    cat "$WORK/server.log"
    echo "the server did not start"
    exit 2
}

cleanup() {
    if [ -n "$ACCOUNT" ] && [ -n "$SERVER_PID" ]; then
        curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $ADMIN_TOKEN" \
            "$ADMIN_URL/admin/api/v1/accounts/$ACCOUNT" || true
    fi
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
# A signal ends the script through exit, so that the EXIT trap stops the server.
trap 'exit 130' INT
trap 'exit 143' TERM

admin_post() {
    curl -fsS -X POST -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
        "$ADMIN_URL/admin/api/v1/$1" -d "$2"
}

# make_account PREFIX: sets ACCOUNT and KEY (CassieQ's admin route, as the gem's rake task).
make_account() {
    ACCOUNT="$1-$(openssl rand -hex 4)"
    KEY="$(admin_post accounts "\"$ACCOUNT\"" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["keys"]["primary"])')"
}

# make_grant LEVEL...: prints a signed query string of the account's primary key.
make_grant() {
    local levels
    levels="$("$PY" -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@")"
    admin_post permissions "{\"accountName\": \"$ACCOUNT\", \"keyName\": \"primary\", \"levels\": $levels}" |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["queryParam"])'
}

# check_partitioned QUEUE MIN_MESSAGES: the queue a client made has $PARTITIONS partitions
# (v2 queue definition) and its messages lie in more than one of them when it has more
# than one (v2 peek: a message id of partition p > 0 reads "p-n").
check_partitioned() {
    local queue="$1" want="$2" shown peeked
    shown="$(CASSIEQ_URL="$URL" CASSIEQ_ACCOUNT="$ACCOUNT" CASSIEQ_KEY="$KEY" "$CQ" queue show "$queue" --json)"
    peeked="$(CASSIEQ_URL="$URL" CASSIEQ_ACCOUNT="$ACCOUNT" CASSIEQ_KEY="$KEY" "$CQ" peek "$queue" --limit 100 --json)"
    if "$PY" - "$shown" "$peeked" "$PARTITIONS" "$want" <<'EOF'; then
import collections, json, sys
shown, peeked, partitions, want = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ids = [m["id"] for m in peeked["messages"]]
per = collections.Counter(int(i.split("-")[0]) if "-" in i else 0 for i in ids)
print(f"  v2 says {shown['queueName']}: partitions={shown['partitions']}; "
      f"{len(ids)} messages by partition: {dict(sorted(per.items()))}")
ok = shown["partitions"] == partitions and len(ids) >= want
ok = ok and (partitions == 1 or len(per) > 1)
sys.exit(0 if ok else 1)
EOF
        pass "queue_${queue}_has_${PARTITIONS}_partitions_and_messages_spread"
    else
        fail "queue_${queue}_has_${PARTITIONS}_partitions_and_messages_spread"
    fi
}

# count_results FILE NAME LAST_LINE_PATTERN: adds the PASS/FAIL lines of a client's output to the totals; a
# run that stopped before its last line (a crash, the timeout) is one more failure.
count_results() {
    local p f
    p="$(grep -c '^PASS ' "$1" || true)"
    f="$(grep -c '^FAIL ' "$1" || true)"
    CHECKS_PASSED=$((CHECKS_PASSED + p))
    CHECKS_FAILED=$((CHECKS_FAILED + f))
    if ! grep -q "$3" "$1"; then
        fail "$2_ran_to_its_end"
    fi
}

finish() {
    echo "TOTAL $1 on $PARTITIONS-partition queues: passed=$CHECKS_PASSED failed=$CHECKS_FAILED"
    [ "$CHECKS_FAILED" -eq 0 ] && [ "$CHECKS_PASSED" -gt 0 ]
}
