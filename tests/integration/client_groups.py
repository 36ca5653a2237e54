"""A real client library's consumer group on a broker, written down as `generation` events.

`run_group` runs the scenario with members as subprocesses (`client_member.py`): three members join,
one leaves, one joins, the topic grows from 6 to 9 partitions. Every member writes each assignment it
receives (its own callback, with the generation); kafka-python leaders also write their assignor's
inputs and output. `generation_log` turns that into a JSONL log of `partitions` and `generation` events
(contract §5), one `generation` event per generation that every member of it reported:
- kafka-python: the members in the order the coordinator handed them to the leader (the leader's
  HashMap insertion order), their subscriptions as the leader decoded them (topics, the sticky userData's
  owned partitions and generation), the leader's partition counts, and `assigned` = each member's own
  view;
- librdkafka: no leader hook, so members in member-id order (range and roundrobin sort members anyway),
  topics as configured, no `owned` (eager members revoke everything before they rejoin), and the partition
  count the topic had when the generation completed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient
from kafka.admin import NewPartitions

from streaming.kafka.topics import ensure_topics

MEMBER_SCRIPT = Path(__file__).with_name("client_member.py")
INITIAL_PARTITIONS, GROWN_PARTITIONS = 6, 9
WAIT_SECONDS = 90.0  # a bound against hanging, not a performance assertion


class Scenario:
    """Members of one group, each a subprocess appending to its own JSONL file."""

    def __init__(self, client: str, strategy: str, bootstrap: str, workdir: Path) -> None:
        self.client, self.strategy, self.bootstrap, self.workdir = client, strategy, bootstrap, workdir
        suffix = uuid.uuid4().hex[:8]
        self.group, self.topic = f"conf-{client}-{strategy}-{suffix}", f"conf-{suffix}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.grown_at_ms: int | None = None
        self.incomplete = 0  # generations `generation_log` left out (see there)

    def start(self, name: str) -> None:
        args = [sys.executable, str(MEMBER_SCRIPT), self.client, self.strategy, self.bootstrap, self.group,
                self.topic, name, str(self.workdir / f"{name}.jsonl"), str(self.workdir / f"{name}.stop")]
        self.procs[name] = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                            stderr=open(self.workdir / f"{name}.err", "w"))  # noqa: SIM115

    def stop(self, name: str) -> None:
        (self.workdir / f"{name}.stop").touch()
        self.procs[name].wait(timeout=WAIT_SECONDS)

    def records(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted(self.workdir.glob("*.jsonl")):
            out.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
        return sorted(out, key=lambda r: r["ts"])

    def latest(self) -> tuple[int, dict[str, dict[str, Any]]]:
        """The newest generation any member reported, with the views reported for it (by member name)."""
        views: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
        for r in self.records():
            if r["kind"] == "view":
                views[r["generation"]][r["name"]] = r
        if not views:
            return -1, {}
        generation = max(views)
        return generation, views[generation]

    def wait_for(self, what: str, done: Callable[[dict[str, dict[str, Any]]], bool]) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() not in (None, 0):
                    raise RuntimeError(f"member {name} died: {(self.workdir / f'{name}.err').read_text()[-2000:]}")
            _, views = self.latest()
            if done(views):
                return
            time.sleep(0.2)
        raise TimeoutError(f"{self.client} {self.strategy}: no generation with {what}; latest {self.latest()}")

    def live(self) -> set[str]:
        return {name for name, proc in self.procs.items() if proc.poll() is None
                and not (self.workdir / f"{name}.stop").exists()}

    def all_live_assigned(self, total: int) -> Callable[[dict[str, dict[str, Any]]], bool]:
        def done(views: dict[str, dict[str, Any]]) -> bool:
            held = sum(len(ps) for v in views.values() for ps in v["assigned"].values())
            return set(views) == self.live() and held == total
        return done

    def run(self) -> None:
        ensure_topics(self.bootstrap, {self.topic: INITIAL_PARTITIONS})
        try:
            for name in ("m1", "m2", "m3"):
                self.start(name)
                self.wait_for(f"{name} in it", lambda views, name=name: name in views)
            self.wait_for("m1..m3", self.all_live_assigned(INITIAL_PARTITIONS))
            self.stop("m2")
            self.wait_for("m1, m3", self.all_live_assigned(INITIAL_PARTITIONS))
            self.start("m4")
            self.wait_for("m1, m3, m4", self.all_live_assigned(INITIAL_PARTITIONS))
            admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
            try:
                self.grown_at_ms = int(time.time() * 1000)
                admin.create_partitions({self.topic: NewPartitions(total_count=GROWN_PARTITIONS)})
            finally:
                admin.close()
            self.wait_for(f"{GROWN_PARTITIONS} partitions", self.all_live_assigned(GROWN_PARTITIONS))
        finally:
            for name in list(self.live()):
                self.stop(name)
            for proc in self.procs.values():
                if proc.poll() is None:
                    proc.kill()

    def generation_log(self) -> list[dict[str, Any]]:
        """`partitions` and `generation` events, in the order the generations completed.

        Only complete generations are written: with kafka-python, those whose leader wrote its record and
        every member it assigned reported its view; with librdkafka (no leader record), those whose views
        hold every partition of the topic, since range and roundrobin assign every partition and a view
        missing means a member that never completed the generation. `self.incomplete` counts the others.
        """
        views: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
        leaders: dict[int, dict[str, Any]] = {}
        for r in self.records():
            if r["kind"] == "view":
                views[r["generation"]][r["member_id"]] = r
            else:
                leaders[r["generation"]] = r
        events: list[dict[str, Any]] = []
        sizes: dict[str, int] = {}
        self.incomplete = 0
        for generation in sorted(views):
            seen = views[generation]
            ts = min(v["ts"] for v in seen.values())
            complete = self._complete(seen, leaders.get(generation), ts)
            if complete is None:
                self.incomplete += 1
                continue
            partitions, members = complete
            if partitions != sizes:
                events.append({"group": self.group, "type": "partitions", "partitions": partitions, "ts": ts})
                sizes = dict(partitions)
            for mid, member in members.items():
                member["assigned"] = seen[mid]["assigned"]
                member["client_id"] = seen[mid]["name"]
            events.append({"group": self.group, "type": "generation", "generation": generation,
                           "protocol_type": "consumer", "protocol": self.strategy, "ts": ts, "members": members})
            if generation in leaders:
                events[-1]["leader_assignment"] = leaders[generation]["assignment"]
        return events

    def _complete(self, seen: dict[str, dict[str, Any]], leader: dict[str, Any] | None,
                  ts: int) -> tuple[dict[str, int], dict[str, dict[str, Any]]] | None:
        """(partition counts, members without `assigned`) of a complete generation, else None."""
        if self.client == "kafka-python":
            if leader is None or set(seen) != {m["member_id"] for m in leader["members"]}:
                return None
            members = {m["member_id"]: {k: v for k, v in m.items() if k != "member_id" and v is not None}
                       for m in leader["members"]}
            return leader["partitions"], members
        grown = self.grown_at_ms is not None and ts >= self.grown_at_ms
        count = GROWN_PARTITIONS if grown else INITIAL_PARTITIONS
        held = sorted(p for v in seen.values() for p in v["assigned"].get(self.topic, []))
        if held != list(range(count)):
            return None
        return {self.topic: count}, {mid: {"topics": [self.topic]} for mid in sorted(seen)}
