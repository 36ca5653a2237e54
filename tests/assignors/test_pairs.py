"""Tuple reuse across `assign()` calls (`assignors.pairs`): a recognised, cached or shared tuple must never
change a result. Every check compares against the same call with freshly built pairs after `clear()`."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from assignors import STRATEGIES, KafkaAssignorError, Member, assign, pairs
from assignors.pairs import RESULTS
from tests.assignors.test_properties import apply_event, histories


def copied(members: dict[str, Member]) -> dict[str, Member]:
    """The same members with `owned` rebuilt pair by pair (as if parsed from JSON)."""
    return {
        mid: Member(m.topics, [(str(t), int(p)) for t, p in m.owned], m.generation, m.rack, m.instance_id)
        for mid, m in members.items()
    }


def uncached(strategy: str, topics, members, racks=None):
    pairs.clear()
    return assign(strategy, topics, copied(members), racks)


def fed_back(previous: dict, topics, subscriptions: dict[str, list[str]], generation: int = 1) -> dict[str, Member]:
    return {mid: Member(subs, previous.get(mid, []), generation) for mid, subs in subscriptions.items()}


@pytest.fixture(autouse=True)
def _clean_cache():
    pairs.clear()
    yield
    pairs.clear()


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_a_history_fed_back_gives_what_fresh_pairs_give(strategy, history):
    group, homogeneous, events = history
    previous: dict = {}
    for round_no, event in enumerate([None, *events]):
        if event is not None and not apply_event(group, event, homogeneous):
            continue
        members = {
            mid: Member(list(subs), previous.get(mid, []), round_no, group.racks[mid])
            for mid, subs in group.subscriptions.items()
        }
        topics, racks = dict(group.topics), group.partition_racks()
        result = assign(strategy, topics, members, racks)
        expected = uncached(strategy, topics, members, racks)
        assert result == expected
        previous = assign(strategy, topics, members, racks)  # warm again: the next round sees handed-out lists


def test_handed_out_lists_are_recognised_only_while_unchanged():
    topics = {"t": 6}
    first = assign("sticky", topics, {"a": Member(["t"]), "b": Member(["t"])})
    key = (("t",), (6,))
    assert RESULTS.ids_of(first["a"], key).tolist() == [p for _, p in first["a"]]
    assert RESULTS.ids_of(list(first["a"]), key) is None  # an equal copy is read pair by pair instead
    first["a"].append(("t", 5))
    assert RESULTS.ids_of(first["a"], key) is None
    first["b"][0] = tuple(list(first["b"][0]))  # an equal value, another object: read pair by pair
    assert RESULTS.ids_of(first["b"], key) is None


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (lambda owned: owned.append(("t", True)), ValueError),
        (lambda owned: owned.__setitem__(1, ("t", True)), ValueError),  # equal to ("t", 1), still a bool
        (lambda owned: owned.__setitem__(0, ("t", "0")), ValueError),
        (lambda owned: owned.append(("ghost", 0)), None),
        (lambda owned: owned.pop(), None),
        (lambda owned: owned.reverse(), None),
        (lambda owned: owned.extend(owned), None),  # duplicates
    ],
)
def test_a_changed_handed_out_list_is_validated_like_any_input(change, expect):
    topics = {"t": 6}
    first = assign("cooperative-sticky", topics, {"a": Member(["t"]), "b": Member(["t"])})
    change(first["a"])
    members = fed_back(first, topics, {"a": ["t"], "b": ["t"], "c": ["t"]})
    if expect is not None:
        with pytest.raises(expect, match=r"members\['a'\]\.owned\[\d+\]"):
            assign("cooperative-sticky", topics, members)
    else:
        assert assign("cooperative-sticky", topics, members) == uncached("cooperative-sticky", topics, members)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky", "uniform", "range"])
def test_a_result_fed_back_into_another_layout(strategy):
    before = {"a": 3, "b": 2, "c": 4}
    first = assign(strategy, before, {m: Member(["a", "b", "c"]) for m in ("m1", "m2", "m3")})
    after = {"c": 4, "b": 5, "d": 2}  # a deleted, b grown, d created, order changed
    members = fed_back(first, after, {"m1": ["b", "c", "d"], "m2": ["b", "c", "d"], "m4": ["b", "c", "d"]})
    assert assign(strategy, after, members) == uncached(strategy, after, members)
    shrunk = {"b": 1, "c": 4}  # partitions outside the metadata: as for any input (Kafka's sticky path throws)
    members = fed_back(first, shrunk, {"m1": ["b", "c"], "m2": ["b", "c"]})
    assert outcome(assign, strategy, shrunk, members) == outcome(uncached, strategy, shrunk, members)


def outcome(call, *args):
    try:
        return call(*args)
    except KafkaAssignorError as err:
        return str(err)


def test_results_share_plain_tuples():
    topics = {"orders": 4, "pay": 2}
    members = {"a": Member(["orders", "pay"]), "b": Member(["orders"])}
    one = assign("range", topics, members)
    two = assign("roundrobin", topics, members)
    by_value = {tp: tp for tps in one.values() for tp in tps}
    for tps in two.values():
        for tp in tps:
            assert type(tp) is tuple and type(tp[0]) is str and type(tp[1]) is int
            assert by_value[tp] is tp


def test_the_engines_cannot_change_remembered_ids():
    topics = {"t": 8}
    first = assign("sticky", topics, {"a": Member(["t"]), "b": Member(["t"])})
    ids = RESULTS.ids_of(first["a"], (("t",), (8,)))
    assert not ids.flags.writeable and ids.tolist() == [p for _, p in first["a"]]
    assign("sticky", topics, fed_back(first, topics, {"a": ["t"], "c": ["t"]}))
    assert RESULTS.ids_of(first["a"], (("t",), (8,))).tolist() == [p for _, p in first["a"]]


def test_caches_stay_within_their_bounds(monkeypatch):
    monkeypatch.setattr(pairs.CACHE, "limit", 50)
    monkeypatch.setattr(RESULTS, "limit", 60)
    monkeypatch.setattr(RESULTS, "kept", 3)
    previous: dict = {}
    for size in range(10, 40, 3):
        topics = {"x": size, "y": 7}
        members = {m: Member(["x", "y"], previous.get(m, []), 1) for m in ("a", "b", "c")}
        previous = assign("sticky", topics, members)
        assert previous == uncached("sticky", topics, members)
        previous = assign("sticky", topics, members)
        assert sum(layout.pairs.size for layout in pairs.CACHE._layouts.values()) <= 50
        assert len(RESULTS._results) <= 3 and sum(r.size for r in RESULTS._results) <= 60
    assign("range", {"huge": 100}, {"a": Member(["huge"])})  # larger than the bound: served, not kept
    assert all(sum(key[1]) <= 50 for key in pairs.CACHE._layouts)


def test_concurrent_calls_give_the_sequential_results():
    cases = [({f"t{i}": 50 + i, "shared": 30}, [f"t{i}", "shared"]) for i in range(6)]
    expected = [assign("cooperative-sticky", t, {m: Member(s) for m in "abc"}) for t, s in cases]
    pairs.clear()
    got: list = [None] * len(cases)

    def work(i: int) -> None:
        topics, subs = cases[i]
        for _ in range(20):
            first = assign("cooperative-sticky", topics, {m: Member(subs) for m in "abc"})
            again = assign("cooperative-sticky", topics, {m: Member(subs, first[m], 1) for m in "abc"})
            assert again == first
        got[i] = first

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == expected


def test_a_layout_change_keeps_the_tuples_of_unchanged_topics():
    first = assign("range", {"a": 2, "b": 2}, {"m": Member(["a", "b"])})
    grown = assign("range", {"a": 2, "b": 3}, {"m": Member(["a", "b"])})
    assert grown["m"][0] is first["m"][0] and grown["m"][3] is first["m"][3]
    assert np.array_equal(
        [tp[1] for tp in grown["m"]],
        [0, 1, 0, 1, 2],
    )


def test_validated_caller_tuples_are_handed_back_not_copied():
    topics = {"t": 6, "u": 2}
    first = assign("sticky", topics, {m: Member(["t", "u"]) for m in "abc"})
    pairs.clear()
    mine = {m: [(str(t), int(p)) for t, p in first[m]] for m in "ab"}  # as if parsed from JSON
    mine["b"] = [list(tp) for tp in mine["b"]]  # lists are valid input but never handed out
    again = assign("sticky", topics, {m: Member(["t", "u"], mine[m], 1) for m in "ab"})
    assert again == uncached("sticky", topics, {m: Member(["t", "u"], mine[m], 1) for m in "ab"})
    kept = [tp for tp in mine["a"] if tp in again["a"]]
    assert kept and all(any(tp is got for got in again["a"]) for tp in kept)
    assert all(type(tp) is tuple for tps in again.values() for tp in tps)
