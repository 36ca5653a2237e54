"""Keeps `bench/soak.py` from rotting without a 30-minute run: its /proc sampling on a real process tree, the
GC-log reading and the summary table (the run itself is `python -m bench.soak`)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bench.soak import KINDS, classify, heap_after_gc, sample, summary


def test_processes_are_sampled_by_kind(tmp_path: Path) -> None:
    """A parent with a Python child stands in for serve and a worker; a sleep stands in for the broker."""
    child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import time; time.sleep(60)'])"
    serve = subprocess.Popen([sys.executable, "-c", child])
    broker = subprocess.Popen(["sleep", "60"])
    try:
        for _ in range(50):  # until the child exists
            kinds = classify(serve.pid, broker.pid)
            if kinds["workers"]:
                break
            time.sleep(0.1)
        assert kinds["driver"] == [serve.pid] and len(kinds["workers"]) == 1 and kinds["jvm"] == []
        assert kinds["broker"] == [broker.pid]
        row = sample(kinds)
        assert all(row[k] > 0 for k in ("driver", "workers", "broker")) and row["jvm"] == 0
        assert row["workers_pss"] <= row["workers"] and row["workers_n"] == 1
    finally:
        for proc in (serve, broker):
            proc.kill()
            proc.wait()


def test_heap_after_gc_is_the_last_collection(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    assert heap_after_gc(log) is None
    log.write_text("[1.0s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 120M->30M(256M) 5.1ms\n"
                   "[9.0s][info][gc] GC(2) Pause Young (Mixed) (G1 Evacuation Pause) 240M->190M(700M) 12.9ms\n")
    assert heap_after_gc(log) == (190, 700)


def test_summary_has_a_row_every_ten_minutes_and_the_last() -> None:
    rows = [{"t": t, **dict.fromkeys(KINDS, 100.0 + t / 60), "processed": int(t)} for t in range(0, 1800, 10)]
    table = summary({"label": "run", "groups": 2, "rate": 1.0, "spark_conf": [], "samples": rows}).splitlines()
    assert table[0] == "run: 2 groups, 1.0 events/s"
    assert [line.split()[0] for line in table[2:]] == ["0.0", "10.0", "20.0", "29.8"]
