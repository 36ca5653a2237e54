"""The main job end to end: a multi-group history through Kafka -> serve --once -> diffs topic.

The diffs must rebuild, round by round and per strategy, exactly the assignments `assignors.assign` gives
when called along the history the way docs/events-and-diffs.md §1 describes (members in first-join order, owned = the
last round's assignment with its generation, cooperative revoke + follow-up rounds, static replacement
without a rebalance); and they must equal the plain-Python loop's output over the same log.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from pipeline_helpers import by_group, config, local_records, rebuild_rounds, run_serve_once, serve_topics, write_log

from assignors import STRATEGIES, Member, assign
from streaming.kafka.loader import load_log

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

AZ = ["az-1", "az-2", "az-3"]


def _racks(n: int) -> list[list[str]]:
    return [[AZ[p % 3], AZ[(p + 1) % 3]] for p in range(n)]


def history() -> list[dict[str, Any]]:
    """Three groups, interleaved: joins, leaves, subscription changes, partition growth, an unsubscribed
    topic, a deleted topic, a no-op rejoin, a static member restart, and replica racks (KIP-881)."""
    orders = [
        {"type": "partitions", "partitions": {"orders": 6, "payments": 3}, "partition_racks": {"orders": _racks(6)}},
        {"type": "join", "member": "c1", "topics": ["orders", "payments"], "rack": "az-1"},
        {"type": "join", "member": "c2", "topics": ["orders"], "rack": "az-2"},
        {"type": "join", "member": "c3", "topics": ["orders", "payments"], "rack": "az-3", "instance_id": "pod-3"},
        {"type": "subscribe", "member": "c2", "topics": ["orders", "payments"]},
        {"type": "partitions", "partitions": {"orders": 8}, "partition_racks": {"orders": _racks(8)}},
        {"type": "join", "member": "c4", "topics": ["orders"], "rack": "az-1"},
        {"type": "leave", "member": "c1"},
        {"type": "join", "member": "c5", "topics": ["orders", "payments"], "rack": "az-3", "instance_id": "pod-3"},
        {"type": "join", "member": "c2", "topics": ["orders", "payments"], "rack": "az-2"},  # no-op rejoin
        {"type": "subscribe", "member": "c4", "topics": ["orders", "payments"]},
        {"type": "partitions", "partitions": {"audit": 2}},  # nobody subscribes: no rebalance
        {"type": "subscribe", "member": "c5", "topics": ["orders", "audit"]},
        {"type": "delete_topic", "topic": "payments"},
        {"type": "leave", "member": "c4"},
    ]
    billing = [
        {"type": "partitions", "partitions": {"invoices": 4}},
        {"type": "join", "member": "b1", "topics": ["invoices"]},
        {"type": "join", "member": "b2", "topics": ["invoices"]},
        {"type": "join", "member": "b3", "topics": ["invoices"]},
        {"type": "leave", "member": "b2"},
        {"type": "partitions", "partitions": {"invoices": 7}},
        {"type": "join", "member": "b4", "topics": ["invoices"], "partitions": {"invoices": 9}},
    ]
    etl = [
        {"type": "partitions", "partitions": {"raw": 3, "clean": 3}},
        {"type": "join", "member": "e1", "topics": ["raw"]},
        {"type": "join", "member": "e2", "topics": ["clean"]},
        {"type": "join", "member": "e3", "topics": ["raw", "clean"]},
        {"type": "subscribe", "member": "e1", "topics": ["raw", "clean"]},
        {"type": "leave", "member": "e3"},
    ]
    streams = [("orders-app", orders), ("billing", billing), ("etl", etl)]
    events, ts = [], 1_732_200_000_000
    for i in range(max(len(s) for _, s in streams)):
        for group, evs in streams:
            if i < len(evs):
                ts += 1000
                events.append({"group": group, **evs[i], "ts": ts})
    return events


class OracleGroup:
    """A group as docs/events-and-diffs.md §1 describes it, kept with plain dicts; `assignors.assign` per round."""

    def __init__(self, strategies: tuple[str, ...]) -> None:
        self.members: list[dict[str, Any]] = []  # first-join order
        self.topics: dict[str, int] = {}  # first-learnt order; 0 = deleted
        self.racks: dict[str, list[list[str]]] = {}
        self.assignment = {s: {} for s in strategies}  # member -> [(topic, p)]
        self.member_gen = {s: {} for s in strategies}
        self.generation = dict.fromkeys(strategies, 0)

    def apply(self, ev: dict[str, Any]) -> tuple[bool, set[str]]:
        """Mutate by one event; returns (membership changed, topics whose metadata changed)."""
        changed: set[str] = set()
        membership = False
        for topic, n in ev.get("partitions", {}).items() if ev["type"] in ("partitions", "join") else ():
            if self.topics.get(topic) != n:
                self.topics[topic] = n
                changed.add(topic)
        for topic, rows in ev.get("partition_racks", {}).items():
            if self.racks.get(topic) != rows:
                self.racks[topic] = rows
                changed.add(topic)
        ids = [m["id"] for m in self.members]
        if ev["type"] == "join":
            holder = next((m for m in self.members if ev.get("instance_id") and m["instance_id"] == ev["instance_id"]),
                          None)
            if holder is not None and holder["id"] != ev["member"]:  # static restart: takes the old one's place
                old = holder["id"]
                holder["id"] = ev["member"]
                for s in self.assignment:
                    self.assignment[s][ev["member"]] = self.assignment[s].pop(old, [])
                    self.member_gen[s][ev["member"]] = self.member_gen[s].pop(old, -1)
            elif ev["member"] not in ids:
                self.members.append({"id": ev["member"], "topics": ev["topics"], "rack": ev.get("rack"),
                                     "instance_id": ev.get("instance_id")})
                membership = True
            else:
                m = self.members[ids.index(ev["member"])]
                if (m["topics"], m["rack"]) != (ev["topics"], ev.get("rack")):
                    m["topics"], m["rack"] = ev["topics"], ev.get("rack")
                    membership = True
        elif ev["type"] == "leave":
            del self.members[ids.index(ev["member"])]
            for s in self.assignment:
                self.assignment[s].pop(ev["member"], None)
            membership = True
        elif ev["type"] == "subscribe":
            m = self.members[ids.index(ev["member"])]
            if m["topics"] != ev["topics"]:
                m["topics"] = ev["topics"]
                membership = True
        elif ev["type"] == "delete_topic":
            self.topics[ev["topic"]] = 0
            self.racks.pop(ev["topic"], None)
            changed.add(ev["topic"])
        return membership, changed

    def rebalance(self, strategy: str) -> list[tuple[int, dict[str, list]]]:
        live = {t: n for t, n in self.topics.items() if n > 0}
        racks = {t: rows + [[]] * (live[t] - len(rows)) for t, rows in self.racks.items() if t in live}
        cooperative = strategy == "cooperative-sticky"
        rounds = []
        while True:
            members = {}
            for m in self.members:
                owned = [(t, p) for t, p in self.assignment[strategy].get(m["id"], []) if p < live.get(t, 0)]
                if cooperative:
                    owned = [(t, p) for t, p in owned if t in m["topics"]]
                members[m["id"]] = Member(topics=m["topics"], owned=sorted(owned),
                                          generation=self.member_gen[strategy].get(m["id"], -1),
                                          rack=m["rack"], instance_id=m["instance_id"])
            result = assign(strategy, topics=live, members=members, partition_racks=racks or None)
            self.generation[strategy] += 1
            gen = self.generation[strategy]
            self.assignment[strategy] = {m: list(ps) for m, ps in result.items()}
            self.member_gen[strategy] = dict.fromkeys(members, gen)
            rounds.append((gen, {m: sorted(ps) for m, ps in result.items() if ps}))
            withheld = any(set(mm.owned) - set(result[m]) for m, mm in members.items())
            if not cooperative or not withheld:
                return rounds


def oracle_rounds(events: list[dict[str, Any]], strategies: tuple[str, ...]) -> dict:
    groups: dict[str, OracleGroup] = {}
    rounds: dict[tuple[str, str], list] = defaultdict(list)
    for ev in events:
        g = groups.setdefault(ev["group"], OracleGroup(strategies))
        membership, changed = g.apply(ev)
        subscribed = {t for m in g.members for t in m["topics"]}
        if membership or changed & subscribed:
            for s in strategies:
                rounds[(ev["group"], s)].extend(g.rebalance(s))
    return dict(rounds)


def _tuples(rounds: dict) -> dict:
    return {k: [(gen, {m: [tuple(p) for p in ps] for m, ps in a.items()}) for gen, a in v] for k, v in rounds.items()}


def test_serve_diffs_rebuild_kafkas_assignments(spark, kafka_bootstrap, unique_topic, tmp_path: Path) -> None:
    events = history()
    log = write_log(tmp_path / "history.jsonl", events)
    cfg = config("all")
    topics = serve_topics(unique_topic)
    assert load_log(log, kafka_bootstrap, topics.events, progress=None) == len(events)

    diffs, dead = run_serve_once(spark, kafka_bootstrap, topics, tmp_path / "ckpt", cfg)

    assert dead == []
    assert {d["strategy"] for d in diffs} == set(STRATEGIES)
    expected = oracle_rounds(events, cfg.strategies)
    rebuilt = _tuples(rebuild_rounds(diffs))
    assert sorted(rebuilt) == sorted(expected)
    for key, rounds in expected.items():
        assert rebuilt[key] == rounds, f"{key}: diffs rebuild other assignments than assignors.assign"
    # some rounds really were cooperative follow-ups, and the static restart produced no round
    assert any(d["phase"] == "followup" for d in diffs)
    assert any(d["phase"] == "replace" and d["cause"].get("replaced") == "c3" for d in diffs)
    assert all(d["cause"]["source"]["topic"] == topics.events for d in diffs)

    local_diffs, local_dead = local_records(log, cfg)
    assert by_group(diffs, positions=False) == by_group(local_diffs, positions=False)
    assert local_dead == []
