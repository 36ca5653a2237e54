"""`weighted-sticky` (assignors/weighted.py): loads proportional to weight, sticky, independent of the
member order; hypothesis properties over random groups plus a few exact cases."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assignors import Member, assign, build_spec
from assignors.optimality import min_moves, moves

TOPICS = ("t0", "t1", "t2", "orders")
IDS = ("c0", "c1", "c2", "c10", "big", "small", "x")
WEIGHTS = st.one_of(st.integers(1, 8), st.sampled_from([0.5, 1.5, 2.25, 0.1, 3.0]))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def groups(draw, identical: bool):
    topics = {t: draw(st.integers(1, 12)) for t in draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))}
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=6, unique=True))
    shared = sorted(topics)
    every = [(t, p) for t, n in topics.items() for p in range(n)]
    owned = draw(st.permutations(every))
    cut = sorted(draw(st.lists(st.integers(0, len(every)), min_size=len(ids) - 1, max_size=len(ids) - 1)))
    pieces = np.split(np.arange(len(every)), cut)  # disjoint ownership, some of it maybe nobody's
    members = {}
    for mid, piece in zip(ids, pieces, strict=True):
        subs = shared if identical else draw(st.lists(st.sampled_from(sorted(topics)), unique=True))
        mine = [owned[i] for i in piece.tolist() if draw(st.booleans()) or identical]
        members[mid] = Member(subs, owned=mine, generation=1, weight=draw(WEIGHTS))
    return topics, members


def pools(topics, members):
    """Topics with subscribers, pooled by subscriber set: {subscribers: total partitions}."""
    out: dict[frozenset[str], int] = {}
    for t, n in topics.items():
        subs = frozenset(mid for mid, m in members.items() if t in m.topics)
        if subs:
            out[subs] = out.get(subs, 0) + n
    return out


@SETTINGS
@given(groups(identical=False))
def test_loads_within_one_of_the_weighted_share_per_pool(group):
    topics, members = group
    result = assign("weighted-sticky", topics, members)
    for subs, total in pools(topics, members).items():
        whole = sum(Fraction(members[mid].weight) for mid in subs)
        for mid in subs:
            share = total * Fraction(members[mid].weight) / whole
            load = sum(1 for t, _ in result[mid] if frozenset(x for x in members if t in members[x].topics) == subs)
            assert abs(load - share) < 1, (mid, load, share)
    assigned = [tp for parts in result.values() for tp in parts]
    assert len(assigned) == len(set(assigned)) == sum(n for t, n in topics.items() if any(
        t in m.topics for m in members.values()))
    for mid, parts in result.items():
        assert all(t in members[mid].topics for t, _ in parts)


@SETTINGS
@given(groups(identical=True))
def test_fewest_moves_with_identical_subscriptions(group):
    topics, members = group
    result = assign("weighted-sticky", topics, members)
    spec = build_spec(topics, members)
    prev = np.full(spec.num_partitions, -1, dtype=np.int64)
    new = np.full(spec.num_partitions, -1, dtype=np.int64)
    for m, mid in enumerate(spec.member_ids):
        prev[spec.owned[m]] = m
        new[[spec.partition_id(t, p) for t, p in result[mid]]] = m
    subscribed = np.zeros((spec.num_members, len(spec.topic_names)), dtype=bool)
    for m, ts in enumerate(spec.member_topics):
        subscribed[m, ts] = True
    assert moves(prev, new) == min_moves(prev, new, spec.partition_topic, subscribed)


@SETTINGS
@given(groups(identical=False), st.randoms(use_true_random=False))
def test_same_result_whatever_the_member_order(group, rnd):
    topics, members = group
    result = assign("weighted-sticky", topics, members)
    ids = list(members)
    rnd.shuffle(ids)
    assert assign("weighted-sticky", topics, {mid: members[mid] for mid in ids}) == result


def test_weights_three_to_one():
    members = {"small": Member(["t"], weight=1), "big": Member(["t"], weight=3)}
    result = assign("weighted-sticky", {"t": 8}, members)
    assert [len(result["small"]), len(result["big"])] == [2, 6]


def test_largest_remainder_ties_go_to_the_smaller_member_id_and_owners_keep_their_partitions():
    members = {
        "b": Member(["t"], owned=[("t", 0), ("t", 1), ("t", 2)], generation=3, weight=1),
        "a": Member(["t"], weight=1),
        "c": Member(["t"], weight=2),
    }
    result = assign("weighted-sticky", {"t": 6}, members)  # shares 1.5, 1.5, 3
    assert result == {"b": [("t", 0)], "a": [("t", 1), ("t", 3)], "c": [("t", 2), ("t", 4), ("t", 5)]}


@pytest.mark.parametrize("weight", [0, -1, float("nan"), float("inf"), "2", True, None])
def test_weight_must_be_a_positive_number(weight):
    with pytest.raises(ValueError, match=r"members\['a'\]\.weight"):
        assign("weighted-sticky", {"t": 1}, {"a": Member(["t"], weight=weight)})
