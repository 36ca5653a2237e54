"""Fault injection: `rebalance serve` SIGKILLed at seeded random moments (whole process group, the Python
driver alone, the JVM alone), restarted on the same checkpoint each time, and the broker killed and
restarted under it; a generated log with a poison mix, loaded with `rebalance load`. What read_committed
consumers of the diffs and dead-letter topics see must be what `rebalance replay` of the same file writes:
the same records per group in the same order, none twice, every poison line dead-lettered once with
replay's reason.

This test starts a broker of its own instead of the session's (`conftest.kafka_bootstrap`): it kills it,
which would break every other test's clients of the session broker (and cannot be done to a broker given
by `KAFKA_BOOTSTRAP`). Its data dir lives in `tmp_path` and the restart reuses it and the port, so the log
survives. noida-db acknowledges writes before it saves them (measured: a SIGKILL within ~0.5 s of an
acknowledged transaction loses it, one 1 s later keeps it), so the broker is killed while every process of
the service is frozen (SIGSTOP) and has been for 1.5 s: the kill tests the service's recovery, not the
emulator's durability (Apache Kafka keeps acknowledged writes in the page cache when killed).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from pipeline_helpers import by_group, comparable, topic_records
from test_bad_input import BAD_FOR_FILES, POISON_MIX, interleave

from bench.pipeline import generate_log
from streaming.cli.main import main
from streaming.core.records import DEAD_LETTER, DIFF
from streaming.demo.local_broker import LocalBroker
from streaming.kafka.topics import ServeTopics, ensure_serve_topics
from streaming.spark.pipelines import read_output

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

SEED = 12
STRATEGIES = "sticky,cooperative-sticky"
BATCH = 25
TIMEOUT_S = 240
KILLS = ("process group", "Python driver", "JVM")


def poisoned_log(path: Path, rng: random.Random) -> tuple[Path, int]:
    """300 generated events over 30 groups, with group "shop"'s events and every kind of bad line of
    `test_bad_input` (invalid JSON and UTF-8, unknown type, missing and ill-typed fields, duplicate keys, deep
    nesting, over-long lines, limits) scattered in at seeded positions, in their own order. Returns the log
    and the number of poison lines."""
    generated = generate_log(path, 300, 30).read_bytes().splitlines()
    bad = [*BAD_FOR_FILES, *((line, "") for line in POISON_MIX)]
    shop = [line if isinstance(line, bytes) else line.encode() if isinstance(line, str) else json.dumps(line).encode()
            for line in interleave(bad)]
    total = len(generated) + len(shop)
    slots, g, s = set(rng.sample(range(total), len(shop))), iter(generated), iter(shop)
    lines = [next(s) if i in slots else next(g) for i in range(total)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, len(bad)


def _marked(tag: str) -> list[int]:
    """Live processes of this test's service runs (the env tag is inherited by the JVM and Python workers)."""
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if tag.encode() in environ.read_bytes():
                pids.append(int(environ.parent.name))
        except OSError:
            continue
    return pids


def _java_child(pid: int) -> int | None:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and b"java" in (stat.parent / "cmdline").read_bytes().split(b"\0")[0]:
                return int(stat.parent.name)
        except (OSError, IndexError, ValueError):
            continue
    return None


class Service:
    """`rebalance serve --once` runs on one checkpoint; each run's output goes to its own log file."""

    def __init__(self, bootstrap: str, topics: ServeTopics, workdir: Path) -> None:
        self.tag = f"REBALANCE_FAULT_TEST={workdir}"
        self.cmd = [sys.executable, "-m", "streaming.cli.main", "serve", "--bootstrap", bootstrap,
                    "--events-topic", topics.events, "--diffs-topic", topics.diffs,
                    "--dead-letter-topic", topics.dead_letter, "--checkpoint", str(workdir / "ckpt"), "--once",
                    "--max-events-per-batch", str(BATCH), "--strategies", STRATEGIES]
        self.workdir, self.runs = workdir, 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "serve-0.log"

    def start(self) -> None:
        self.runs += 1
        self.log = self.workdir / f"serve-{self.runs}.log"
        key, _, value = self.tag.partition("=")
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(self.cmd, env={**os.environ, key: value}, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def batches(self) -> int:
        return len(re.findall(r"^\[serve\] batch \d+:", self.log.read_text(errors="replace"), re.MULTILINE))

    def wait_batches(self, n: int) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + TIMEOUT_S
        while self.batches() < n:
            assert self.proc.poll() is None, f"serve exited ({self.proc.returncode}) early:\n{self.tail()}"
            assert time.monotonic() < deadline, f"no batch {n} within {TIMEOUT_S} s:\n{self.tail()}"
            time.sleep(0.1)

    def kill(self, what: str) -> None:
        """SIGKILL `what`; the rest must end by itself (the JVM exits when its driver's pipe closes, the driver
        reports its JVM's death), then nothing of the run may be left."""
        assert self.proc is not None
        if what == "process group":
            os.killpg(self.proc.pid, signal.SIGKILL)
        elif what == "Python driver":
            os.kill(self.proc.pid, signal.SIGKILL)
        else:
            java = _java_child(self.proc.pid)
            assert java is not None, "no JVM under serve"
            os.kill(java, signal.SIGKILL)
        code = self.proc.wait(timeout=60)
        if what == "JVM":  # the driver outlives it and says so in one line
            said = self.log.read_text(errors="replace").splitlines()
            assert code == 1 and "Traceback" not in self.tail(), f"exit {code}\n{self.tail()}"
            assert said[-1].startswith("rebalance serve: the Spark JVM stopped answering"), said[-1]
        deadline = time.monotonic() + 60
        while _marked(self.tag) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _marked(self.tag) == [], f"processes left behind after killing the {what}"

    def signal_all(self, sig: int) -> None:
        for pid in _marked(self.tag):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def test_kills_and_a_broker_restart_keep_serve_equal_to_replay(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    log, n_poison = poisoned_log(tmp_path / "log.jsonl", rng)
    assert main(["replay", str(log), "--out", str(tmp_path / "replay"), "--engine", "local",
                 "--strategies", STRATEGIES]) == 0
    expected_diffs, expected_dead = read_output(tmp_path / "replay", DIFF), read_output(tmp_path / "replay",
                                                                                         DEAD_LETTER)
    assert len(expected_dead) == n_poison and len(expected_diffs) > 300

    broker = LocalBroker(data_dir=tmp_path / "broker").start()
    try:
        topics = ServeTopics("events", "diffs", "dead-letter")
        ensure_serve_topics(broker.bootstrap, topics)
        assert main(["load", str(log), "--bootstrap", broker.bootstrap, "--topic", topics.events]) == 0
        service = Service(broker.bootstrap, topics, tmp_path)
        for what in rng.sample(KILLS, len(KILLS)):  # each kind once, in a seeded order, at a seeded moment
            service.start()
            service.wait_batches(rng.randint(1, 2))
            time.sleep(rng.uniform(0, 1.5))
            service.kill(what)

        service.start()  # the last run catches up, with the broker killed and restarted in its middle
        service.wait_batches(1)
        time.sleep(rng.uniform(0, 1.5))
        service.signal_all(signal.SIGSTOP)
        time.sleep(1.5)  # noida-db saves acknowledged writes within ~0.5 s (see the module docstring)
        assert broker.process is not None
        os.kill(broker.process.pid, signal.SIGKILL)
        broker.process.wait()
        service.signal_all(signal.SIGCONT)
        time.sleep(5)  # the service meets a dead broker
        broker = LocalBroker(port=broker.port, data_dir=broker.data_dir).start()
        assert service.proc is not None
        assert service.proc.wait(timeout=TIMEOUT_S) == 0, service.tail()

        diffs, dead = topic_records(broker.bootstrap, topics.diffs), topic_records(broker.bootstrap, topics.dead_letter)
    finally:
        broker.stop()

    logs = [(tmp_path / f"serve-{i}.log").read_text(errors="replace") for i in range(1, service.runs + 1)]
    assert sum("resuming after batch" in text for text in logs) == len(KILLS), "every restart says where it resumes"
    assert not any("lag unknown" in text for text in logs)  # the first batch after a restart shows its lag
    # a line without a readable `ts` has the Kafka record's time as `event_ts` under serve, null under replay
    dead, expected_dead = ([{k: v for k, v in d.items() if k != "event_ts"} for d in records]
                           for records in (dead, expected_dead))
    for kind, got, want in (("diffs", diffs, expected_diffs), ("dead letters", dead, expected_dead)):
        assert Counter(map(comparable, got)).most_common(1)[0][1] == 1, f"{kind}: a record written twice"
        unplaced = [comparable(r, positions=False) for r in got]
        assert Counter(unplaced) == Counter(comparable(r, positions=False) for r in want), kind  # as multisets
        assert by_group(got, positions=False) == by_group(want, positions=False), kind  # per-group order
    assert sorted(d["reason"] for d in dead) == sorted(d["reason"] for d in expected_dead)
