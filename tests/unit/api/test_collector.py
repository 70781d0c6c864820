"""The garbage collector as a server runs it: set-up frozen, a higher first threshold, and
the rows a server caches never tracked."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

from cassieq.api.http.gc_tuning import YOUNG_THRESHOLD
from cassieq.engine.life.put import new_message
from cassieq.model import BucketState


def test_settle_for_serving_freezes_set_up_and_raises_the_first_threshold() -> None:
    # In a process of its own: the test process's collector is left as it is.
    script = (
        "import gc, json\n"
        "from cassieq.api.app import create_app\n"
        "from cassieq.api.http.gc_tuning import settle_for_serving\n"
        "before = (gc.get_freeze_count(), gc.get_threshold())\n"
        "settle_for_serving()\n"
        "print(json.dumps([before, (gc.get_freeze_count(), gc.get_threshold())]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    (frozen_before, thresholds_before), (frozen_after, thresholds_after) = json.loads(out)
    assert frozen_before == 0
    # The modules, functions and classes imported so far: tens of thousands of objects.
    assert frozen_after > 10_000
    assert thresholds_after == [YOUNG_THRESHOLD, *thresholds_before[1:]]


def test_rows_and_bucket_snapshots_are_not_tracked_by_the_collector() -> None:
    row = new_message(1, "body", 1_000, attributes={"a": "b"})
    snap = BucketState(bucket=0, sealed_at=None, finalized_at=None, messages=(row,))
    assert not gc.is_tracked(row)
    assert not gc.is_tracked(snap)
