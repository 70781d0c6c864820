"""Idle sockets must not lock clients out (issue 40, finding 4), on a real socket of a
server configured as `cassieq serve` configures it, on each store.

Measured before: 1,010 idle TCP connections that sent nothing made every request a 503 (the
cap counted open connections). Here in small: a cap of 20 and 25 idle sockets. Every wait is
a read on a socket with a bound, or a poll with a deadline.
"""

from __future__ import annotations

import json
import time

from cassieq.store.base import Store
from tests.api.live import body_of, read_response, read_until_closed, status_of
from tests.api.test_http_limits import SLACK_S, live_server

CAP = 20
IDLE = 25


def test_idle_sockets_beyond_the_cap_do_not_lock_a_client_out(store: Store) -> None:
    # The first-request deadline is long here: the idle sockets stay open for the whole test.
    settings = {
        "http_max_concurrency": CAP,
        "http_first_request_timeout_seconds": 60,
        "http_header_timeout_seconds": 60,
    }
    with live_server(store, **settings) as live:
        idle = [live.connect() for _ in range(IDLE)]
        try:
            # Accepted in order: the server has taken every idle socket before the request
            # that follows them on a new connection is read.
            for _ in range(3):
                with live.connect() as conn:
                    conn.sendall(live.head("GET", live.messages + "/next"))
                    raw = read_response(conn)
                assert status_of(raw) == 204, raw  # served: the queue is empty
            # The idle sockets are still open (nothing was sent to them, nor closed).
            for conn in idle:
                conn.setblocking(False)
                try:
                    got = conn.recv(1)
                except BlockingIOError:
                    continue  # open, nothing to read: as it should be
                raise AssertionError(f"an idle socket was answered or closed: {got!r}")
        finally:
            for conn in idle:
                conn.close()


def test_a_silent_connection_is_closed_at_the_first_request_timeout(store: Store) -> None:
    settings = {"http_first_request_timeout_seconds": 0.5, "http_header_timeout_seconds": 60}
    with live_server(store, **settings) as live:
        start = time.monotonic()
        silent, trickling = live.connect(), live.connect()
        trickling.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\n")  # never finished
        try:
            # Both go long before the 60 s header deadline: the first head's own is short.
            assert read_until_closed(silent, SLACK_S) == b""  # nothing asked, no answer
            raw = read_until_closed(trickling, SLACK_S)
            assert time.monotonic() - start < 0.5 + SLACK_S
        finally:
            silent.close()
            trickling.close()
        assert status_of(raw) == 408, raw
        assert json.loads(body_of(raw))["detail"] == "the request head did not arrive within 0.5 s"
        # A keep-alive connection's second head has the (longer) header deadline: the first
        # head's deadline ended with that head.
        with live.connect() as conn:
            conn.sendall(live.head("GET", "/health"))
            assert status_of(read_response(conn)) == 200
            conn.sendall(live.head("GET", "/health"))
            assert status_of(read_response(conn)) == 200


def test_beyond_the_connection_limit_the_longest_idle_socket_makes_room(store: Store) -> None:
    settings = {
        "http_max_connections": 10,
        "http_first_request_timeout_seconds": 60,
        "http_header_timeout_seconds": 60,
    }
    with live_server(store, **settings) as live:
        idle = [live.connect() for _ in range(15)]
        try:
            # Accepted in order, each beyond ten closed the longest idle: the first ones.
            with live.connect() as conn:
                conn.sendall(live.head("GET", live.messages + "/next"))
                assert status_of(read_response(conn)) == 204
            # Ten stay at most (the fixture's own connections may have been among the
            # idle ones): at least the first six silent sockets were closed, without an answer.
            for conn in idle[:6]:
                assert read_until_closed(conn, SLACK_S) == b""
            for conn in idle[-4:]:  # the newest silent ones are still open
                conn.setblocking(False)
                try:
                    got = conn.recv(1)
                except BlockingIOError:
                    continue
                raise AssertionError(f"a new idle socket was answered or closed: {got!r}")
        finally:
            for conn in idle:
                conn.close()
