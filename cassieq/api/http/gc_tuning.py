"""The cyclic garbage collector, set for a long-running server.

Measured on `cassieq serve` under 32 clients (v2 batches of ten, bench turns): with
CPython's defaults the collector took about a quarter of the server's one busy thread. Two
causes, two remedies:

- each full collection walks every tracked object, and some 120,000 of them are the
  server's own code and set-up (modules, functions, classes, the app's routes and its
  OpenAPI schema), alive for the life of the process. ``gc.freeze()`` once set-up is done
  moves them to the permanent generation, which no collection walks again;
- with the default first threshold (700 allocations) a collection ran about 100 times a second,
  and the objects of requests in flight at that moment (32 clients' coroutines, futures,
  rows) were promoted to the older generations, which then filled and were collected in
  turn. A threshold of 10,000 lets most of them die first (reference counting frees them)
  and ran a twentieth as many collections. Cyclic garbage waits a little longer, bounded by
  that count.

(The rows a server keeps in its caches are not tracked at all: see MessageRow.) Measured in
15 s runs of one server (2026-11-26): the collector's share of the server's time went from
24% (v2) and 16% (v1) to about 6%; v2 e2e with batches of ten from 2,250-2,470 messages/s
to 3,070 with the rows untracked and 3,450-3,610 with this as well; v1 e2e from 503 to 566.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def settle_for_serving() -> None:
    """Call once the app is built, right before serving: collects what set-up left over
    (so that no garbage is frozen), freezes the rest, raises the first threshold."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
