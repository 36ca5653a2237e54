"""Output is a pure function of the log: micro-batches of 1, 7 or unlimited events give the same records.

Through `replay` (files source and sink), whose batch boundaries cut groups' event sequences at
different places each time; every field but `emitted_ts` must match, per group in order, dead letters too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pipeline_helpers import by_group, config, local_records, run_replay, write_log

pytestmark = pytest.mark.spark


def short_log() -> list[dict | str]:
    """~30 events over three groups, including a cooperative move, a static restart and two bad lines."""
    ev: list[dict | str] = []
    for g, n in (("alpha", 6), ("beta", 4), ("gamma", 3)):
        ev.append({"group": g, "type": "partitions", "partitions": {f"{g}-t": n, "shared": 2}})
    for i in range(4):
        for g in ("alpha", "beta", "gamma"):
            ev.append({"group": g, "type": "join", "member": f"{g}-m{i}", "topics": [f"{g}-t", "shared"],
                       "instance_id": f"{g}-pod-{i}" if i == 1 else None})
    ev.append("{not json")
    ev += [
        {"group": "alpha", "type": "leave", "member": "alpha-m0"},
        {"group": "beta", "type": "partitions", "partitions": {"beta-t": 8}},
        {"group": "gamma", "type": "subscribe", "member": "gamma-m2", "topics": ["shared"]},
        {"group": "alpha", "type": "join", "member": "alpha-m1b", "topics": ["alpha-t", "shared"],
         "instance_id": "alpha-pod-1"},
        {"group": "beta", "type": "leave", "member": "nobody"},
        {"group": "gamma", "type": "leave", "member": "gamma-m3"},
        {"group": "alpha", "type": "delete_topic", "topic": "shared"},
        {"group": "beta", "type": "join", "member": "beta-m9", "topics": ["beta-t"]},
    ]
    return [{k: v for k, v in e.items() if v is not None} if isinstance(e, dict) else e for e in ev]


def test_batch_size_does_not_change_output(spark, tmp_path: Path) -> None:
    log = write_log(tmp_path / "short.jsonl", short_log())
    cfg = config("sticky,cooperative-sticky,range")
    runs = {n: run_replay(spark, log, tmp_path / f"out-{n}", cfg, max_events=n) for n in (1, 7, None)}

    diffs, dead = runs[None]
    assert len(dead) == 2 and len(diffs) > 30
    for n in (1, 7):
        assert by_group(runs[n][0]) == by_group(diffs), f"diffs differ with --max-events-per-batch {n}"
        assert by_group(runs[n][1]) == by_group(dead), f"dead letters differ with --max-events-per-batch {n}"
    # and the plain-Python loop agrees (it cuts batches its own way)
    local_diffs, local_dead = local_records(log, cfg)
    assert by_group(local_diffs) == by_group(diffs)
    assert by_group(local_dead) == by_group(dead)
