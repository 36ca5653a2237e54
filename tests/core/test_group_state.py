"""The per-group state machine, without Spark.

The central check is strategy-agnostic: a small reference model written straight from docs/events-and-diffs.md §1 calls
the public `assignors.assign` along a random history, and the `changes` of `step`'s diff records,
replayed in order, must give the same assignment after every round, for every strategy.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterator

import numpy as np
import pytest

import assignors
import streaming.core.rounds as rounds
from assignors import STRATEGIES, KafkaAssignorError, Member, assign
from assignors.model import owner_of
from assignors.optimality import SMALL_ROUND
from streaming.core.config import Limits, PipelineConfig
from streaming.core.group_state import step
from streaming.core.records import OutputRecord, SourceRecord
from streaming.core.state_codec import decode

COOPERATIVE = "cooperative-sticky"


def available(strategy: str) -> str:
    try:
        assignors.get_assignor(strategy)
    except ModuleNotFoundError as exc:  # strategies land one by one; say which one is missing
        pytest.skip(f"assignor module for {strategy!r} not present yet: {exc}")
    return strategy


def rec(event: dict | bytes, line: int, ts: int | None = None) -> SourceRecord:
    value = event if isinstance(event, bytes) else json.dumps(event).encode()
    return SourceRecord(value, None, {"file": "log.jsonl", "line": line}, (0, line), ts)


def run(events: list[dict | bytes], config: PipelineConfig, state: bytes | None = None,
        group: str = "g") -> tuple[bytes | None, list[dict], list[dict]]:
    """Events one per step() call; returns (state, diff records, dead letters) as parsed JSON."""
    diffs, dead = [], []
    for i, e in enumerate(events, 1):
        state, out = step(group, state, [rec(e, i)], config, now_ms=42)
        for o in out:
            (diffs if o.kind == "diff" else dead).append(json.loads(o.value))
    return state, diffs, dead


# -- a random history generator (also used by test_local_replay) ---------------------------------------------
def random_history(seed: int, n_events: int = 120, groups: tuple[str, ...] = ("g",),
                   invalid: bool = True) -> list[dict | bytes]:
    """Valid-looking membership events with every feature (static members, rejoins of departed ids,
    racks, deletes, growth) and, if `invalid`, a sprinkling of bad ones."""
    rng = random.Random(seed)
    racks = ["az-1", "az-2", "az-3"]
    world = {g: {"topics": {}, "members": {}, "departed": [], "n": 0} for g in groups}
    events: list[dict | bytes] = []
    while len(events) < n_events:
        g = rng.choice(groups)
        w = world[g]
        topics, members = w["topics"], w["members"]
        roll = rng.random()
        if invalid and roll < 0.06:
            events.append(rng.choice([
                b"garbage", b"[1]", json.dumps({"group": g, "type": "leave", "member": "nobody"}).encode(),
                json.dumps({"group": g, "type": "nope"}).encode(),
                json.dumps({"group": g, "type": "partitions", "partitions": {"t0": 0}}).encode(),
                json.dumps({"group": g, "type": "delete_topic", "topic": "never"}).encode(),
                json.dumps({"group": g, "type": "subscribe", "member": "nobody", "topics": []}).encode(),
            ]))
            if topics:
                t = rng.choice(list(topics))
                if topics[t] > 1:
                    events.append({"group": g, "type": "partitions", "partitions": {t: topics[t] - 1}})
            continue
        if not topics or roll < 0.14:
            t = f"t{rng.randrange(5)}"
            count = max(topics.get(t, 0), 1) + rng.randrange(0, 5)
            event: dict = {"group": g, "type": "partitions", "partitions": {t: count}}
            if rng.random() < 0.3:
                event["partition_racks"] = {t: [rng.sample(racks, 2) for _ in range(rng.randrange(count + 1))]}
            topics[t] = count
            events.append(event)
            continue
        if roll < 0.18 and len(topics) > 1:
            t = rng.choice(list(topics))
            del topics[t]
            events.append({"group": g, "type": "delete_topic", "topic": t})
            continue
        subscription = rng.sample(sorted({*topics, "t9"}), rng.randrange(1, 3))
        if not members or roll < 0.45:
            if w["departed"] and rng.random() < 0.3:
                mid = w["departed"].pop(rng.randrange(len(w["departed"])))
                instance = None
            else:
                w["n"] += 1
                mid = f"{g}-m{w['n']}"
                instance = f"static-{w['n']}" if rng.random() < 0.3 else None
            rack = rng.choice([None, *racks])
            members[mid] = instance
            events.append({"group": g, "type": "join", "member": mid, "topics": subscription, "rack": rack,
                           "instance_id": instance, "ts": 1000 + len(events)})
            continue
        mid = rng.choice(list(members))
        if roll < 0.55 and members[mid] is not None:  # static restart: new member id, same instance id
            w["n"] += 1
            new = f"{g}-m{w['n']}"
            members[new] = members.pop(mid)
            keep = rng.random() < 0.7
            events.append({"group": g, "type": "join", "member": new, "instance_id": members[new],
                           "topics": subscription if not keep else None, "same_topics_as": mid if keep else None})
        elif roll < 0.62:
            events.append({"group": g, "type": "join", "member": mid, "instance_id": members[mid],
                           "topics": subscription, "rack": rng.choice([None, *racks])})
        elif roll < 0.8:
            del members[mid]
            w["departed"].append(mid)
            events.append({"group": g, "type": "leave", "member": mid})
        else:
            events.append({"group": g, "type": "subscribe", "member": mid, "topics": subscription})
    return _resolve_same_topics(events)


def _resolve_same_topics(events: list[dict | bytes]) -> list[dict | bytes]:
    """Static restarts that keep their subscription copy it from the member they replace."""
    subs: dict[tuple[str, str], list[str]] = {}
    out: list[dict | bytes] = []
    for e in events:
        if isinstance(e, dict):
            e = dict(e)
            same = e.pop("same_topics_as", None)
            if e.get("type") == "join" and e.get("topics") is None:
                e["topics"] = subs.get((e["group"], same), [])
            if e.get("type") in ("join", "subscribe"):
                subs[(e["group"], e["member"])] = e["topics"]
        out.append(e)
    return out


# -- the reference model -----------------------------------------------------------------------------------
class Reference:
    """Contract §2 in the most direct form: dicts in, `assignors.assign` per round."""

    def __init__(self, strategies: tuple[str, ...]) -> None:
        self.strategies = strategies
        self.topics: dict[str, int] = {}
        self.racks: dict[str, list[list[str]]] = {}
        self.members: dict[str, dict] = {}
        self.assignment = {s: {} for s in strategies}
        self.gen = dict.fromkeys(strategies, 0)
        self.member_gen: dict[str, dict[str, int]] = {s: {} for s in strategies}
        self.departed: dict[str, dict[str, tuple[list, int]]] = {s: {} for s in strategies}
        self.rounds: dict[str, list[tuple[str, int, dict]]] = {s: [] for s in strategies}

    def _rack_sets(self, t: str) -> list[frozenset]:
        rows = self.racks.get(t, [])
        return [frozenset(r) for r in rows] + [frozenset()] * (self.topics.get(t, 0) - len(rows))

    def apply(self, e: dict) -> None:
        kind, changed_topics, membership = e["type"], set(), False
        before = {t: (n, self._rack_sets(t)) for t, n in self.topics.items()}
        if kind in ("partitions", "join") and "partitions" in e:
            for t, n in e["partitions"].items():
                self.topics[t] = n
            for t, rows in e.get("partition_racks", {}).items():
                self.racks[t] = [[r for r in row if r is not None] for row in rows]
        if kind == "delete_topic":
            self.topics[e["topic"]] = 0
            self.racks.pop(e["topic"], None)
        changed_topics = {t for t in self.topics if before.get(t, (0, []))
                          != (self.topics[t], self._rack_sets(t))}
        replaced = None
        if kind == "join":
            topics = list(dict.fromkeys(e["topics"]))
            rack = e.get("rack") or None
            holder = next((m for m, v in self.members.items() if e.get("instance_id") is not None
                           and v["instance_id"] == e.get("instance_id")), None)
            if holder is not None and holder != e["member"]:
                replaced = holder
                self.members = {(e["member"] if m == holder else m): v for m, v in self.members.items()}
                for s in self.strategies:
                    a = self.assignment[s]
                    self.assignment[s] = {(e["member"] if m == holder else m): v for m, v in a.items()}
                    self.member_gen[s][e["member"]] = self.member_gen[s].pop(holder)
                    self.departed[s].pop(e["member"], None)
                    self.rounds[s].append(("replace", self.gen[s], dict(self.assignment[s])))
            m = self.members.get(e["member"])
            if m is None:
                self.members[e["member"]] = {"topics": topics, "rack": rack, "instance_id": e.get("instance_id")}
                for s in self.strategies:
                    owned, g = self.departed[s].pop(e["member"], ([], -1))
                    self.assignment[s][e["member"]] = []
                    self.member_gen[s][e["member"]] = g
                    self.departed_owned = getattr(self, "departed_owned", {})
                    self.departed_owned[(s, e["member"])] = owned
                membership = True
            elif m["topics"] != topics or m["rack"] != rack:
                m["topics"], m["rack"] = topics, rack
                membership = True
        elif kind == "leave":
            del self.members[e["member"]]
            for s in self.strategies:
                self.departed[s][e["member"]] = (self.assignment[s].pop(e["member"]),
                                                 self.member_gen[s].pop(e["member"]))
            membership = True
        elif kind == "subscribe":
            topics = list(dict.fromkeys(e["topics"]))
            if self.members[e["member"]]["topics"] != topics:
                self.members[e["member"]]["topics"] = topics
                membership = True
        subscribed = {t for m in self.members.values() for t in m["topics"]}
        if membership or changed_topics & subscribed:
            for s in self.strategies:
                self._rebalance(s)
        self.departed_owned = {}
        del replaced

    def _rebalance(self, s: str) -> None:
        first = True
        rejoin: dict[str, tuple[list, int]] = {}  # members that rejected their last assignment
        for _ in range(1 + Limits().max_followup_rounds):
            members = {}
            for mid, m in self.members.items():
                owned = self.assignment[s][mid]
                carried = getattr(self, "departed_owned", {}).get((s, mid))
                if first and carried is not None and not owned:
                    owned = carried
                if s == COOPERATIVE:
                    owned = [tp for tp in owned if tp[0] in m["topics"]]
                owned, gen = rejoin.get(mid, (owned, self.member_gen[s][mid]))
                members[mid] = Member(m["topics"], owned, gen, m["rack"], m["instance_id"])
            topics = {t: n for t, n in self.topics.items() if n > 0}
            racks = {t: rows for t, rows in self.racks.items() if t in topics}
            phase = ("revoke" if first else "followup") if s == COOPERATIVE else (
                "incremental" if s in ("uniform", "server-range") else "eager")
            try:
                result = assign(s, topics, members, racks or None)
            except KafkaAssignorError:  # Kafka's leader fails: a generation in which nothing changes
                self.gen[s] += 1
                self.rounds[s].append((phase, self.gen[s], dict(self.assignment[s])))
                return
            self.gen[s] += 1
            self.assignment[s] = result
            for mid in self.members:
                self.member_gen[s][mid] = self.gen[s]
            self.rounds[s].append((phase, self.gen[s], dict(result)))
            first = False
            # a consumer given a topic it does not subscribe to rejects the assignment and rejoins with what
            # it reported (eager: its old userData generation; cooperative: the current generation)
            rejecting = [mid for mid in members if any(t not in members[mid].topics for t, _ in result[mid])]
            rejoin = {mid: (list(members[mid].owned), self.gen[s] if s == COOPERATIVE else members[mid].generation)
                      for mid in rejecting}
            if not rejecting and (s != COOPERATIVE or all(set(m.owned) <= set(result[mid])
                                                          for mid, m in members.items())):
                return


def replay_changes(diffs: list[dict], strategy: str) -> Iterator[tuple[str, int, dict]]:
    """Per round of `strategy`: (phase, generation, assignment rebuilt from `changes`), parts merged."""
    held: dict[str, set] = defaultdict(set)
    for d in diffs:
        if d["strategy"] != strategy:
            continue
        for member, c in d["changes"].items():
            for t, ps in c["revoked"].items():
                for p in ps:
                    assert (t, p) in held[member], (member, t, p)
                    held[member].discard((t, p))
            for t, ps in c["assigned"].items():
                for p in ps:
                    assert (t, p) not in held[member]
                    held[member].add((t, p))
        if d.get("part", 1) == d.get("parts", 1):
            yield d["phase"], d["generation"], {m: set(v) for m, v in held.items() if v}


def reference_rounds(events: list[dict | bytes], strategies: tuple[str, ...], dead: list[dict]) -> Reference:
    """The reference model over the events `step` accepted (its dead letters are checked separately)."""
    rejected = {d["source"]["line"] for d in dead}
    ref = Reference(strategies)
    for i, e in enumerate(events, 1):
        if i not in rejected:
            assert isinstance(e, dict)
            ref.apply(e)
    return ref


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_changes_replay_to_the_library_result_along_a_history(strategy: str, seed: int) -> None:
    config = PipelineConfig(strategies=(available(strategy),))
    events = random_history(seed)
    _, diffs, dead = run(events, config)
    ref = reference_rounds(events, config.strategies, dead)
    got = list(replay_changes(diffs, strategy))
    want = [(phase, gen, {m: set(v) for m, v in a.items() if v}) for phase, gen, a in ref.rounds[strategy]]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"round {i}"
    assert len(dead) >= 5  # the history's invalid events, each a dead letter
    assert all(isinstance(events[d["source"]["line"] - 1], bytes) or "shrink" in d["reason"] for d in dead)
    assert {d["strategy"] for d in diffs} == {strategy}


# -- targeted semantics ---------------------------------------------------------------------------------------
def join(member: str, topics: list[str], **extra: object) -> dict:
    return {"group": "g", "type": "join", "member": member, "topics": topics, **extra}


def parts(counts: dict[str, int], **extra: object) -> dict:
    return {"group": "g", "type": "partitions", "partitions": counts, **extra}


RANGE = PipelineConfig(strategies=("range",))


def test_diff_record_fields_and_metrics() -> None:
    _, diffs, dead = run([parts({"orders": 6, "payments": 3}), join("c-1", ["orders", "payments"]),
                          join("c-2", ["orders"], ts=1_700_000_000_000)], RANGE)
    assert not dead
    d = diffs[-1]
    assert list(d) == ["group", "strategy", "generation", "phase", "cause", "changes", "members", "partitions",
                       "assigned", "revoked", "unassigned", "paused", "load_min", "load_max", "moves",
                       "min_moves", "stopped_ms", "event_ts", "emitted_ts"]
    assert d["cause"] == {"type": "join", "member": "c-2", "source": {"file": "log.jsonl", "line": 3}}
    assert d["changes"] == {"c-1": {"assigned": {}, "revoked": {"orders": [3, 4, 5]}},
                            "c-2": {"assigned": {"orders": [3, 4, 5]}, "revoked": {}}}
    assert (d["generation"], d["phase"], d["members"], d["partitions"]) == (2, "eager", 2, 9)
    assert (d["assigned"], d["revoked"], d["unassigned"], d["paused"], d["moves"], d["min_moves"]) == (3, 3, 0, 9, 3, 3)
    assert (d["load_min"], d["load_max"], d["event_ts"], d["emitted_ts"]) == (3, 6, 1_700_000_000_000, 42)
    assert d["stopped_ms"] == 9 * 3_000  # every paused partition for the default rebalance_ms


def test_event_ts_falls_back_to_the_record_timestamp() -> None:
    _, out = step("g", None, [rec(parts({"t": 2}), 1), rec(join("a", ["t"]), 2, ts=777)], RANGE, 1)
    assert json.loads(out[-1].value)["event_ts"] == 777


def test_only_real_changes_rebalance() -> None:
    state, _, _ = run([parts({"t": 4}), join("a", ["t"]), join("b", ["t"])], RANGE)
    # a rejoin with the same topics and rack, metadata of an unsubscribed topic, an unchanged subscription
    for e in (join("a", ["t"]), parts({"other": 3}), {"group": "g", "type": "subscribe", "member": "b",
                                                        "topics": ["t"]}, parts({"t": 4})):
        _, more, dead = run([e], RANGE, state)
        assert (more, dead) == ([], [])
    for e in (join("a", ["t"], rack="az-1"), parts({"t": 5}), {"group": "g", "type": "subscribe", "member": "b",
                                                               "topics": ["t", "u"]}):
        _, more, _ = run([e], RANGE, state)
        assert [d["generation"] for d in more] == [3]


class Recorder:
    """Wraps the library call to see exactly what a rebalance passes in (every strategy given the members'
    claims, which `OWNERSHIP_BLIND` ones otherwise go without)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, assignors.GroupSpec]] = []
        monkeypatch.setattr(rounds, "OWNERSHIP_BLIND", frozenset())
        real = rounds.assign_owners

        def spy(strategy: str, spec: assignors.GroupSpec) -> np.ndarray:
            self.calls.append((strategy, spec))
            return real(strategy, spec)

        monkeypatch.setattr(rounds, "assign_owners", spy)

    def members(self, i: int = -1) -> dict[str, tuple[list, int]]:
        spec = self.calls[i][1]
        result = spec.to_result(spec.owned)
        return {m: (result[m], int(g)) for m, g in zip(spec.member_ids, spec.generations, strict=True)}


def test_rebalance_inputs_member_order_topic_order_and_owned(monkeypatch: pytest.MonkeyPatch) -> None:
    rec_ = Recorder(monkeypatch)
    run([parts({"zeta": 2}), join("b", ["zeta", "alpha"]), parts({"alpha": 2}), join("a", ["alpha"])],
                      RANGE)
    spec = rec_.calls[-1][1]
    assert spec.member_ids == ["b", "a"]  # first-join order, not sorted
    assert spec.topic_names == ["zeta", "alpha"]  # learnt order
    assert rec_.members() == {"b": ([("alpha", 0), ("alpha", 1), ("zeta", 0), ("zeta", 1)], 2), "a": ([], -1)}


def test_departed_member_carries_owned_and_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    rec_ = Recorder(monkeypatch)
    state, _, _ = run([parts({"t": 4}), join("a", ["t"]), join("b", ["t"]), {"group": "g", "type": "leave",
                                                                              "member": "b"},
                       join("c", ["t"]), join("b", ["t"])], RANGE)
    assert rec_.members() == {"a": ([("t", 0), ("t", 1)], 4), "c": ([("t", 2), ("t", 3)], 4),
                              "b": ([("t", 2), ("t", 3)], 2)}  # b's round-2 assignment: a KIP-341 conflict
    assert "b" not in decode(state).departed


def test_departed_memory_is_bounded() -> None:
    config = PipelineConfig(strategies=("range",), limits=Limits(max_departed_members=2))
    events: list[dict | bytes] = [parts({"t": 8})]
    for m in "abcd":
        events.append(join(m, ["t"]))
    for m in "abcd":
        events.append({"group": "g", "type": "leave", "member": m})
    state, _, _ = run(events, config)
    assert list(decode(state).departed) == ["c", "d"]


def test_static_replacement_takes_the_place_without_a_rebalance(monkeypatch: pytest.MonkeyPatch) -> None:
    rec_ = Recorder(monkeypatch)
    config = PipelineConfig(strategies=("range", "roundrobin"))
    state, diffs, _ = run([parts({"t": 6}), join("a", ["t"], instance_id="i-a"), join("b", ["t"]),
                           join("a2", ["t"], instance_id="i-a")], config)
    assert [d["phase"] for d in diffs[-2:]] == ["replace", "replace"]
    d = diffs[-2]
    assert d["generation"] == 2 and d["cause"]["replaced"] == "a" and d["cause"]["member"] == "a2"
    assert d["changes"] == {"a2": {"assigned": {"t": [0, 1, 2]}, "revoked": {}},
                            "a": {"assigned": {}, "revoked": {"t": [0, 1, 2]}}}
    assert (d["paused"], d["moves"]) == (0, 0)
    assert [m.id for m in decode(state).members] == ["a2", "b"]
    calls = len(rec_.calls)
    run([join("c", ["t"])], config, state)
    assert rec_.members() == {"a2": ([("t", 0), ("t", 2), ("t", 4)], 2), "b": ([("t", 1), ("t", 3), ("t", 5)], 2),
                              "c": ([], -1)}  # roundrobin's previous round, carried over to a2
    assert len(rec_.calls) == calls + 2
    # a replacement that also changes the subscription is followed by a rebalance
    _, diffs3, _ = run([join("a3", ["t", "u"], instance_id="i-a")], config, state)
    assert [d["phase"] for d in diffs3] == ["replace", "eager", "replace", "eager"]


def test_cooperative_owned_leaves_out_unsubscribed_topics(monkeypatch: pytest.MonkeyPatch) -> None:
    rec_ = Recorder(monkeypatch)
    monkeypatch.setattr(rounds, "COOPERATIVE", frozenset({"range"}))  # the owned filter is the strategy's protocol
    _, diffs, _ = run([parts({"t": 2, "u": 2}), join("a", ["t", "u"]),
                           {"group": "g", "type": "subscribe", "member": "a", "topics": ["t"]}], RANGE)
    assert rec_.members() == {"a": ([("t", 0), ("t", 1)], 1)}
    assert diffs[-1]["phase"] == "revoke" and diffs[-1]["paused"] == 2 == diffs[-1]["revoked"]


def test_followup_rounds_until_nothing_withheld_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rounds, "COOPERATIVE", frozenset({"range"}))
    monkeypatch.setattr(rounds, "OWNERSHIP_BLIND", frozenset())  # the assignor below reads `owned`
    state, diffs, _ = run([parts({"t": 4}), join("a", ["t"])], RANGE)
    # an assignor that hands every member's partitions to the next member: something is always withheld
    monkeypatch.setattr(rounds, "assign_owners", lambda strategy, spec: owner_of(
        [spec.owned[i - 1] for i in range(len(spec.owned))], spec.num_partitions))
    _, diffs, _ = run([join("b", ["t"])], RANGE, state)
    assert [d["phase"] for d in diffs] == ["revoke"] + ["followup"] * 4
    assert [d.get("unconverged") for d in diffs] == [None] * 4 + [True]
    assert diffs[0]["changes"] == {"a": {"assigned": {}, "revoked": {"t": [0, 1, 2, 3]}},
                                   "b": {"assigned": {"t": [0, 1, 2, 3]}, "revoked": {}}}
    assert diffs[0]["moves"] == 4 and diffs[0]["unassigned"] == 0


def test_ownership_blind_rounds_match_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strategies that read no claims run without them: the same records and state as when every round
    builds them (joins, leaves, a return, static replacement, partitions added, a topic deleted)."""
    config = PipelineConfig(strategies=tuple(sorted(assignors.OWNERSHIP_BLIND)))
    events: list[dict | bytes] = [
        parts({"t": 6, "u": 3}), join("a", ["t"], instance_id="i-a"), join("b", ["t", "u"]), join("c", ["u"]),
        {"group": "g", "type": "leave", "member": "b"}, parts({"t": 8, "u": 3}), join("b", ["t", "u"]),
        join("a2", ["t", "u"], instance_id="i-a"), {"group": "g", "type": "delete_topic", "topic": "u"},
        {"group": "g", "type": "subscribe", "member": "c", "topics": ["t"]}]
    blind = run(events, config)
    monkeypatch.setattr(rounds, "OWNERSHIP_BLIND", frozenset())
    assert run(events, config) == blind


def test_cooperative_sticky_follow_up_assigns_what_was_withheld() -> None:
    config = PipelineConfig(strategies=(available(COOPERATIVE),))
    _, diffs, _ = run([parts({"t": 6}), join("a", ["t"]), join("b", ["t"])], config)
    assert [d["phase"] for d in diffs] == ["revoke", "revoke", "followup"]
    revoke, follow = diffs[1], diffs[2]
    assert revoke["changes"] == {"a": {"assigned": {}, "revoked": {"t": [3, 4, 5]}}}
    assert (revoke["paused"], revoke["unassigned"], revoke["moves"]) == (3, 3, 3)
    assert follow["changes"] == {"b": {"assigned": {"t": [3, 4, 5]}, "revoked": {}}}
    assert (follow["generation"], follow["paused"], follow["moves"]) == (3, 0, 0)


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        ([{"group": "g", "type": "leave", "member": "x"}], "leave of unknown member 'x'"),
        ([{"group": "g", "type": "subscribe", "member": "x", "topics": []}], "subscribe of unknown member 'x'"),
        ([parts({"t": 3})], "topic cannot shrink from 4 to 3"),
        ([{"group": "g", "type": "delete_topic", "topic": "nope"}], "delete_topic of unknown topic 'nope'"),
        ([parts({"t": 4}, partition_racks={"t": [["r"]] * 5})], "5 entries for 4 partitions"),
        ([parts({"t": 4}, partition_racks={"u": [["r"]]})], "topic has no partition count"),
        ([join("z", ["t"], instance_id="i-a")], "held by member 'a' while member 'z' is in the group"),
        ([join("a", ["t"], instance_id="other")], "member 'a' has instance_id 'i-a'; a rejoin cannot change it to "
                                                  "'other': leave, then join with the new one"),
        ([join("z", ["t"], instance_id="i-z")], "member 'z' joined as a dynamic member (no instance_id); a rejoin "
                                                "cannot add instance_id 'i-z': leave, then join with it"),
        ([join("a", ["t"])], "member 'a' is static (instance_id 'i-a'); a rejoin without instance_id cannot"),
        ([join("n", ["t"])], "limit (max_members_per_group)"),
        ([parts({"x": 1, "y": 1})], "max_topics_per_group"),
        ([parts({"x": 97})], "above the limit of 100"),
        ([parts({"t": 4}, partition_racks={"t": [["r1", "r2"], ["r3"]]})], "more than 2 distinct racks"),
        ([{"group": "h", "type": "leave", "member": "a"}], "event group 'h' differs from the record's group 'g'"),
        ([b"\xff\x00"], "not UTF-8"),
    ],
)
def test_dead_letters_change_nothing(events: list[dict | bytes], reason: str) -> None:
    limits = Limits(max_members_per_group=3, max_topics_per_group=2, max_partitions_per_group=100,
                    max_racks_per_group=2)
    config = PipelineConfig(strategies=("range",), limits=limits)
    state, _, _ = run([parts({"t": 4}), join("a", ["t"], instance_id="i-a"), join("z", ["t"]), join("y", ["t"])],
                      config)
    after, diffs, dead = run(events, config, state)
    assert after == state and diffs == []
    assert len(dead) == 1 and reason in dead[0]["reason"], dead
    d = dead[0]
    assert d["source"] == {"file": "log.jsonl", "line": 1} and d["emitted_ts"] == 42
    if isinstance(events[0], dict):
        assert json.loads(d["original"]) == events[0] and d["group"] == events[0]["group"]
    else:
        assert "original_base64" in d and d["group"] is None


def test_dead_letter_lane_stores_nothing() -> None:
    state, out = step("", None, [rec(b"junk", 2), rec(join("a", ["t"]), 1)], RANGE, 5)
    assert state is None
    assert [o.order for o in out] == [(0, 1, 0), (0, 2, 0)]
    assert [json.loads(o.value)["reason"] for o in out] == ["record was routed without a group id",
                                                            "invalid JSON: Expecting value: line 1 column 1 (char 0)"]
    assert {o.key for o in out} == {""}


def test_oversized_original_is_cut_to_fit() -> None:
    config = PipelineConfig(strategies=("range",), limits=Limits(max_record_bytes=5_000, max_event_bytes=100_000))
    big = json.dumps({"group": "g", "type": "leave", "member": "x", "pad": "é" * 20_000}).encode()
    _, out = step("g", None, [rec(big, 1)], config, 0)
    d = json.loads(out[0].value)
    assert len(out[0].value) <= 5_000 and d["truncated"] is True and d["original_bytes"] == len(big)
    assert big.decode().startswith(d["original"])


def test_internal_error_is_a_dead_letter_and_keeps_state(monkeypatch: pytest.MonkeyPatch) -> None:
    state, _, _ = run([parts({"t": 4}), join("a", ["t"])], RANGE)

    def boom(strategy: str, spec: object) -> list:
        raise RuntimeError("bug")

    monkeypatch.setattr(rounds, "assign_owners", boom)
    after, diffs, dead = run([join("b", ["t"])], RANGE, state)
    assert after == state and diffs == []
    assert dead[0]["reason"] == "internal error: RuntimeError: bug"


def test_big_diffs_are_split_into_parts() -> None:
    limits = Limits(max_record_bytes=4_096)
    config = PipelineConfig(strategies=("roundrobin",), limits=limits)
    members = [f"member-{i:03d}-" + "x" * 40 for i in range(30)]
    events: list[dict | bytes] = [parts({"big-topic": 3_000, "other": 500})]
    events += [join(m, ["big-topic", "other"]) for m in members[:1]]
    events += [join(m, ["big-topic", "other"]) for m in members[1:]]
    _, diffs, _ = run(events, config)
    split = [d for d in diffs if "parts" in d]
    assert split, "expected split records"
    for d in diffs:
        assert len(json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()) <= 4_096
    # every part repeats the metrics; parts of one round number 1..n; changes merge back to the whole
    first_round = [d for d in diffs if d["generation"] == 1]
    assert [d["part"] for d in first_round] == list(range(1, len(first_round) + 1))
    assert all(d["parts"] == len(first_round) and d["assigned"] == 3_500 for d in first_round)
    assigned = [(t, p) for d in first_round for t, ps in d["changes"][members[0]]["assigned"].items() for p in ps]
    assert sorted(assigned) == sorted([("big-topic", p) for p in range(3_000)] + [("other", p) for p in range(500)])
    final = list(replay_changes(diffs, "roundrobin"))[-1][2]
    assert sum(len(v) for v in final.values()) == 3_500


def test_state_only_changes_when_the_group_does() -> None:
    state, _, _ = run([parts({"t": 4}), join("a", ["t"])], RANGE)
    after, out = step("g", state, [rec(join("a", ["t"]), 1)], RANGE, 0)
    assert after is state and out == []
    assert step("g", state, [], RANGE, 0) == (state, [])  # e.g. a call for a timed-out group


def test_new_strategy_in_config_starts_fresh() -> None:
    state, _, _ = run([parts({"t": 4}), join("a", ["t"])], RANGE)
    both = PipelineConfig(strategies=("range", "roundrobin"))
    after, diffs, _ = run([join("b", ["t"])], both, state)
    assert [(d["strategy"], d["generation"]) for d in diffs] == [("range", 2), ("roundrobin", 1)]
    assert list(decode(after).strategies) == ["range", "roundrobin"]


def test_output_order_is_source_order_then_sequence() -> None:
    config = PipelineConfig(strategies=("range", "roundrobin"))
    records = [rec(join("a", ["t"]), 3), rec(parts({"t": 2}), 1), rec(b"x", 2)]
    _, out = step("g", None, records, config, 0)
    assert [o.order for o in out] == [(0, 2, 0), (0, 3, 0), (0, 3, 1)]
    assert [o.kind for o in out] == ["dead-letter", "diff", "diff"]
    assert all(isinstance(o, OutputRecord) and o.key == "g" for o in out)


def test_partition_racks_reach_the_assignors_and_trigger_rebalances(monkeypatch: pytest.MonkeyPatch) -> None:
    rec_ = Recorder(monkeypatch)
    state, _, _ = run([parts({"t": 3}, partition_racks={"t": [["az-1", "az-2"], ["az-2", None]]}),
                       join("a", ["t"], rack="az-1")], RANGE)
    spec = rec_.calls[-1][1]
    assert spec.rack_names == ["az-1", "az-2"]
    assert spec.partition_rack_bits.tolist() == [0b11, 0b10, 0]  # partition 2: no rack information
    _, diffs, _ = run([parts({"t": 3}, partition_racks={"t": [["az-1", "az-2"], ["az-2"]]})], RANGE, state)
    assert diffs == []  # same racks (a null replica names no rack)
    _, diffs, _ = run([parts({"t": 3}, partition_racks={"t": [["az-2"]]})], RANGE, state)
    assert [d["cause"]["type"] for d in diffs] == ["partitions"]
    assert rec_.calls[-1][1].partition_rack_bits.tolist() == [0b10, 0, 0]  # the list replaces the topic's racks


def test_deleted_topic_keeps_its_place_when_recreated(monkeypatch: pytest.MonkeyPatch) -> None:
    rec_ = Recorder(monkeypatch)
    state, diffs, _ = run([parts({"a": 2, "b": 2}), join("m", ["a", "b"]),
                           {"group": "g", "type": "delete_topic", "topic": "a"}], RANGE)
    assert diffs[-1]["changes"] == {"m": {"assigned": {}, "revoked": {"a": [0, 1]}}}
    assert rec_.calls[-1][1].topic_names == ["b"]
    _, diffs, _ = run([parts({"a": 1})], RANGE, state)  # recreated smaller: allowed, first-learnt place kept
    assert rec_.calls[-1][1].topic_names == ["a", "b"]
    assert diffs[-1]["changes"] == {"m": {"assigned": {"a": [0]}, "revoked": {}}}


# -- Kafka's assignor errors, member weights --------------------------------------------------------------------
NULL_POINTER_HISTORY = [  # found by random histories: g-m1 leaves and rejoins for a topic that does not exist yet
    {"group": "g", "type": "partitions", "partitions": {"t0": 3}, "partition_racks": {"t0": [["az-3", "az-1"]]}},
    join("g-m7", ["t0", "t3"], instance_id="static-7"),
    join("g-m1", ["t0"], rack="az-2"),
    join("g-m10", ["t1", "t0"], rack="az-3"),
    parts({"t0": 11}),
    {"group": "g", "type": "leave", "member": "g-m1"},
    join("g-m1", ["t9"], rack="az-3"),
]


def test_kafka_assignor_error_gives_an_error_record_and_keeps_the_assignment() -> None:
    config = PipelineConfig(strategies=("sticky", COOPERATIVE))
    before, _, _ = run(NULL_POINTER_HISTORY[:-1], config)
    after, diffs, dead = run(NULL_POINTER_HISTORY[-1:], config, before)
    assert not dead
    failed = next(d for d in diffs if d["strategy"] == "sticky")
    assert failed["error"]["exception"] == "java.lang.NullPointerException"
    assert "'g-m1'" in failed["error"]["detail"] and failed["changes"] == {}
    assert failed["generation"] == decode(before).strategies["sticky"].generation + 1
    assert "error" not in next(d for d in diffs if d["strategy"] == COOPERATIVE)  # its owned lacks the topic
    old, new = decode(before).strategies["sticky"], decode(after).strategies["sticky"]
    assert new.generation == old.generation + 1  # the failed round's generation, nothing assigned
    # the previous assignment stays (the rejoining member has nothing; nobody else changed)
    names = {i: m.id for i, m in enumerate(decode(after).members)}
    old_names = {i: m.id for i, m in enumerate(decode(before).members)}
    assert [names.get(o) for o in new.owner.tolist()] == [old_names.get(o) for o in old.owner.tolist()]


def test_weight_on_join_reaches_weighted_sticky_and_a_new_weight_rebalances() -> None:
    config = PipelineConfig(strategies=("weighted-sticky",))
    events = [parts({"t": 8}), join("big", ["t"], weight=3), join("small", ["t"]), join("big", ["t"], weight=1)]
    state, diffs, dead = run(events, config)
    assert not dead
    loads = [sorted(len(v) for v in a.values()) for _, _, a in replay_changes(diffs, "weighted-sticky")]
    assert loads == [[8], [2, 6], [4, 4]]
    assert [m.weight for m in decode(state).members] == [1.0, 1.0]


@pytest.mark.parametrize("weight", [0, -2, "3", True, [1]])
def test_a_bad_weight_is_a_dead_letter(weight: object) -> None:
    _, diffs, dead = run([parts({"t": 2}), join("a", ["t"], weight=weight)], PipelineConfig(strategies=("sticky",)))
    assert not diffs and len(dead) == 1 and "field 'weight'" in dead[0]["reason"]


def test_a_member_given_a_topic_it_does_not_subscribe_to_rejoins() -> None:
    # g-m1 owned t1 partitions, left, and rejoins for t9 and t0: Kafka's sticky engine hands t1-2 back
    # to it (its prevAssignment), its consumer rejects that and rejoins; with its old userData every round
    # ends the same way, a rebalance storm the follow-up cap cuts short
    events = [join("g-m1", ["t1"]), join("g-m4", ["t1"]), parts({"t1": 4}), join("g-m13", ["t1", "t2"]),
              parts({"t0": 4}), join("g-m23", ["t9", "t0"]), join("g-m17", ["t0"]),
              {"group": "g", "type": "leave", "member": "g-m1"}, join("g-m1", ["t9", "t0"])]
    config = PipelineConfig(strategies=("sticky",))
    before, _, _ = run(events[:-1], config)
    _, diffs, dead = run(events[-1:], config, before)
    assert not dead
    first, *rejoins = diffs
    assert first["cause"]["type"] == "join" and first["changes"]["g-m1"]["assigned"] == {"t1": [2]}
    assert len(rejoins) == Limits().max_followup_rounds and rejoins[-1]["unconverged"] is True
    for d in rejoins:
        assert d["cause"]["type"] == "rejoin" and d["cause"]["members"] == ["g-m1"]
        assert "t1" in d["cause"]["reason"] and d["cause"]["source"] == first["cause"]["source"]


@pytest.mark.parametrize("partitions", [40, 4_000])  # a small round's list loop and a big round's numpy test
def test_withheld_means_some_member_lost_a_partition_it_claimed(partitions: int) -> None:
    rng = np.random.default_rng(partitions)
    for _ in range(200):
        members = int(rng.integers(1, 6))
        new_owner = rng.integers(-1, members, partitions).astype(np.int32)
        owned = [np.flatnonzero(new_owner == m) for m in range(members)]  # everybody keeps what they claim
        if rng.random() < 0.3:
            owned = [ids[:0] for ids in owned]
        lost = rng.random() < 0.5 and any(ids.size for ids in owned)
        if lost:  # one claimed partition goes to nobody or to another member
            m = next(m for m, ids in enumerate(owned) if ids.size)
            new_owner[int(rng.choice(owned[m]))] = -1 if m + 1 == members else m + 1
        expected = any(int(new_owner[p]) != m for m, ids in enumerate(owned) for p in ids.tolist())
        claims = [ids.tolist() for ids in owned] if partitions <= SMALL_ROUND else owned  # as `_claims` gives them
        assert rounds._withheld(claims, new_owner) is expected
        assert expected == lost
