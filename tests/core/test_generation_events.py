"""`generation` and `delete_group` events (docs/events-and-diffs.md §1) in the state machine: validation,
membership set at once, one rebalance per strategy, the `observed` pseudo-strategy, gaps, group deletion."""

from __future__ import annotations

import json

from assignors import Member, assign
from streaming.core.config import Limits, PipelineConfig
from streaming.core.group_state import step
from streaming.core.records import CONFORMANCE, DEAD_LETTER, DIFF, KINDS, SourceRecord
from streaming.core.state_codec import decode

CONFIG = PipelineConfig(("sticky", "cooperative-sticky"), Limits())


def outputs(events: list[dict], state: bytes | None = None) -> tuple[bytes | None, dict[str, list[dict]]]:
    """The events one at a time through `step`: the state, and the records of each kind."""
    out: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    for i, e in enumerate(events, 1):
        rec = SourceRecord(json.dumps(e).encode(), None, {"file": "log", "line": i}, (0, i), 1000 + i)
        state, emitted = step("g", state, [rec], CONFIG, now_ms=42)
        for o in emitted:
            out[o.kind].append(json.loads(o.value))
    return state, out


def run(events: list[dict], state: bytes | None = None) -> tuple[bytes | None, list[dict], list[dict]]:
    state, out = outputs(events, state)
    return state, out[DIFF], out[DEAD_LETTER]


def gen(n: int, members: dict, protocol: str | None = "range") -> dict:
    return {"group": "g", "type": "generation", "generation": n, "protocol": protocol, "members": members}


def m(assigned: dict | None = None, topics: tuple[str, ...] = ("t",), **extra) -> dict:
    out = {"topics": list(topics), **extra}
    if assigned is not None:
        out["assigned"] = assigned
    return out


PARTS = {"group": "g", "type": "partitions", "partitions": {"t": 4}}


def replay_changes(diffs: list[dict], strategy: str) -> dict[str, set]:
    held: dict[str, set] = {}
    for d in diffs:
        if d["strategy"] != strategy:
            continue
        for member, sides in d["changes"].items():
            mine = held.setdefault(member, set())
            for t, ps in sides["revoked"].items():
                mine.difference_update((t, p) for p in ps)
            for t, ps in sides["assigned"].items():
                mine.update((t, p) for p in ps)
    return {k: v for k, v in held.items() if v}


def test_generation_sets_membership_at_once_and_rebalances_each_strategy_once() -> None:
    state, diffs, dead = run([
        PARTS,
        {"group": "g", "type": "join", "member": "a", "topics": ["t"]},
        {"group": "g", "type": "join", "member": "b", "topics": ["t"]},
        gen(7, {"c": m({"t": [0, 1]}), "b": m({"t": [2, 3]}, rack="az-1")}),
    ])
    assert dead == []
    st = decode(state)
    assert [(x.id, x.rack) for x in st.members] == [("b", "az-1"), ("c", None)]  # b keeps its place, a left
    last = [d for d in diffs if d["cause"]["type"] == "generation"]
    assert [(d["strategy"], d["phase"]) for d in last if d["strategy"] == "sticky"] == [("sticky", "eager")]
    assert sum(d["strategy"] == "cooperative-sticky" and d["phase"] == "revoke" for d in last) == 1
    assert last[0]["cause"] == {"type": "generation", "generation": 7, "source": {"file": "log", "line": 4}}
    # the sticky round saw exactly the recorded membership: b kept what it had, c took a's share
    before = replay_changes([d for d in diffs if d["cause"]["type"] != "generation"], "sticky")
    want = assign("sticky", {"t": 4}, {"b": Member(["t"], owned=sorted(before["b"]), generation=2, rack="az-1"),
                                       "c": Member(["t"])})
    assert replay_changes(diffs, "sticky") == {k: set(v) for k, v in want.items()}
    (obs,) = [d for d in diffs if d["strategy"] == "observed"]
    assert obs["generation"] == 7 and obs["phase"] == "eager" and obs["protocol"] == "range"
    assert replay_changes(diffs, "observed") == {"c": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}}
    assert obs["members"] == 2 and obs["unassigned"] == 0 and obs["assigned"] == 4 and obs["paused"] == 0


def test_an_unchanged_generation_still_rebalances_and_observed_diff_is_empty() -> None:
    first = [PARTS, gen(1, {"a": m({"t": [0, 1, 2, 3]})})]
    state, _diffs, _ = run(first)
    _, again, _ = run([gen(2, {"a": m({"t": [0, 1, 2, 3]})})], state)
    assert sorted({d["strategy"] for d in again}) == ["cooperative-sticky", "observed", "sticky"]
    (obs,) = [d for d in again if d["strategy"] == "observed"]
    assert obs["changes"] == {} and obs["paused"] == 4  # eager: everything held is paused


def test_observed_paused_follows_the_protocol_and_replaying_changes_gives_the_records() -> None:
    history = [PARTS,
               gen(1, {"a": m({"t": [0, 1, 2, 3]})}, "cooperative-sticky"),
               gen(2, {"a": m({"t": [0, 1]}), "b": m({})}, "cooperative-sticky"),
               gen(3, {"a": m({"t": [0, 1]}), "b": m({"t": [2, 3]})}, "cooperative-sticky")]
    _, diffs, dead = run(history)
    assert dead == []
    obs = [d for d in diffs if d["strategy"] == "observed"]
    assert [(d["generation"], d["phase"], d["revoked"], d["paused"], d["assigned"]) for d in obs] == [
        (1, "revoke", 0, 0, 4), (2, "revoke", 2, 2, 0), (3, "revoke", 0, 0, 2)]
    assert obs[1]["unassigned"] == 2
    assert replay_changes(diffs, "observed") == {"a": {("t", 0), ("t", 1)}, "b": {("t", 2), ("t", 3)}}


def test_a_gap_in_generations_is_reported_and_empty_groups_keep_counting() -> None:
    state, diffs, _ = run([PARTS, gen(3, {"a": m({"t": [0, 1, 2, 3]})}), gen(6, {}, None),
                           gen(7, {"b": m({"t": [0, 1, 2, 3]})})])
    obs = [d for d in diffs if d["strategy"] == "observed"]
    assert "skipped_generations" not in obs[0]
    assert [d["generation"] for d in obs] == [3, 6, 7]  # the Empty generation revokes everything
    assert obs[1]["skipped_generations"] == 2 and "skipped_generations" not in obs[2]
    gap = [d for d in diffs if d["cause"].get("generation") == 6]
    assert gap and all(d["cause"]["skipped_generations"] == 2 for d in gap)
    assert all(d["members"] == 0 for d in gap)
    assert decode(state).strategies["observed"].generation == 7


def test_skipped_generations_on_the_observed_record() -> None:
    _, diffs, _ = run([PARTS, gen(1, {"a": m({"t": [0, 1, 2, 3]})}), gen(4, {"a": m({"t": [0, 1]}),
                                                                            "b": m({"t": [2, 3]})})])
    obs = [d for d in diffs if d["strategy"] == "observed"]
    assert obs[1]["skipped_generations"] == 2 and obs[1]["cause"]["skipped_generations"] == 2


def test_delete_group_drops_the_state() -> None:
    state, _, _ = run([PARTS, gen(5, {"a": m({"t": [0, 1, 2, 3]})})])
    state, diffs, dead = run([{"group": "g", "type": "delete_group"}], state)
    assert state is None and diffs == [] and dead == []
    state, diffs, dead = run([PARTS, gen(9, {"a": m({"t": [0, 1, 2, 3]})})], state)
    obs = [d for d in diffs if d["strategy"] == "observed"]
    assert dead == [] and "skipped_generations" not in obs[0] and obs[0]["assigned"] == 4


def test_other_events_keep_the_observed_assignment_on_the_new_layout() -> None:
    state, _, _ = run([PARTS, gen(1, {"a": m({"t": [0, 1]}), "b": m({"t": [2, 3]})})])
    state, diffs, _ = run([{"group": "g", "type": "partitions", "partitions": {"t": 6}},
                           {"group": "g", "type": "leave", "member": "a"}], state)
    assert all(d["strategy"] != "observed" for d in diffs)
    st = decode(state)
    assert st.strategies["observed"].owner.tolist() == [-1, -1, 0, 0, -1, -1]  # b is now member 0


def test_unknown_partitions_and_foreign_topics_are_counted_not_fatal() -> None:
    _, diffs, dead = run([PARTS, gen(1, {"a": m({"t": [0, 1, 2, 3, 9], "nometa": [0]})})])
    (obs,) = [d for d in diffs if d["strategy"] == "observed"]
    assert dead == [] and obs["unknown_partitions"] == 2 and obs["assigned"] == 4


def test_invalid_generation_events_are_dead_letters() -> None:
    bad = [
        ({"group": "g", "type": "generation", "members": {}}, "field 'generation': missing"),
        ({"group": "g", "type": "generation", "generation": 1}, "field 'members': missing"),
        (gen(1, {"a": {"assigned": {"t": [0]}}}), "field 'members.a.topics': missing"),
        (gen(1, {"a": m({"t": [0, 0]})}), "field 'members.a.assigned.t': a partition is listed twice"),
        (gen(1, {"a": m({"t": [-1]})}), "field 'members.a.assigned.t': expected partition numbers"),
        (gen(1, {"a": m(None, owned_generation="x")}), "field 'members.a.owned_generation': expected an integer"),
        (gen(1, {"a": m(None, instance_id="i"), "b": m(None, instance_id="i")}),
         "field 'members.b.instance_id': 'i' is also held by 'a'"),
        (gen(-1, {}), "field 'generation': out of range"),
    ]
    for event, reason in bad:
        _state, diffs, dead = run([PARTS, event])
        assert diffs == [] and len(dead) == 1, event
        assert dead[0]["reason"].startswith(reason), (dead[0]["reason"], reason)


def test_a_generation_with_assignments_gets_a_conformance_record() -> None:
    """The recorded inputs (owned, generations) as the leader saw them, Kafka's range result vs the group's."""
    owned = {"a": m({"t": [0, 1]}, owned={"t": [0, 1]}, owned_generation=6),
             "b": m({"t": [2, 3]}, owned={"t": [2, 3]}, owned_generation=6)}
    _, out = outputs([PARTS, gen(7, owned), gen(8, {"a": m({"t": [0, 1, 2]}), "b": m({"t": [3]})}),
                      gen(9, {"a": m(), "b": m()})])
    conf = out[CONFORMANCE]
    assert [(c["generation"], c["conforms"]) for c in conf] == [(7, True), (8, False)]  # 9 carries no `assigned`
    assert conf[0]["source"] == {"file": "log", "line": 2} and conf[0]["ts"] == 1002
    assert conf[1]["differences"] == {"a": {"observed_only": {"t": [2]}, "expected_only": {}},
                                      "b": {"observed_only": {}, "expected_only": {"t": [2]}}}
    assert out[DEAD_LETTER] == []


def test_an_unknown_protocol_gets_a_record_without_a_verdict() -> None:
    _, out = outputs([PARTS, gen(3, {"a": m({"t": [0, 1, 2, 3]})}, protocol="my-custom")])
    (record,) = out[CONFORMANCE]
    assert record["conforms"] is None and "my-custom" in record["reason"]


def test_generation_members_carry_weights_to_the_state() -> None:
    state, _, dead = run([PARTS, gen(1, {"a": m(weight=3), "b": m()})])
    assert not dead
    assert [(x.id, x.weight) for x in decode(state).members] == [("a", 3.0), ("b", 1.0)]
    _, _, dead = run([PARTS, gen(1, {"a": m(weight=0)})])
    assert len(dead) == 1 and "members.a.weight" in dead[0]["reason"]
