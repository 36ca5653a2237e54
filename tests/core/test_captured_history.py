"""A captured history replayed at the real group's rebalances (docs/events-and-diffs.md §1): once a group's log
carried a `generation` event it rebalances only at `generation` events, an emptied group's round pauses nothing
and empties every assignment, and conformance moves count against the last recorded assignment."""

from __future__ import annotations

import json
from typing import Any

import pytest
from captured_groups import assert_own_strategy_is_observed, conforming_groups

from assignors import STRATEGIES
from streaming.core.config import PipelineConfig
from streaming.core.group_state import step
from streaming.core.local import replay
from streaming.core.records import CONFORMANCE, DEAD_LETTER, DIFF, SourceRecord
from streaming.core.state_codec import decode

ALL = PipelineConfig(strategies=STRATEGIES)


def records(events: list[dict[str, Any]]) -> list[SourceRecord]:
    return [SourceRecord(json.dumps(e).encode(), None, {"file": "log", "line": i}, (0, i), 1000 + i)
            for i, e in enumerate(events, 1)]


def outputs(events: list[dict[str, Any]], config: PipelineConfig = ALL,
            batch: int | None = None) -> dict[str, list[dict[str, Any]]]:
    """The events through the local pipeline: the records of each kind."""
    out: dict[str, list[dict[str, Any]]] = {DIFF: [], DEAD_LETTER: [], CONFORMANCE: []}
    for o in replay(records(events), config, now_ms=lambda: 0, max_events_per_batch=batch):
        out[o.kind].append(json.loads(o.value))
    return out


def gen(n: int, assigned: dict[str, list[int]], protocol: str | None = "range", topic: str = "t",
        **member: Any) -> dict[str, Any]:
    return {"group": "g", "type": "generation", "generation": n, "protocol": protocol,
            "members": {mid: {"topics": [topic], "assigned": {topic: ps}, **member} for mid, ps in assigned.items()}}


def parts(n: int, topic: str = "t") -> dict[str, Any]:
    return {"group": "g", "type": "partitions", "partitions": {topic: n}}


# a range group of two, then three, then the topic grows (the metadata poll sees it first), then everyone stops
RANGE_HISTORY = [
    parts(6),
    gen(1, {"a": [0, 1, 2], "b": [3, 4, 5]}),
    gen(2, {"a": [0, 1], "b": [2, 3], "c": [4, 5]}),
    parts(9),
    gen(3, {"a": [0, 1, 2], "b": [3, 4, 5], "c": [6, 7, 8]}),
    gen(4, {}, None),
]


def by_strategy(diffs: list[dict[str, Any]], strategy: str) -> list[dict[str, Any]]:
    return [d for d in diffs if d["strategy"] == strategy]


def test_a_topic_growth_before_its_generation_is_one_round() -> None:
    out = outputs(RANGE_HISTORY)
    diffs = out[DIFF]
    assert out[DEAD_LETTER] == []
    assert not [d for d in diffs if d["cause"]["source"]["line"] == 4]  # the `partitions` line: no round
    for strategy in STRATEGIES:
        causes = [d["cause"]["generation"] for d in by_strategy(diffs, strategy) if d["phase"] != "followup"]
        assert causes == [1, 2, 3, 4], strategy  # one rebalance per generation, none for the growth
    assert conforming_groups(out[CONFORMANCE]) == {"g": "range"}
    assert_own_strategy_is_observed(diffs, "g", "range")
    third = [d for d in diffs if d["cause"]["generation"] == 3 and d["strategy"] in ("range", "observed")]
    assert [(d["paused"], d["moves"]) for d in third] == [(6, 3), (6, 3)]  # 2 to a, 4 and 5 to b


def test_an_emptied_group_revokes_everything_and_pauses_nothing() -> None:
    diffs = outputs(RANGE_HISTORY)[DIFF]
    last = [d for d in diffs if d["cause"]["generation"] == 4]
    assert sorted(d["strategy"] for d in last) == sorted([*STRATEGIES, "observed"])
    for d in last:
        assert (d["members"], d["paused"], d["revoked"], d["assigned"], d["moves"]) == (0, 0, 9, 0, 0), d
        assert sorted(d["changes"]) == ["a", "b", "c"], d
        assert all(c["assigned"] == {} for c in d["changes"].values())
    (observed,) = [d for d in last if d["strategy"] == "observed"]
    assert observed["protocol"] is None and observed["generation"] == 4


def test_the_emptied_state_holds_nothing_and_the_group_starts_again_from_it() -> None:
    state = None
    for rec in records(RANGE_HISTORY):
        state, _ = step("g", state, [rec], ALL, now_ms=0)
    st = decode(state)
    assert st.members == [] and all((s.owner < 0).all() for s in st.strategies.values())
    state, out = step("g", state, records([gen(5, {"d": [0, 1, 2, 3, 4, 5, 6, 7, 8]})]), ALL, now_ms=0)
    first = [json.loads(o.value) for o in out if o.kind == DIFF]
    assert {(d["strategy"], d["paused"], d["revoked"], d["assigned"]) for d in first} == {
        (s, 0, 0, 9) for s in [*STRATEGIES, "observed"]}


def test_other_events_of_a_captured_group_update_it_without_a_round() -> None:
    out = outputs([parts(4), gen(1, {"a": [0, 1], "b": [2, 3]}),
                   {"group": "g", "type": "join", "member": "c", "topics": ["t", "u"]},
                   parts(2, "u"),
                   {"group": "g", "type": "subscribe", "member": "a", "topics": ["u"]},
                   {"group": "g", "type": "leave", "member": "b"},
                   {"group": "g", "type": "delete_topic", "topic": "u"}],
                  PipelineConfig(strategies=("range", "cooperative-sticky")))
    assert out[DEAD_LETTER] == []
    assert {d["cause"]["type"] for d in out[DIFF]} == {"generation"}


def test_members_who_joined_between_generations_take_part_in_the_next_one() -> None:
    """A join, a leave and a rejoin between two generations change the membership without a round; the next
    generation's rounds read every member's claims (a member new to the group has none)."""
    out = outputs([parts(4), gen(1, {"a": [0, 1], "b": [2, 3]}),
                   {"group": "g", "type": "join", "member": "c", "topics": ["t"]},
                   {"group": "g", "type": "leave", "member": "a"},
                   {"group": "g", "type": "join", "member": "d", "topics": ["t"]},
                   gen(2, {"b": [0, 1], "c": [2], "d": [3]}, "cooperative-sticky")])
    assert out[DEAD_LETTER] == []
    second = [d for d in out[DIFF] if d["cause"]["generation"] == 2 and d["phase"] != "followup"]
    assert sorted(d["strategy"] for d in second) == sorted([*STRATEGIES, "observed"])
    assert {d["members"] for d in second} == {3}


def test_the_rule_holds_across_restarts_and_batches() -> None:
    """The state blob remembers that the log carried a generation: a restarted step, one event per batch or all
    in one, gives the same records."""
    config = PipelineConfig(strategies=("range", "sticky", "cooperative-sticky"))
    whole = outputs(RANGE_HISTORY, config)
    assert outputs(RANGE_HISTORY, config, batch=1) == whole
    state = None
    restarted: list[dict[str, Any]] = []
    for rec in records(RANGE_HISTORY):
        state, out = step("g", state, [rec], config, now_ms=0)
        restarted.extend(json.loads(o.value) for o in out if o.kind == DIFF)
    assert restarted == whole[DIFF]


def test_a_log_without_generations_still_rebalances_at_every_event() -> None:
    diffs = outputs([parts(4), {"group": "g", "type": "join", "member": "a", "topics": ["t"]}, parts(6),
                     {"group": "g", "type": "leave", "member": "a"}], PipelineConfig(strategies=("range",)))[DIFF]
    assert [(d["cause"]["type"], d["paused"]) for d in diffs] == [("join", 0), ("partitions", 4), ("leave", 6)]


def test_conformance_moves_count_against_the_previous_generations_assignment() -> None:
    """Eager clients report no `owned`: moves read from it would be 0; the last recorded assignment shows them."""
    conf = outputs([parts(6), gen(1, {"a": [0, 1, 2, 3, 4, 5]}), gen(2, {"a": [0, 1, 2], "b": [3, 4, 5]}),
                    gen(3, {"a": [0, 1, 2, 3, 4, 5]})])[CONFORMANCE]
    assert [(c["generation"], c["observed_moves"], c["expected_moves"], c["min_moves"]) for c in conf] == [
        (1, 0, 0, 0), (2, 3, 3, 3), (3, 0, 0, 0)]  # 3: b left, its partitions are not moves


def test_conformance_moves_equal_the_observed_records_moves() -> None:
    out = outputs(RANGE_HISTORY)
    observed = {d["generation"]: d["moves"] for d in by_strategy(out[DIFF], "observed")}
    assert {c["generation"]: c["observed_moves"] for c in out[CONFORMANCE]} == {
        g: observed[g] for g in (1, 2, 3)}


def test_the_first_generation_counts_moves_against_the_reported_owned() -> None:
    event = gen(5, {"a": [0, 1], "b": [2, 3]}, "cooperative-sticky")
    event["members"]["a"].update(owned={"t": [0, 1, 2]}, owned_generation=4)
    event["members"]["b"].update(owned={"t": [3]}, owned_generation=4)
    (conf,) = outputs([parts(4), event])[CONFORMANCE]
    assert conf["observed_moves"] == 1  # a gave up 2


def owning(event: dict[str, Any], owned: dict[str, list[int]], generation: int) -> dict[str, Any]:
    for mid, ps in owned.items():
        event["members"][mid].update(owned={"t": ps}, owned_generation=generation)
    return event


@pytest.mark.parametrize("recorded", [True, False])
def test_the_group_strategy_plays_one_round_per_generation(recorded: bool) -> None:
    """A cooperative group's follow-up is its next generation in the log; replayed as another strategy's history,
    cooperative-sticky still follows up at once, as such a group would."""
    protocol = "cooperative-sticky" if recorded else "range"
    history = [parts(4), gen(1, {"a": [0, 1, 2, 3]}, protocol),
               gen(2, {"a": [0, 1], "b": [2, 3]}, protocol)]
    if recorded:  # the revoke generation, then the follow-up, as the members reported them
        history[2:] = [owning(gen(2, {"a": [0, 1], "b": []}, protocol), {"a": [0, 1, 2, 3]}, 1),
                       owning(gen(3, {"a": [0, 1], "b": [2, 3]}, protocol), {"a": [0, 1], "b": []}, 2)]
    out = outputs(history, PipelineConfig(strategies=("cooperative-sticky",)))
    coop = [(d["cause"]["generation"], d["phase"]) for d in by_strategy(out[DIFF], "cooperative-sticky")]
    if recorded:
        assert coop == [(1, "revoke"), (2, "revoke"), (3, "revoke")]
        assert conforming_groups(out[CONFORMANCE]) == {"g": "cooperative-sticky"}
        assert_own_strategy_is_observed(out[DIFF], "g", "cooperative-sticky")
    else:
        assert coop == [(1, "revoke"), (2, "revoke"), (2, "followup")]
