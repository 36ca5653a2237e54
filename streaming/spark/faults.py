"""Crash-test hooks: named points where a test freezes the job so it can SIGKILL it right there.

Off unless `REBALANCE_FAULT=<point>[:<batch id>]` is set; then the first process reaching that point
writes `REBALANCE_FAULT_MARKER` (a file path) and sleeps until killed. Points: `state` (inside the
per-group state function, mid-batch), `files-written` (a `replay` task wrote its part files, the batch file
is not made yet), `sink-staged` (a sink task spilled its rows to the staging topic,
nothing committed yet), `sink-before-commit` (diffs produced, transaction still open), `sink-after-commit`
(transaction committed, Spark's commit log not yet written).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path


def pause_point(name: str, batch_id: int | str | None = None, *, before: Callable[[], object] | None = None) -> None:
    """Freeze here if this point (and batch) is armed; `before` runs first (e.g. flush what was sent)."""
    spec = os.environ.get("REBALANCE_FAULT")
    if not spec:
        return
    point, _, batch = spec.partition(":")
    if point != name or (batch and str(batch_id) != batch):
        return
    if before is not None:
        before()
    marker = os.environ.get("REBALANCE_FAULT_MARKER")
    if marker:
        Path(marker).write_text(f"{name}:{batch_id}\n")
    time.sleep(3600)
