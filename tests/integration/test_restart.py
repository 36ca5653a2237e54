"""Crash safety: `rebalance serve` SIGKILLed at the worst moments, restarted from its checkpoint, delivers
exactly the records of an uninterrupted run to read_committed consumers: no duplicate, no loss.

Kill points (armed through `streaming.spark.faults`, which freezes the job there so the test can kill it):
- `state`: mid-batch, inside the per-group state function (state not yet committed);
- `sink-before-commit`: the batch's diffs are produced, their Kafka transaction is still open;
- `sink-after-commit`: the transaction is committed, Spark has not logged the batch as done.
Each kill takes the serve process's group (the serve process and its JVM); PySpark's worker daemon, in a
group of its own, ends its workers when the JVM's pipe closes -- checked: no armed process survives.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pipeline_helpers import by_group, config, run_serve_once, serve_topics, topic_records, write_log

from streaming.kafka.loader import load_log
from streaming.kafka.topics import ServeTopics

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

SAMPLES = Path(__file__).parents[2] / "whatif" / "samples"
STRATEGIES = "sticky,cooperative-sticky"
BATCH = 12
KILL_POINTS = [("state", 1), ("sink-before-commit", 2), ("sink-after-commit", 3)]
TIMEOUT_S = 300


def _serve_cmd(bootstrap: str, topics: ServeTopics, checkpoint: Path) -> list[str]:
    return [sys.executable, "-m", "streaming.cli.main", "serve", "--bootstrap", bootstrap,
            "--events-topic", topics.events, "--diffs-topic", topics.diffs, "--dead-letter-topic", topics.dead_letter,
            "--checkpoint", str(checkpoint), "--once", "--max-events-per-batch", str(BATCH),
            "--strategies", STRATEGIES]


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:]


def _armed_processes(marker_dir: Path) -> list[int]:
    """PIDs of live processes started with a fault armed by this test (Linux /proc; [] elsewhere)."""
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"REBALANCE_FAULT_MARKER={marker_dir}".encode() in environ.read_bytes():
                pids.append(int(environ.parent.name))
        except OSError:
            continue
    return pids


def _kill_at(cmd: list[str], point: str, batch: int, workdir: Path) -> None:
    """Run serve until it freezes at `point` of `batch`, then SIGKILL its whole process group."""
    marker, log = workdir / f"reached-{point}", workdir / f"serve-{point}.log"
    env = {**os.environ, "REBALANCE_FAULT": f"{point}:{batch}", "REBALANCE_FAULT_MARKER": str(marker)}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not marker.exists():
            assert proc.poll() is None, f"serve exited ({proc.returncode}) before {point}:{batch}:\n{_tail(log)}"
            assert time.monotonic() < deadline, f"serve never reached {point}:{batch}:\n{_tail(log)}"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # our child's own process group: serve, its JVM, its workers
        proc.wait()
    assert marker.read_text().strip() == f"{point}:{batch}"


def test_sigkill_and_restart_is_exactly_once(spark, kafka_bootstrap, unique_topic, tmp_path: Path) -> None:
    lines = [line for name in ("rolling-deploy.jsonl", "static-restarts.jsonl")
             for line in (SAMPLES / name).read_bytes().splitlines() if line.strip()]
    lines.insert(20, b"{broken")
    log = write_log(tmp_path / "log.jsonl", lines)
    cfg = config(STRATEGIES)
    reference = serve_topics(unique_topic)
    load_log(log, kafka_bootstrap, reference.events, progress=None)
    # the uninterrupted run, in-process
    expected_diffs, expected_dead = run_serve_once(spark, kafka_bootstrap, reference, tmp_path / "ref-ckpt", cfg,
                                                   max_events=BATCH)

    crashed = ServeTopics(reference.events, unique_topic("diffs", partitions=2), unique_topic("dead", partitions=1))
    cmd = _serve_cmd(kafka_bootstrap, crashed, tmp_path / "ckpt")
    for point, batch in KILL_POINTS:
        _kill_at(cmd, point, batch, tmp_path)
    final_log = tmp_path / "serve-final.log"
    with final_log.open("wb") as out:
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, _tail(final_log)
    deadline = time.monotonic() + 30
    while _armed_processes(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _armed_processes(tmp_path) == [], "a killed job left processes behind"

    diffs, dead = topic_records(kafka_bootstrap, crashed.diffs), topic_records(kafka_bootstrap, crashed.dead_letter)
    assert len(expected_diffs) > 50 and len(expected_dead) == 1
    assert by_group(diffs) == by_group(expected_diffs)  # same records, same order per group, none twice
    assert by_group(dead) == by_group(expected_dead)
