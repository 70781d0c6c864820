#!/usr/bin/env bash
# A real Prometheus scraping `cassieq dev --cassandra`: puts and receives a few messages,
# lets Prometheus scrape /metrics (Bearer operator token, as a production scrape config
# would), then asks Prometheus's HTTP API for the queue depth and the LWT series and
# prints its answers.
#
#   make prometheus-check            (installs Debian's `prometheus` package if missing)
#   scripts/prometheus_check.sh      (needs `prometheus` on PATH, or PROMETHEUS=/path/to/it)
#
# The local Cassandra node is used (started by `cassieq dev --cassandra` if it is not
# running); CASSIEQ_KEYSPACE picks the keyspace (default: cassieq_prometheus_check).
set -euo pipefail

PYTHON=${PYTHON:-python3}
CASSIEQ=(${CASSIEQ:-"$PYTHON" -m cassieq})
PROMETHEUS=${PROMETHEUS:-prometheus}
KEYSPACE=${CASSIEQ_KEYSPACE:-cassieq_prometheus_check}
command -v "$PROMETHEUS" >/dev/null || {
    echo "prometheus not found: apt-get install prometheus (or set PROMETHEUS)" >&2
    exit 2
}

free_port() { "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port); ADMIN_PORT=$(free_port); PROM_PORT=$(free_port)
TOKEN=$("$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(32))')
WORK=$(mktemp -d)
QUEUE="orders-$$"  # allow-listed: shown whatever the other queues' depths
CASSIEQ_PID="" PROM_PID=""
cleanup() {
    # Only the two processes this script started, by their ids.
    [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null || true
    [ -n "$CASSIEQ_PID" ] && kill "$CASSIEQ_PID" 2>/dev/null && wait "$CASSIEQ_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

wait_for() {  # wait_for URL SECONDS: until the URL answers at all (any status)
    local deadline=$((SECONDS + $2))
    until curl -s -o /dev/null "$1"; do
        [ $SECONDS -lt $deadline ] || { echo "no answer from $1" >&2; return 1; }
        sleep 0.2
    done
}

env -u CASSIEQ_ADMIN_TOKEN CASSIEQ_KEYSPACE="$KEYSPACE" CASSIEQ_LOG_LEVEL=warning \
    CASSIEQ_METRICS_QUEUES="dev/$QUEUE" \
    "${CASSIEQ[@]}" dev --cassandra --port "$PORT" --admin-port "$ADMIN_PORT" \
    --admin-token "$TOKEN" >"$WORK/dev.log" 2>&1 &
CASSIEQ_PID=$!
wait_for "http://127.0.0.1:$PORT/health" 180 || { cat "$WORK/dev.log" >&2; exit 1; }
KEY=$(sed -n 's/^key primary: //p' "$WORK/dev.log")
API="http://127.0.0.1:$PORT/api/v2/accounts/dev"

# A queue of its own (the keyspace may be reused) with 5 messages put and 2 received
# (in flight): depth 3.
curl -sf -X PUT -H "Authorization: Key $KEY" -H 'Content-Type: application/json' \
    -d '{}' "$API/queues/$QUEUE" >/dev/null
curl -sf -X POST -H "Authorization: Key $KEY" -H 'Content-Type: application/json' \
    -d '{"messages": [{"body": "1"}, {"body": "2"}, {"body": "3"}, {"body": "4"}, {"body": "5"}]}' \
    "$API/queues/$QUEUE/messages" >/dev/null
curl -sf -X POST -H "Authorization: Key $KEY" -H 'Content-Type: application/json' \
    -d '{"maxMessages": 2, "visibilityTimeoutSeconds": 600}' \
    "$API/queues/$QUEUE/messages/receive" >/dev/null

cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: cassieq
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: $TOKEN
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
EOF
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
wait_for "http://127.0.0.1:$PROM_PORT/-/ready" 60 || { cat "$WORK/prometheus.log" >&2; exit 1; }

cat >"$WORK/show.py" <<'PY'
import json
import sys

for r in json.load(sys.stdin)["data"]["result"]:
    labels = ",".join(f'{k}="{v}"' for k, v in sorted(r["metric"].items()))
    print(f"  {{{labels}}} {r['value'][1]}")
PY
cat >"$WORK/count.py" <<'PY'
import json
import sys

print(len(json.load(sys.stdin)["data"]["result"]))
PY
cat >"$WORK/targets.py" <<'PY'
import json
import sys

for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(f"  {t['scrapeUrl']}: {t['health']} {t['lastError']}")
PY

query() {  # query PROMQL: until Prometheus has a sample for it (bounded), then print it
    local deadline=$((SECONDS + 60)) answer
    while :; do
        answer=$(curl -s -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1")
        if [ "$(echo "$answer" | "$PYTHON" "$WORK/count.py")" != 0 ]; then
            echo "\$ curl -G http://127.0.0.1:$PROM_PORT/api/v1/query --data-urlencode 'query=$1'"
            echo "$answer" | "$PYTHON" "$WORK/show.py"
            return 0
        fi
        [ $SECONDS -lt $deadline ] || { echo "no sample for $1" >&2; echo "$answer" >&2; return 1; }
        sleep 0.5
    done
}

echo "prometheus: $("$PROMETHEUS" --version 2>&1 | head -1)"
query "cassieq_queue_depth{account=\"dev\",queue=\"$QUEUE\"}"
query "cassieq_queue_in_flight{account=\"dev\",queue=\"$QUEUE\"}"
query 'sum by (primitive, outcome) (cassieq_lwt_total)'
query 'sum by (route, status) (cassieq_http_request_duration_seconds_count)'
query 'cassieq_queues'
query 'cassieq_background_last_success_age_seconds'
echo "scrape targets:"
curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets" | "$PYTHON" "$WORK/targets.py"
