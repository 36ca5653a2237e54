"""Shared pieces of the pipeline integration tests: logs on disk, running replay/serve, comparing outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from streaming.core.config import Limits, PipelineConfig, parse_strategies
from streaming.core.local import read_jsonl, replay
from streaming.kafka.consumer import read_to_end
from streaming.kafka.topics import ServeTopics
from streaming.spark.pipelines import read_output, replay_log, serve_events


def config(strategies: str = "all") -> PipelineConfig:
    return PipelineConfig(parse_strategies(strategies), Limits())


def write_log(path: Path, events: Iterable[dict[str, Any] | str | bytes]) -> Path:
    """One line per event: dicts as compact JSON, str/bytes verbatim (for malformed lines)."""
    with path.open("wb") as f:
        for e in events:
            line = e if isinstance(e, bytes) else e.encode() if isinstance(e, str) else json.dumps(e).encode()
            f.write(line + b"\n")
    return path


def run_replay(spark: Any, log: Path, out: Path, cfg: PipelineConfig, max_events: int | None = None
               ) -> tuple[list[dict], list[dict]]:
    """`rebalance replay` in-process; returns (diffs, dead letters)."""
    replay_log(spark, log, out, cfg, max_events_per_batch=max_events)
    return read_output(out, "diff"), read_output(out, "dead-letter")


def serve_topics(unique_topic: Any) -> ServeTopics:
    return ServeTopics(unique_topic("events", partitions=2), unique_topic("diffs", partitions=2),
                       unique_topic("dead", partitions=1))


def run_serve_once(spark: Any, bootstrap: str, topics: ServeTopics, checkpoint: Path, cfg: PipelineConfig,
                   max_events: int | None = None) -> tuple[list[dict], list[dict]]:
    """`rebalance serve --once` in-process; returns (diffs, dead letters) as read_committed consumers see them."""
    serve_events(spark, bootstrap, cfg, checkpoint=str(checkpoint), topics=topics, once=True,
                 max_events_per_batch=max_events)
    return topic_records(bootstrap, topics.diffs), topic_records(bootstrap, topics.dead_letter)


def topic_records(bootstrap: str, topic: str) -> list[dict]:
    records = read_to_end(bootstrap, topic)
    for r in records:  # the key is the group id, so a group's records keep their order
        assert r.key is not None and json.loads(r.value)["group"] in (r.key.decode(), None)
    return [json.loads(r.value) for r in records]


def local_records(log: Path, cfg: PipelineConfig) -> tuple[list[dict], list[dict]]:
    """The plain-Python loop over the same log: the reference output."""
    outs = list(replay(read_jsonl(log), cfg))
    return ([json.loads(o.value) for o in outs if o.kind == "diff"],
            [json.loads(o.value) for o in outs if o.kind == "dead-letter"])


def comparable(record: dict, *, positions: bool = True) -> str:
    """A record as canonical JSON without `emitted_ts` (and without source positions unless asked)."""
    r = dict(record)
    r.pop("emitted_ts", None)
    if not positions:
        r.pop("source", None)
        if isinstance(r.get("cause"), dict):
            r["cause"] = {k: v for k, v in r["cause"].items() if k != "source"}
    return json.dumps(r, sort_keys=True)


def by_group(records: Iterable[dict], *, positions: bool = True) -> dict[Any, list[str]]:
    """Records per group, in output order: the order the contract promises (per group, per key)."""
    out: dict[Any, list[str]] = defaultdict(list)
    for r in records:
        out[r.get("group")].append(comparable(r, positions=positions))
    return dict(out)


def rebuild_rounds(diffs: Iterable[dict]) -> dict[tuple[str, str], list[tuple[int, dict[str, list]]]]:
    """Replay `changes` per (group, strategy): the assignment after every round, as [(generation, assignment)].

    Assignments map member -> sorted [(topic, partition)], members without partitions left out. A static
    replacement record (phase "replace") moves partitions between ids without being a round.
    """
    current: dict[tuple[str, str], dict[str, set]] = defaultdict(lambda: defaultdict(set))
    rounds: dict[tuple[str, str], list[tuple[int, dict[str, list]]]] = defaultdict(list)
    for d in diffs:
        key = (d["group"], d["strategy"])
        state = current[key]
        for member, change in d["changes"].items():
            for topic, parts in change["revoked"].items():
                assert {(topic, p) for p in parts} <= state[member], f"{key} revokes what {member} does not own"
                state[member] -= {(topic, p) for p in parts}
            for topic, parts in change["assigned"].items():
                state[member] |= {(topic, p) for p in parts}
        if d["phase"] != "replace" and d.get("part", 1) == d.get("parts", 1):
            snapshot = {m: sorted(ps) for m, ps in state.items() if ps}
            rounds[key].append((d["generation"], snapshot))
    return dict(rounds)


def interrupt(proc: subprocess.Popen, label: str, ready: Callable[[], bool] = lambda: True, *,
              after_batch: bool = True) -> tuple[int, list[str]]:
    """Ctrl-C as a terminal sends it (SIGINT to the whole process group of `proc`, started with
    `start_new_session` and stderr piped) once `[label] batch` lines appear (unless not `after_batch`) and
    `ready()` holds. Returns the exit code and what was printed afterwards (without `after_batch`: all of
    stderr), batch lines (batches that ended meanwhile) left out."""
    try:
        before = []
        assert proc.stderr is not None
        for raw in proc.stderr if after_batch else ():  # wait until micro-batches run
            before.append(raw.decode())
            if raw.startswith(f"[{label}] batch".encode()):
                break
        assert not after_batch or (before and before[-1].startswith(f"[{label}] batch")), before
        deadline = time.monotonic() + 120
        while not ready():
            assert proc.poll() is None and time.monotonic() < deadline, f"{label}: never ready to be interrupted"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        # a process of the group that never ends (an orphaned JVM holding the pipe) is killed: exit code -9
        guard = threading.Timer(300, os.killpg, (proc.pid, signal.SIGKILL))
        guard.start()
        try:
            rest = proc.stderr.read().decode().splitlines()
        finally:
            guard.cancel()
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return code, [line for line in rest if not line.startswith(f"[{label}] batch")]


def spark_jvm_booting(pid: int) -> bool:
    """Whether the process has a child running Spark's JVM (`spark-submit` once it became `java`)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                if b"org.apache.spark.deploy.SparkSubmit" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return True
            except OSError:  # ended meanwhile
                pass
    return False
