#!/usr/bin/env bash
# CassieQ's Java client (io.paradoxical:cassieq-client, unchanged) against a cassieq server
# whose queues are partitioned: compat/java/CompatCheck.java drives the client's public API.
#
#   CASSIEQ_JAVA_CLIENT_CLASSPATH=<the client's jar, cassieq-model's and their dependencies>
#   PARTITIONS=4 compat/run-java-client.sh      # PARTITIONS=1 for the comparison
#
# The classpath is yours to supply (this repository carries none of CassieQ's code). The
# script starts its own server (lib.sh), runs the checks, looks at the filled queue through
# v2 (partitions, messages in more than one), drains it through the client, and prints
# "TOTAL ... passed=N failed=M"; exit 0 only when nothing failed. Bounded: the server lives
# at most SERVER_LIFETIME seconds (600) and each Java phase at most 300.
# shellcheck source=compat/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -z "${CASSIEQ_JAVA_CLIENT_CLASSPATH:-}" ]; then
    echo "set CASSIEQ_JAVA_CLIENT_CLASSPATH to CassieQ's Java client and its dependencies" >&2
    exit 2
fi
CP="$CASSIEQ_JAVA_CLIENT_CLASSPATH"

mkdir -p "$WORK/classes"
javac -nowarn -cp "$CP" -d "$WORK/classes" "$COMPAT_DIR/java/CompatCheck.java"
cp "$COMPAT_DIR/java/logback.xml" "$WORK/classes/"
RUN_CP="$WORK/classes:$CP"

start_server "$(free_port)" "$(free_port)"
make_account java
# The levels the checks need (r: get, p: put, u: update, a: ack, c/d: create/delete, g: read).
GRANT="$(make_grant r p u a c d g)"

echo "--- phase 1: the client's checks, then 40 messages put into compat.spread"
timeout 300 java -cp "$RUN_CP" CompatCheck suite "$URL/" "$ACCOUNT" "$KEY" "$GRANT" | tee "$WORK/suite.out" || true
count_results "$WORK/suite.out" java_suite "^RESULT "

echo "--- between the phases: the queue as v2 sees it"
check_partitioned compat.spread 40

echo "--- phase 2: every message of compat.spread taken through the client, each once"
timeout 300 java -cp "$RUN_CP" CompatCheck drain "$URL/" "$ACCOUNT" "$KEY" | tee "$WORK/drain.out" || true
count_results "$WORK/drain.out" java_drain "^RESULT "

finish "CassieQ Java client"
