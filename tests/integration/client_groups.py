"""A real client library's consumer group on a broker, written down as `generation` events.

`Scenario.run` runs the scenario with members as subprocesses (`client_member.py`): three members join,
one leaves, one joins, topic A grows from 6 to 9 partitions. Subscriptions differ (m1, m2: A; m3, m4: A and
a 3-partition topic B) and m3 is a static member (`group.instance.id`), so that Range's per-topic quotas,
RoundRobin's skipping of non-subscribers and the sticky assignors' general path all take part. Every
member writes each assignment it receives (its own callback, with the generation); kafka-python leaders
also write their assignor's inputs and output. `generation_log` turns that into a JSONL log of `partitions`
and `generation` events (docs/events-and-diffs.md §1), one `generation` event per generation that every member of it
reported:
- kafka-python: the members in the order the coordinator handed them to the leader (the leader's
  HashMap insertion order), their subscriptions as the leader decoded them (topics, the sticky userData's
  owned partitions and generation), the leader's partition counts, and `assigned` = each member's own
  view;
- librdkafka: no leader hook, so members in member-id order (range and roundrobin sort members anyway),
  topics and instance id as configured, no `owned` (eager members revoke everything before they rejoin),
  and the partition counts the topics had when the generation completed.
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
INITIAL_PARTITIONS, GROWN_PARTITIONS, B_PARTITIONS = 6, 9, 3
A, B = "a", "b"  # topic roles; the topics' names get a per-run suffix
MEMBERS = {"m1": ([A], None), "m2": ([A], None), "m3": ([A, B], "static-m3"), "m4": ([A, B], None)}
WAIT_SECONDS = 90.0  # bounds against hanging, not performance assertions
PHASE_SECONDS = 40.0


class Scenario:
    """Members of one group, each a subprocess appending to its own JSONL file."""

    def __init__(self, client: str, strategy: str, bootstrap: str, workdir: Path, *, mixed: bool = True) -> None:
        """`mixed=False`: every member subscribes to A only (kafka-python's roundrobin leader raises
        KeyError on mixed subscriptions, so its group never completes a generation with them)."""
        self.client, self.strategy, self.bootstrap, self.workdir = client, strategy, bootstrap, workdir
        self.mixed = mixed
        suffix = uuid.uuid4().hex[:8]
        self.group = f"conf-{client}-{strategy}-{suffix}"
        self.topics = {A: f"conf-a-{suffix}", B: f"conf-b-{suffix}"}
        self.procs: dict[str, subprocess.Popen] = {}
        self.grown_at_ms: int | None = None
        self.incomplete = 0  # generations `generation_log` left out (see there)
        self.missed: list[str] = []  # phases the group did not reach in time

    def start(self, name: str) -> None:
        roles, instance_id = self.member(name)
        args = [sys.executable, str(MEMBER_SCRIPT), self.client, self.strategy, self.bootstrap, self.group,
                ",".join(self.topics[r] for r in roles), name, instance_id or "-",
                str(self.workdir / f"{name}.jsonl"), str(self.workdir / f"{name}.stop")]
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
        """Until the newest generation satisfies `done`. A group that does not get there within
        PHASE_SECONDS is noted in `self.missed` and the scenario goes on (kafka-python groups on the local
        broker sometimes stall for minutes with the leader waiting for its SyncGroup answer); a member
        process that dies fails the run."""
        deadline = time.monotonic() + PHASE_SECONDS
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() not in (None, 0):
                    raise RuntimeError(f"member {name} died: {(self.workdir / f'{name}.err').read_text()[-2000:]}")
            _, views = self.latest()
            if done(views):
                return
            time.sleep(0.2)
        self.missed.append(what)

    def live(self) -> set[str]:
        return {name for name, proc in self.procs.items() if proc.poll() is None
                and not (self.workdir / f"{name}.stop").exists()}

    def member(self, name: str) -> tuple[list[str], str | None]:
        """(topic roles, instance id) of a member."""
        roles, instance_id = MEMBERS[name]
        return (roles if self.mixed else [A]), instance_id

    def sizes(self, grown: bool) -> dict[str, int]:
        """Partition counts of the topics the group subscribes to."""
        sizes = {self.topics[A]: GROWN_PARTITIONS if grown else INITIAL_PARTITIONS}
        if self.mixed:
            sizes[self.topics[B]] = B_PARTITIONS
        return sizes

    def all_live_assigned(self, grown: bool) -> Callable[[dict[str, dict[str, Any]]], bool]:
        """Every live member reported this generation and together they hold every partition."""
        def done(views: dict[str, dict[str, Any]]) -> bool:
            return set(views) == self.live() and _holds_all(views.values(), self.sizes(grown))
        return done

    def run(self) -> None:
        ensure_topics(self.bootstrap, self.sizes(grown=False))
        try:
            for name in ("m1", "m2", "m3"):
                self.start(name)
                self.wait_for(f"{name} in it", lambda views, name=name: name in views)
            self.wait_for("m1..m3", self.all_live_assigned(grown=False))
            self.stop("m2")
            self.wait_for("m1, m3", self.all_live_assigned(grown=False))
            self.start("m4")
            self.wait_for("m1, m3, m4", self.all_live_assigned(grown=False))
            admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
            try:
                self.grown_at_ms = int(time.time() * 1000)
                admin.create_partitions({self.topics[A]: NewPartitions(total_count=GROWN_PARTITIONS)})
            finally:
                admin.close()
            self.wait_for(f"{GROWN_PARTITIONS} partitions", self.all_live_assigned(grown=True))
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
        sizes = self.sizes(grown=self.grown_at_ms is not None and ts >= self.grown_at_ms)
        if not _holds_all(seen.values(), sizes):
            return None
        members = {}
        for mid in sorted(seen):
            roles, instance_id = self.member(seen[mid]["name"])
            members[mid] = {"topics": [self.topics[r] for r in roles]}
            if instance_id:
                members[mid]["instance_id"] = instance_id
        return sizes, members


def _holds_all(views: Any, sizes: dict[str, int]) -> bool:
    held = sorted((t, p) for v in views for t, ps in v["assigned"].items() for p in ps)
    return held == sorted((t, p) for t, n in sizes.items() for p in range(n))
