"""Real clients' groups captured and replayed: the group's own strategy gives exactly what the group did.

kafka-python (range, roundrobin, sticky) and librdkafka through confluent-kafka (range, roundrobin) groups run on
the broker at once (`client_groups.Scenario`: members join one after another, one leaves, one joins, a subscribed
topic grows, then every member stops), while `rebalance capture --source describe` polls them. The captured log
is replayed with `rebalance replay --strategies all`. What is asserted, per group whose recorded generations all
conform (docs/events-and-diffs.md §1): the group's own strategy gives exactly the `observed` records — the same
rounds, moves, pauses and final assignment — and the emptied group's round pauses nothing and leaves every
assignment empty. A group whose capture missed a generation its assignor depends on (a sticky member reporting
an `owned` that is not what the last captured generation gave it) is left out and named, as is one that does not
conform; most groups must qualify.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import client_groups
import pytest
from captured_groups import assert_own_strategy_is_observed, conforming_groups
from client_groups import Scenario

from assignors import OWNERSHIP_BLIND, STRATEGIES

pytestmark = pytest.mark.kafka

RUNS = [("kafka-python", "range", True), ("kafka-python", "roundrobin", False), ("kafka-python", "sticky", True),
        ("confluent-kafka", "range", True), ("confluent-kafka", "roundrobin", True)]
CLIENT_MODULES = {"kafka-python": "kafka", "confluent-kafka": "confluent_kafka"}
POLL_SECONDS = 0.5
CATCH_UP_SECONDS = 15.0  # bounds against hanging, not performance assertions
EMPTIED_SECONDS = 60.0  # a static member's place is kept until its session times out


def captured(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]


class CapturedScenario(Scenario):
    """The scenario, each settled phase held until the capture has written its generation: the describe source
    sees only what is there at a poll, and a phase the group leaves before the next poll would be a generation
    the capture never saw. Every member is dynamic: a stopped static member sends no LeaveGroup, and the local
    broker then keeps its group in PreparingRebalance until the rebalance timeout instead of emptying it."""

    def __init__(self, *args: Any, log: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log = log

    def member(self, name: str) -> tuple[list[str], str | None]:
        roles, _ = super().member(name)
        return roles, None

    def wait_for(self, what: str, done: Callable[[dict[str, dict[str, Any]]], bool]) -> None:
        super().wait_for(what, done)
        _, views = self.latest()
        if what in self.missed or set(views) != self.live():
            return
        want = {v["member_id"]: v["assigned"] for v in views.values()}
        deadline = time.monotonic() + CATCH_UP_SECONDS
        while time.monotonic() < deadline:
            if any(e["type"] == "generation" and e["group"] == self.group
                   and {mid: m.get("assigned", {}) for mid, m in e["members"].items()} == want
                   for e in captured(self.log)):
                return
            time.sleep(0.1)


def _complete(events: list[dict[str, Any]], group: str) -> str | None:
    """Why the captured history of an ownership-aware group misses a generation (None: it does not)."""
    previous: dict[str, dict[str, list[int]]] = {}
    for e in events:
        if e["group"] != group or e["type"] != "generation":
            continue
        if e["protocol"] not in OWNERSHIP_BLIND:
            for mid, m in e["members"].items():
                if mid in previous and m.get("owned", {}) != previous[mid]:
                    return f"generation {e['generation']}: {mid} owned {m.get('owned')}, captured {previous[mid]}"
        previous = {mid: m.get("assigned", {}) for mid, m in e["members"].items()}
    return None


def test_captured_real_groups_replay_as_they_ran(kafka_bootstrap: str, tmp_path: Path, monkeypatch) -> None:
    # a phase the local broker stalls (a kafka-python leader left without its SyncGroup answer) is given up sooner
    # than in the conformance test: the group then misses generations and is left out below
    monkeypatch.setattr(client_groups, "PHASE_SECONDS", 20.0)
    runs = [r for r in RUNS if importlib.util.find_spec(CLIENT_MODULES[r[0]]) is not None]
    if not runs:
        pytest.skip("neither kafka-python nor confluent-kafka is installed (pip install -e '.[test]')")
    log = tmp_path / "captured.jsonl"
    scenarios = []
    for client, strategy, mixed in runs:
        workdir = tmp_path / f"{client}-{strategy}"
        workdir.mkdir()
        scenarios.append(CapturedScenario(client, strategy, kafka_bootstrap, workdir, mixed=mixed, log=log))
    groups = "^(" + "|".join(s.group for s in scenarios) + ")$"
    capture = subprocess.Popen(
        [sys.executable, "-m", "streaming.cli.main", "capture", "--bootstrap", kafka_bootstrap, "--source",
         "describe", "--poll-interval", str(POLL_SECONDS), "--groups", groups, "--out", str(log)],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "capture.err", "w"))  # noqa: SIM115
    try:
        threads = [threading.Thread(target=s.run) for s in scenarios]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        deadline = time.monotonic() + EMPTIED_SECONDS
        while time.monotonic() < deadline and not all(_emptied(captured(log), s.group) for s in scenarios):
            time.sleep(0.2)
    finally:
        capture.send_signal(signal.SIGINT)
        assert capture.wait(timeout=30) == 0, (tmp_path / "capture.err").read_text()[-2000:]
    events = captured(log)
    for s in scenarios:
        assert _emptied(events, s.group), f"{s.group}: the capture did not see the group emptied"

    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "streaming.cli.main", "replay", str(log), "--engine", "local",
                           "--strategies", "all", "--out", str(out)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    diffs = [json.loads(line) for p in sorted((out / "diffs").glob("*.jsonl")) for line in p.read_text().splitlines()]
    conformance = [json.loads(line) for p in sorted((out / "conformance").glob("*.jsonl"))
                   for line in p.read_text().splitlines()]
    assert not (out / "dead-letter").exists() or not any(
        p.read_text() for p in (out / "dead-letter").glob("*.jsonl"))

    conforming = conforming_groups(conformance)
    checked = []
    emptied_groups = 0  # a group the broker removed before a poll saw it Empty ends with `delete_group` only
    for s in scenarios:
        generations = sum(e["type"] == "generation" and e["group"] == s.group for e in events)
        missing = _complete(events, s.group)
        if s.group not in conforming or missing is not None:
            print(f"{s.client} {s.strategy}: left out ({generations} generations captured; "
                  f"{missing or 'not every generation conforms'}; phases missed: {s.missed})")
            continue
        assert conforming[s.group] == s.strategy
        assert_own_strategy_is_observed(diffs, s.group, s.strategy)
        emptied = [d for d in diffs if d["group"] == s.group and d["cause"].get("generation") in _emptied_at(
            events, s.group)]
        assert sorted(d["strategy"] for d in emptied) == sorted([*STRATEGIES, "observed"] * len(
            _emptied_at(events, s.group)))
        assert all(d["paused"] == 0 and d["members"] == 0 and all(c["assigned"] == {} for c in d["changes"].values())
                   for d in emptied)
        emptied_groups += bool(emptied)
        own = [d for d in diffs if d["group"] == s.group and d["strategy"] == s.strategy]
        print(f"{s.client} {s.strategy}: {generations} generations captured, {len(own)} {s.strategy} rounds = "
              f"observed, paused {sum(d['paused'] for d in own)}")
        checked.append(s.group)
    assert len(checked) >= max(1, len(scenarios) - 2), f"only {len(checked)} of {len(scenarios)} groups qualified"
    assert emptied_groups, "no checked group was captured emptied"


def _emptied_at(events: list[dict[str, Any]], group: str) -> set[int]:
    """The group's captured generations without members."""
    return {e["generation"] for e in events if e["group"] == group and e["type"] == "generation" and not e["members"]}


def _emptied(events: list[dict[str, Any]], group: str) -> bool:
    """Whether the group's last captured event says it has no members (or is gone)."""
    mine = [e for e in events if e["group"] == group and e["type"] in ("generation", "delete_group")]
    return bool(mine) and (mine[-1]["type"] == "delete_group" or mine[-1]["members"] == {})
