"""One typed settings object, filled from ``CASSIEQ_*`` environment variables and flags.

Every field is documented in the README's configuration table; keep the two in step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

LogFormat = Literal["console", "json"]
LogLevel = Literal["critical", "error", "warning", "info", "debug"]


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    cassandra_hosts: tuple[str, ...] = ("127.0.0.1",)
    cassandra_port: int = 9042
    keyspace: str = "cassieq"
    replication: str = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    consistency: str = "LOCAL_QUORUM"
    serial_consistency: str = "LOCAL_SERIAL"
    host: str = "127.0.0.1"
    port: int = 8080
    # A second listener for the operator routes (CassieQ's admin port), when set.
    admin_port: int | None = None
    # `cassieq serve`: server processes on the port(s), each a full server (unset: the
    # machine's cores; 1: one process, no supervisor). `cassieq dev` serves with one.
    workers: Annotated[int, msgspec.Meta(ge=1, le=1024)] | None = None
    admin_token: str | None = None
    # Signs pop receipts; unset: the keyspace's own random secret (`secrets` table).
    receipt_secret: str | None = None
    # The receipt secret before the current one (rotation by environment): still accepted
    # for receipt_secret_grace_seconds after the server starts.
    receipt_secret_previous: str | None = None
    # How long a replaced receipt secret still verifies (rotation by env or by
    # `cassieq secrets rotate-receipt`).
    receipt_secret_grace_seconds: int = 86_400
    # 32 bytes, base64url: encrypts account keys at rest; unset: the keyspace's own key.
    key_encryption_key: str | None = None
    # Earlier key-encryption keys, comma-separated: keys sealed under one of them still open
    # and are re-sealed under key_encryption_key (rotation; `cassieq secrets reseal-keys`).
    key_encryption_key_previous: str | None = None
    # How far a signed request's time (v1 x-cassieq-request-time, v2 x-cassieq-date) may be.
    clock_skew_seconds: int = 60
    # v2 signatures one server remembers within the skew (replay cache); beyond, 503.
    # About 200 bytes each: the default holds 3,300 signed requests/s at a 60 s skew in ~40 MB.
    replay_cache_max_entries: Annotated[int, msgspec.Meta(ge=1)] = 200_000
    # Of those, how many one account may hold: one account signing as fast as it can gets
    # the 503s, not the others.
    replay_cache_max_entries_per_account: Annotated[int, msgspec.Meta(ge=1)] = 50_000
    # How far ahead of the server's clock a v2 x-cassieq-date may be (within the skew).
    clock_ahead_seconds: Annotated[int, msgspec.Meta(ge=0)] = 5
    # The region of the SQS endpoint: a SigV4 signature scoped to another is refused (as AWS
    # refuses one made for another region), and ARNs name it.
    sqs_region: Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9-]{1,64}$")] = "us-east-1"
    # Active queues one account may have; a create beyond it answers 409.
    max_queues_per_account: int = 1_000
    # The partitions of a queue created without saying (v1, SQS, a v2 PUT without
    # `partitions`): each is its own monoton, buckets and pointers (issue 35). Changing it
    # changes no existing queue.
    default_partitions: Annotated[int, msgspec.Meta(ge=1, le=256)] = 1
    # Long polling: how often a queue with waiting v2 receives on this server is checked
    # for puts of other servers (one store read); every second check is a receive instead,
    # which finds messages visible again (ended leases and delays).
    long_poll_check_ms: Annotated[int, msgspec.Meta(ge=100, le=60_000)] = 1_000
    # Receives (v2, SQS) waiting at once on one server, and of those how many one account
    # may hold: beyond either a receive answers at once (messages or []), never waits, so
    # long polls cannot take every request slot, nor one tenant all the long-poll slots.
    long_poll_max_waiting: Annotated[int, msgspec.Meta(ge=1)] = 800
    long_poll_max_waiting_per_account: Annotated[int, msgspec.Meta(ge=1)] = 200
    # Per-account request budget (a token bucket, per server): requests per second and the
    # burst above it. Beyond, 429 with Retry-After (SQS: ThrottlingException). The defaults
    # stay above what one server serves on small hardware; set them from measured capacity.
    account_requests_per_second: Annotated[float, msgspec.Meta(gt=0)] = 5_000.0
    account_request_burst: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    # A 429 is held this long before it is sent, for up to the second number of one
    # account's requests at a time: a client that ignores Retry-After then costs the server
    # a few answers a second, not its event loop (0: answered at once).
    account_throttle_hold_seconds: Annotated[float, msgspec.Meta(ge=0, le=10)] = 1.0
    account_throttle_hold_per_account: Annotated[int, msgspec.Meta(ge=0)] = 32
    # Overload-aware fair share (cassieq.api.overload): while requests wait longer than the
    # threshold (the event loop's lag, or the quickest requests' time over its recent
    # minimum) and more than one account is active, an account over its share of the recent
    # requests is throttled like an account over its budget; a lone account never is.
    account_fair_share: bool = True
    account_fair_share_delay_ms: Annotated[float, msgspec.Meta(gt=0, le=10_000)] = 2.0
    # Per-account quotas (0: none, the default): messages stored over all the account's
    # queues (visible, in flight, delayed), and of those in flight. Beyond, puts (receives)
    # are refused 403 (SQS: OverLimit). Checked against figures every server refreshes each
    # account_quota_refresh_seconds (the /metrics sample): approximate, see the security page.
    account_max_stored_messages: Annotated[int, msgspec.Meta(ge=0)] = 0
    account_max_in_flight_messages: Annotated[int, msgspec.Meta(ge=0)] = 0
    account_quota_refresh_seconds: Annotated[float, msgspec.Meta(gt=0)] = 10.0
    # Fair admission (cassieq.api.admission): authenticated requests handled at once; beyond,
    # a request waits for a place and places go to the accounts waiting in turns (0: off).
    # A request gives its place back when it ends or after the second setting (a long
    # poll's wait holds none).
    http_fair_admission_slots: Annotated[int, msgspec.Meta(ge=0)] = 0
    http_fair_admission_hold_seconds: Annotated[float, msgspec.Meta(gt=0, le=60)] = 0.5
    log_format: LogFormat = "console"
    log_level: LogLevel = "info"
    # One structlog event per HTTP request (method, path without its query string, route,
    # status, duration). Off by default: a line per request is a lot at queue rates.
    access_log: bool = False

    # --- Operations: /metrics and /ready (cassieq/api/metrics/, cassieq/api/ready.py) ---
    # Per-queue series for the N deepest queues (visible messages), plus the allow-listed
    # ones ("account/queue", comma-separated): bounded cardinality however many queues.
    metrics_top_queues: Annotated[int, msgspec.Meta(ge=0)] = 50
    metrics_queues: tuple[str, ...] = ()
    # How long a scrape's per-queue statistics are reused (every queue is read per refresh).
    metrics_cache_seconds: Annotated[float, msgspec.Meta(ge=0)] = 10.0
    # How long a scrape waits for that refresh before answering the previous figures (the
    # refresh goes on): below Prometheus's scrape timeout (10 s by default).
    metrics_scrape_wait_seconds: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    # /ready fails when the background loop's last completed pass is older than this.
    ready_background_max_age_seconds: Annotated[float, msgspec.Meta(gt=0)] = 60.0

    # --- HTTP server limits and CORS (cassieq/api/http/server.py, protocol.py, cors.py) ---
    # Browser origins allowed to call the API (comma-separated; "*" for any). Empty: no CORS.
    cors_origins: tuple[str, ...] = ()
    # The request line and headers together, and how many headers: beyond either, 431.
    http_max_header_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 16 * 1024
    http_max_headers: Annotated[int, msgspec.Meta(ge=8)] = 100
    # A request's head must arrive within this of its first byte (or of the connection);
    # its body within the second of the head: else 408 and the connection is closed.
    http_header_timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] = 10.0
    http_body_timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] = 30.0
    # A new connection must send its first request's whole head within this (else it is
    # closed): sockets opened and left silent to hold the server's resources go quickly.
    http_first_request_timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] = 3.0
    # An idle connection between requests is closed after this.
    http_keep_alive_seconds: Annotated[int, msgspec.Meta(ge=1)] = 5
    # Requests in progress beyond which a request is answered 503. Open connections are not
    # counted: idle sockets must not lock legitimate clients out.
    http_max_concurrency: Annotated[int, msgspec.Meta(ge=1)] = 1000
    # Open connections beyond which the longest-idle one (no request in progress) is closed
    # to make room for a new one. Keep it below the process's open-file limit (ulimit -n).
    http_max_connections: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    # Request bodies other than a put's (which is the message: at most 256 KiB); 413 beyond.
    # 1 MiB holds the largest update (a 256 KiB message) even with every character escaped
    # the way common JSON encoders escape them (\uXXXX for non-ASCII).
    http_max_body_bytes: Annotated[int, msgspec.Meta(ge=64 * 1024)] = 1024 * 1024
    # Bytes of v2 bodies read before their signature is verified, at once: in all, and per
    # account named in the path (cassieq.api.unverified_bodies); beyond, 503 before reading.
    http_unverified_body_bytes: Annotated[int, msgspec.Meta(ge=1024 * 1024)] = 128 * 1024 * 1024
    http_unverified_body_bytes_per_account: Annotated[int, msgspec.Meta(ge=1024 * 1024)] = (
        32 * 1024 * 1024
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read ``CASSIEQ_<FIELD>`` for every field; flags (``overrides``) win over env."""
        source = os.environ if env is None else env
        raw: dict[str, Any] = {}
        for name in cls.__struct_fields__:
            value = source.get(f"CASSIEQ_{name.upper()}")
            # A variable set to nothing (`-e CASSIEQ_ADMIN_TOKEN=`) is not a value: an empty
            # operator token or receipt secret must never be accepted as one.
            if value is not None and value.strip():
                raw[name] = _split_hosts(value) if name in _LISTS else value
        raw.update({k: v for k, v in overrides.items() if v is not None and v != ""})
        try:
            # strict=False lets "9042" from the environment become an int.
            return msgspec.convert(raw, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(f"invalid cassieq setting: {exc}") from exc


# Comma-separated in the environment.
_LISTS = frozenset({"cassandra_hosts", "cors_origins", "metrics_queues"})


def _split_hosts(value: str) -> list[str]:
    return [h.strip() for h in value.split(",") if h.strip()]
