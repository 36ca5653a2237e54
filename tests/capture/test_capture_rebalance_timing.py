"""Observed rebalance durations of classic groups in `rebalance capture --source describe`: the polls that saw
a group in PreparingRebalance / CompletingRebalance time the rebalance, and the generation event the first
settled poll gives carries it (`rebalance_ms`, `rebalance_bounds_ms`)."""

from __future__ import annotations

import coordinator_encoder as enc

from streaming.capture.coordinator_events import Translator
from streaming.capture.coordinator_records import MemberMetadata


def member(member_id: str, partitions: list[int]) -> MemberMetadata:
    return MemberMetadata(member_id, None, "app", "/10.0.0.1", -1, -1, enc.subscription(0, ["orders"]),
                          enc.assignment(0, [("orders", partitions)]))


def settled(tr: Translator, ts: int, *members: MemberMetadata) -> list[dict]:
    got = tr.described("app", "range", list(members), ts)
    assert isinstance(got, list)
    return [e for e in got if e["type"] == "generation"]


def test_the_polls_that_saw_the_rebalance_time_it() -> None:
    tr = Translator("", None, {"orders": 4}.get)
    (first,) = settled(tr, 10_000, member("c-1", [0, 1, 2, 3]))
    assert "rebalance_ms" not in first  # no poll saw this one happen
    for ts in (15_000, 20_000, 25_000):  # PreparingRebalance, then CompletingRebalance
        tr.rebalancing("app", ts)
    (second,) = settled(tr, 30_000, member("c-1", [0, 1]), member("c-2", [2, 3]))
    assert second["generation"] == 2
    # from the first poll that saw it rebalancing to the first that saw it settled; surely at least the
    # 10 s it was seen rebalancing, at most the 20 s since the last poll that saw it settled
    assert second["rebalance_ms"] == 15_000
    assert second["rebalance_bounds_ms"] == [10_000, 20_000]
    # timed once: the next settled poll of an unchanged group says nothing
    assert settled(tr, 35_000, member("c-1", [0, 1]), member("c-2", [2, 3])) == []


def test_a_rebalance_seen_once_that_changed_nothing_is_still_a_generation() -> None:
    tr = Translator("", None, {"orders": 4}.get)
    settled(tr, 10_000, member("c-1", [0, 1, 2, 3]))
    tr.rebalancing("app", 15_000)
    (gen,) = settled(tr, 20_000, member("c-1", [0, 1, 2, 3]))
    assert (gen["generation"], gen["rebalance_ms"], gen["rebalance_bounds_ms"]) == (2, 5_000, [0, 10_000])


def test_a_group_first_seen_rebalancing_has_no_upper_bound() -> None:
    tr = Translator("", None, {"orders": 4}.get)
    tr.rebalancing("app", 5_000)
    tr.rebalancing("app", 6_000)
    (gen,) = settled(tr, 7_000, member("c-1", [0, 1, 2, 3]))
    assert (gen["generation"], gen["rebalance_ms"], gen["rebalance_bounds_ms"]) == (1, 2_000, [1_000, None])


def test_a_group_only_ever_seen_rebalancing_leaves_nothing_when_it_goes() -> None:
    tr = Translator("", None, {"orders": 4}.get)
    tr.rebalancing("app", 5_000)
    assert tr.gone("app", 6_000) == []
    assert "app" not in tr.state
