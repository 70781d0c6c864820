"""Every CQL statement of the store (the only CQL text outside schema/)."""

from __future__ import annotations

import re
from typing import Any

from cassandra.cluster import Session

from cassieq.store.cassandra.session import check_keyspace

_TABLE_RE = re.compile(r"\b(FROM|INTO|UPDATE)\s+(\w+)")

MESSAGE_COLUMNS = (
    "monoton, message, version, delivery_count, acked, dead_lettered, republished_to, "
    "next_visible_on, tag, created_at, updated_at, acked_at, last_change, dlq_held, "
    "dlq_version, dlq_monoton, first_delivered_at, expired, purged, redrive_to, attributes, "
    "dead_letter_source, attribute_types, group_id, republished_from"
)
# A message's changing state (rows.message_set_values): every column but the key, the
# attributes (and their types) and the dead-letter source, which are written with the
# message, never changed.
MESSAGE_SET = (
    "UPDATE messages SET message = ?, version = ?, delivery_count = ?, acked = ?, "
    "dead_lettered = ?, republished_to = ?, next_visible_on = ?, tag = ?, created_at = ?, "
    "updated_at = ?, acked_at = ?, last_change = ?, dlq_held = ?, dlq_version = ?, "
    "dlq_monoton = ?, first_delivered_at = ?, expired = ?, purged = ?, redrive_to = ? "
    "WHERE queue_id = ? AND bucket = ? AND monoton = ? IF version = ?"
)
# With ``keep_body`` (store.cas_messages) a row writes only the state its kind of change
# can alter: a take (unacked rows) or a retirement (acked rows). Fewer cells for Cassandra
# to store in the Paxos proposal, its commit and the table, and fewer values to send.
MESSAGE_TAKE = (
    "UPDATE messages SET version = ?, delivery_count = ?, next_visible_on = ?, "
    "updated_at = ?, last_change = ?, first_delivered_at = ? "
    "WHERE queue_id = ? AND bucket = ? AND monoton = ? IF version = ?"
)
MESSAGE_RETIRE = (
    "UPDATE messages SET version = ?, acked = true, dead_lettered = ?, expired = ?, "
    "purged = ?, acked_at = ?, updated_at = ?, last_change = ? "
    "WHERE queue_id = ? AND bucket = ? AND monoton = ? IF version = ?"
)
# A new message that has only a body, attributes and a first state (rows.insert_values): the
# columns the full insert would leave unset for it are not sent at all.
NEW_MESSAGE_COLUMNS = (
    "monoton, message, version, delivery_count, acked, dead_lettered, next_visible_on, tag, "
    "created_at, updated_at, last_change, attributes, attribute_types, group_id"
)
QUEUE_COLUMNS = (
    "account_name, queue_name, version, status, bucket_size, max_delivery_count, "
    "repair_poll_seconds, finalize_seconds, delete_buckets_after_finalize, dlq_name, "
    "strict_fifo, created_at, visibility_timeout_seconds, delay_seconds, "
    "message_retention_seconds, max_message_bytes, options_rev, tags, redrive_allow_policy, "
    "receive_wait_seconds, modified_at, sqs_attributes, partitions"
)


def _marks(columns: str) -> str:
    """One bind marker per column of a comma-separated list."""
    return ", ".join("?" for _ in columns.split(","))


class Statements:
    """Every CQL statement of the store, prepared once."""

    def __init__(self, s: Session, keyspace: str) -> None:
        check_keyspace(keyspace)

        def p(cql: str) -> Any:
            # Fully qualified tables: a session-wide keyspace with prepared statements is
            # ambiguous (Cassandra warns about it on every prepare).
            return s.prepare(_TABLE_RE.sub(rf"\1 {keyspace}.\2", cql))

        self.account_insert = p(
            "INSERT INTO accounts (account_name, keys, created_at) VALUES (?, ?, ?) IF NOT EXISTS"
        )
        self.account_read = p(
            "SELECT account_name, keys, created_at FROM accounts WHERE account_name = ?"
        )
        self.account_list = p("SELECT account_name, keys, created_at FROM accounts")
        # Conditional: exactly the incarnation whose queues were deleted, and ordered with
        # the LWT that re-creates the name (a plain delete's client timestamp could shadow it).
        self.account_delete = p("DELETE FROM accounts WHERE account_name = ? IF created_at = ?")
        self.account_deletion_mark = p(
            "INSERT INTO account_deletions (account_name, account_created_at, started_at) "
            "VALUES (?, ?, ?)"
        )
        self.account_deletion_read = p(
            "SELECT account_created_at, started_at FROM account_deletions WHERE account_name = ?"
        )
        self.account_deletion_unmark = p("DELETE FROM account_deletions WHERE account_name = ?")
        self.key_add = p(
            "UPDATE accounts SET keys[?] = ? WHERE account_name = ? "
            "IF created_at != null AND keys[?] = null"
        )
        self.key_remove = p("DELETE keys[?] FROM accounts WHERE account_name = ?")
        self.key_replace = p(
            "UPDATE accounts SET keys[?] = ? WHERE account_name = ? IF keys[?] = ?"
        )

        secret_columns = "name, value, version, previous, previous_until, created_at"  # noqa: S105
        self.secret_read = p(f"SELECT {secret_columns} FROM secrets WHERE name = ?")
        self.secret_insert = p(
            f"INSERT INTO secrets ({secret_columns}) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"
        )
        self.secret_replace = p(
            "UPDATE secrets SET value = ?, version = ?, previous = ?, previous_until = ? "
            "WHERE name = ? IF version = ?"
        )

        self.queue_insert = p(
            f"INSERT INTO queues ({QUEUE_COLUMNS}) VALUES ({_marks(QUEUE_COLUMNS)}) IF NOT EXISTS"
        )
        queue_set = (
            "UPDATE queues SET version = ?, status = ?, bucket_size = ?, max_delivery_count = ?, "
            "repair_poll_seconds = ?, finalize_seconds = ?, delete_buckets_after_finalize = ?, "
            "dlq_name = ?, strict_fifo = ?, created_at = ?, visibility_timeout_seconds = ?, "
            "delay_seconds = ?, message_retention_seconds = ?, max_message_bytes = ?, "
            "options_rev = ?, tags = ?, redrive_allow_policy = ?, receive_wait_seconds = ?, "
            "modified_at = ?, sqs_attributes = ?, partitions = ? "
            "WHERE account_name = ? AND queue_name = ? IF version = ?"
        )
        self.queue_replace = p(queue_set)
        # An update of the options: also conditioned on the options' revision (null: 0).
        self.queue_replace_rev = p(queue_set + " AND options_rev = ?")
        self.queue_replace_rev_first = p(queue_set + " AND options_rev = null")
        self.queue_read = p(
            f"SELECT {QUEUE_COLUMNS} FROM queues WHERE account_name = ? AND queue_name = ?"
        )
        self.queue_list = p(f"SELECT {QUEUE_COLUMNS} FROM queues WHERE account_name = ?")
        self.queue_page_first = p(
            f"SELECT {QUEUE_COLUMNS} FROM queues WHERE account_name = ? LIMIT ?"
        )
        self.queue_page_after = p(
            f"SELECT {QUEUE_COLUMNS} FROM queues WHERE account_name = ? AND queue_name > ? LIMIT ?"
        )

        self.monoton_read = p("SELECT value, last_change FROM monotons WHERE queue_id = ?")
        self.monoton_cas = p(
            "UPDATE monotons SET value = ?, last_change = ? WHERE queue_id = ? IF value = ?"
        )
        self.monoton_cas_first = p(
            "UPDATE monotons SET value = ?, last_change = ? WHERE queue_id = ? IF value = null"
        )
        self.monoton_delete = p("DELETE FROM monotons WHERE queue_id = ?")

        self.bucket_read = p(
            f"SELECT {MESSAGE_COLUMNS}, sealed_at, finalized_at FROM messages "
            "WHERE queue_id = ? AND bucket = ?"
        )
        self.bucket_markers = p(
            "SELECT sealed_at, finalized_at FROM messages WHERE queue_id = ? AND bucket = ? LIMIT 1"
        )
        self.message_read = p(
            f"SELECT {MESSAGE_COLUMNS} FROM messages "
            "WHERE queue_id = ? AND bucket = ? AND monoton = ?"
        )
        # The read back of a take: the row and its bucket's seal marker (static) at once.
        self.message_read_sealed = p(
            f"SELECT {MESSAGE_COLUMNS}, sealed_at FROM messages "
            "WHERE queue_id = ? AND bucket = ? AND monoton = ?"
        )
        self.bucket_guard = p(
            "UPDATE messages SET last_write_at = ? WHERE queue_id = ? AND bucket = ? "
            "IF finalized_at = null"
        )
        self.message_insert = p(
            f"INSERT INTO messages (queue_id, bucket, {MESSAGE_COLUMNS}) "
            f"VALUES (?, ?, {_marks(MESSAGE_COLUMNS)}) IF NOT EXISTS"
        )
        self.message_insert_new = p(
            f"INSERT INTO messages (queue_id, bucket, {NEW_MESSAGE_COLUMNS}) "
            f"VALUES (?, ?, {_marks(NEW_MESSAGE_COLUMNS)}) IF NOT EXISTS"
        )
        # The reader's takes (and its retirements of expired rows): only from a bucket it
        # has not left (the static seal marker).
        unsealed = " AND sealed_at = null"
        self.message_cas = p(MESSAGE_SET)
        self.message_cas_unsealed = p(MESSAGE_SET + unsealed)
        self.message_take = p(MESSAGE_TAKE)
        self.message_take_unsealed = p(MESSAGE_TAKE + unsealed)
        self.message_retire = p(MESSAGE_RETIRE)
        self.message_retire_unsealed = p(MESSAGE_RETIRE + unsealed)
        # An ack changes only what it must: no read of the row first.
        self.message_ack = p(
            "UPDATE messages SET version = ?, acked = true, acked_at = ?, updated_at = ?, "
            "last_change = ? WHERE queue_id = ? AND bucket = ? AND monoton = ? "
            "IF version = ? AND tag = ?"
        )
        self.bucket_seal = p(
            "UPDATE messages SET sealed_at = ? WHERE queue_id = ? AND bucket = ? "
            "IF sealed_at = null"
        )
        self.bucket_finalize = p(
            "UPDATE messages SET finalized_at = ? WHERE queue_id = ? AND bucket = ? "
            "IF finalized_at = null"
        )
        self.bucket_delete_rows = p(
            "DELETE FROM messages WHERE queue_id = ? AND bucket = ? AND monoton >= 0"
        )
        self.bucket_markers_ttl = p(
            "UPDATE messages USING TTL ? SET sealed_at = ?, finalized_at = ? "
            "WHERE queue_id = ? AND bucket = ?"
        )
        self.bucket_drop = p("DELETE FROM messages WHERE queue_id = ? AND bucket = ?")

        self.pointer_read = p("SELECT value FROM pointers WHERE queue_id = ? AND kind = ?")
        self.pointer_cas = p(
            "UPDATE pointers SET value = ? WHERE queue_id = ? AND kind = ? IF value = ?"
        )
        self.pointer_cas_first = p(
            "UPDATE pointers SET value = ? WHERE queue_id = ? AND kind = ? IF value = null"
        )
        self.pointer_delete = p("DELETE FROM pointers WHERE queue_id = ? AND kind = ?")

        invisibility_set = (
            "UPDATE invisibility SET rev = ?, bucket = ?, stragglers = ?, published = ?, "
            "acked = ?, dead_lettered = ?, delivered = ?, expired = ?, purged = ?, last_change = ? "
            "WHERE queue_id = ? "
        )
        self.invisibility_read = p(
            "SELECT rev, bucket, stragglers, published, acked, dead_lettered, delivered, "
            "expired, purged, last_change FROM invisibility WHERE queue_id = ?"
        )
        self.invisibility_cas = p(invisibility_set + "IF rev = ?")
        self.invisibility_cas_first = p(invisibility_set + "IF rev = null")
        self.invisibility_delete = p("DELETE FROM invisibility WHERE queue_id = ?")

        self.lease_read = p("SELECT owner, expires_at FROM leases WHERE name = ?")
        self.lease_insert = p(
            "INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?) "
            "IF NOT EXISTS USING TTL ?"
        )
        self.lease_take = p(
            "UPDATE leases USING TTL ? SET owner = ?, expires_at = ? WHERE name = ? "
            "IF owner = ? AND expires_at = ?"
        )

        # The old table (schema 0002), only drained now: a page at a time, never whole.
        self.job_insert = p(
            "INSERT INTO deletion_jobs (shard, queue_id, account_name, queue_name, version, "
            "bucket_size, created_at) VALUES (0, ?, ?, ?, ?, ?, ?)"
        )
        job_columns = "account_name, queue_name, version, bucket_size, created_at"
        self.job_page_first = p(f"SELECT {job_columns} FROM deletion_jobs WHERE shard = 0 LIMIT ?")
        self.job_page_after = p(
            f"SELECT {job_columns} FROM deletion_jobs WHERE shard = 0 AND queue_id > ? LIMIT ?"
        )
        self.job_delete = p("DELETE FROM deletion_jobs WHERE shard = 0 AND queue_id = ?")

        stats_columns = (
            "version, computed_at, published, acked, dead_lettered, in_flight, backlog, "
            "delivered, delivery_count_histogram, oldest_unacked_age_s, ack_latency_p50_ms, "
            "ack_latency_p95_ms, ack_latency_p99_ms, rows_scanned"
        )
        self.stats_write = p(
            f"UPDATE queue_stats SET {', '.join(c + ' = ?' for c in stats_columns.split(', '))} "
            "WHERE account_name = ? AND queue_name = ?"
        )
        self.stats_delete = p("DELETE FROM queue_stats WHERE account_name = ? AND queue_name = ?")
        self.stats_read = p(
            f"SELECT {stats_columns} FROM queue_stats WHERE account_name = ? AND queue_name = ?"
        )

        # ------------------------------------------------------- v2 batches (issue 15)
        # The read back of a conditional batch on one bucket: its rows (IN on the
        # clustering key, so one partition, as a SERIAL read must be) and the seal marker.
        self.messages_read_sealed = p(
            f"SELECT {MESSAGE_COLUMNS}, sealed_at FROM messages "
            "WHERE queue_id = ? AND bucket = ? AND monoton IN ?"
        )

        # ------------------------------------------------------- redrive (schema 0008)
        task_columns = (
            "task_id, status, moved, total, failed, target, updated_at, started_at, max_per_second"
        )
        # cancel_requested is left out of the write: a progress write never clears a cancel.
        self.redrive_task_write = p(
            f"INSERT INTO redrive_tasks (queue_id, {task_columns}) "
            f"VALUES (?, {_marks(task_columns)})"
        )
        self.redrive_task_read = p(
            f"SELECT {task_columns}, cancel_requested FROM redrive_tasks "
            "WHERE queue_id = ? AND task_id = ?"
        )
        self.redrive_task_list = p(
            f"SELECT {task_columns}, cancel_requested FROM redrive_tasks WHERE queue_id = ?"
        )
        self.redrive_task_cancel = p(
            "UPDATE redrive_tasks SET cancel_requested = true WHERE queue_id = ? AND task_id = ?"
        )

        # ------------------------------------------------------- FIFO (schema 0013)
        self.group_message_add = p(
            "INSERT INTO fifo_group_messages (queue_id, group_id, monoton, created_at) "
            "VALUES (?, ?, ?, ?) USING TTL ?"
        )
        self.group_messages_read = p(
            "SELECT monoton FROM fifo_group_messages WHERE queue_id = ? AND group_id = ? LIMIT ?"
        )
        self.group_messages_remove = p(
            "DELETE FROM fifo_group_messages WHERE queue_id = ? AND group_id = ? AND monoton IN ?"
        )
        self.group_touch = p(  # schema 0016
            "INSERT INTO fifo_groups (queue_id, group_id, updated_at) VALUES (?, ?, ?) USING TTL ?"
        )
        self.groups_list = p(
            "SELECT group_id FROM fifo_groups WHERE queue_id = ? AND group_id > ? LIMIT ?"
        )
        dedup_columns = "monoton, partition, tag, created_at, written, message"
        self.dedup_read = p(
            f"SELECT {dedup_columns} FROM fifo_dedup WHERE queue_id = ? AND dedup_key = ?"
        )
        self.dedup_claim = p(
            f"INSERT INTO fifo_dedup (queue_id, dedup_key, {dedup_columns}) "
            f"VALUES (?, ?, {_marks(dedup_columns)}) IF NOT EXISTS USING TTL ?"
        )
        self.dedup_replace = p(
            "UPDATE fifo_dedup USING TTL ? SET monoton = ?, partition = ?, tag = ?, "
            "created_at = ?, written = ?, message = ? "
            "WHERE queue_id = ? AND dedup_key = ? IF tag = ?"
        )
        self.dedup_mark_written = p(
            "UPDATE fifo_dedup USING TTL ? SET written = true WHERE queue_id = ? AND dedup_key = ?"
        )
        # ------------------------------------- FIFO, deduplication by group (schema 0017)
        self.group_dedup_read = p(
            f"SELECT dedup_key, {dedup_columns} FROM fifo_group_dedup "
            "WHERE queue_id = ? AND group_id = ? AND dedup_key IN ?"
        )
        self.group_dedup_claim = p(
            f"INSERT INTO fifo_group_dedup (queue_id, group_id, dedup_key, {dedup_columns}) "
            f"VALUES (?, ?, ?, {_marks(dedup_columns)}) IF NOT EXISTS USING TTL ?"
        )
        self.group_dedup_replace = p(
            "UPDATE fifo_group_dedup USING TTL ? SET monoton = ?, partition = ?, tag = ?, "
            "created_at = ?, written = ?, message = ? "
            "WHERE queue_id = ? AND group_id = ? AND dedup_key = ? IF tag = ?"
        )
        self.group_dedup_mark_written = p(
            "UPDATE fifo_group_dedup USING TTL ? SET written = true "
            "WHERE queue_id = ? AND group_id = ? AND dedup_key IN ?"
        )
        self.receive_attempt_write = p(
            "INSERT INTO receive_attempts (queue_id, attempt_id, created_at, answer) "
            "VALUES (?, ?, ?, ?) USING TTL ?"
        )
        self.receive_attempt_read = p(
            "SELECT created_at, answer FROM receive_attempts WHERE queue_id = ? AND attempt_id = ?"
        )

        # ---------------------------------------------- subscriptions (schema 0014)
        sub_columns = "mode, start, created_at, position, revision, last_change, generation, done"
        self.subscription_insert = p(
            f"INSERT INTO subscriptions (queue_id, name, {sub_columns}) "
            f"VALUES (?, ?, {_marks(sub_columns)}) IF NOT EXISTS"
        )
        self.subscription_read = p(
            f"SELECT name, {sub_columns} FROM subscriptions WHERE queue_id = ? AND name = ?"
        )
        self.subscriptions_read = p(
            f"SELECT name, {sub_columns} FROM subscriptions WHERE queue_id = ?"
        )
        self.subscription_position_cas = p(
            "UPDATE subscriptions SET position = ?, revision = ?, last_change = ? "
            "WHERE queue_id = ? AND name = ? IF revision = ?"
        )
        self.subscription_cas = p(
            "UPDATE subscriptions SET position = ?, done = ?, generation = ?, revision = ?, "
            "last_change = ? WHERE queue_id = ? AND name = ? IF revision = ?"
        )
        # ---------------------------------------------- shared subscriptions (schema 0015)
        delivery_state = (
            "version, delivery_count, next_visible_on, finished, tag, updated_at, "
            "first_delivered_at, last_change"
        )
        delivery_key = "queue_id = ? AND name = ? AND bucket = ? AND generation = ?"
        self.deliveries_read = p(
            f"SELECT monoton, {delivery_state} FROM subscription_deliveries WHERE {delivery_key}"
        )
        self.deliveries_read_some = p(
            f"SELECT monoton, {delivery_state} FROM subscription_deliveries "
            f"WHERE {delivery_key} AND monoton IN ?"
        )
        self.delivery_insert = p(
            "INSERT INTO subscription_deliveries (queue_id, name, bucket, generation, monoton, "
            f"{delivery_state}) VALUES (?, ?, ?, ?, ?, {_marks(delivery_state)}) IF NOT EXISTS"
        )
        self.delivery_cas = p(
            "UPDATE subscription_deliveries SET version = ?, delivery_count = ?, "
            "next_visible_on = ?, finished = ?, updated_at = ?, first_delivered_at = ?, "
            f"last_change = ? WHERE {delivery_key} AND monoton = ? IF version = ? AND tag = ?"
        )
        self.delivery_change = p(
            "UPDATE subscription_deliveries SET version = ?, next_visible_on = ?, finished = ?, "
            f"updated_at = ?, last_change = ? WHERE {delivery_key} AND monoton = ? "
            "IF version = ? AND tag = ?"
        )
        self.deliveries_delete = p(
            "DELETE FROM subscription_deliveries WHERE queue_id = ? AND name = ? AND bucket = ?"
        )
        self.subscription_delete = p("DELETE FROM subscriptions WHERE queue_id = ? AND name = ?")
        self.subscriptions_delete = p("DELETE FROM subscriptions WHERE queue_id = ?")
