"""min_moves against brute force over every assignment (small random groups) and against a linear program
solved by scipy's HiGHS (larger ones): the LP is only the test's oracle, production solves a min-cost flow."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

from assignors import optimality
from assignors.optimality import min_moves, moves


def brute_force(prev, new, topic, subscribed) -> int:
    """Try every assignment with new's loads (each partition: nobody or a subscriber)."""
    num_members = subscribed.shape[0]
    loads = np.bincount(new[new >= 0], minlength=num_members)
    choices = [[-1, *np.flatnonzero(subscribed[:, t]).tolist()] for t in topic]
    best = None
    for assignment in itertools.product(*choices):
        a = np.array(assignment, dtype=np.int64)
        if not np.array_equal(np.bincount(a[a >= 0], minlength=num_members), loads):
            continue
        m = moves(prev, a)
        best = m if best is None else min(best, m)
    assert best is not None  # new itself is a candidate
    return best


def lp_oracle(prev, new, topic, subscribed) -> int:
    """The transportation LP over (topic, member) pairs, solved by HiGHS: keep y (at most the partitions the
    member owned of the topic) plus other z per pair, each topic gives at most its size, each member takes
    exactly its load; maximise kept. Bipartite incidence constraints, so the LP optimum is integral."""
    prev, new, topic = (np.asarray(a, dtype=np.int64) for a in (prev, new, topic))
    num_members, num_topics = subscribed.shape
    allowed = np.array(subscribed, dtype=bool)
    allowed[new[new >= 0], topic[new >= 0]] = True  # pairs the strategy used count as allowed
    pair_member, pair_topic = np.nonzero(allowed)
    owned = np.zeros((num_members, num_topics), dtype=np.int64)
    np.add.at(owned, (prev[prev >= 0], topic[prev >= 0]), 1)
    loads = np.bincount(new[new >= 0], minlength=num_members)
    sizes = np.bincount(topic, minlength=num_topics)
    total_owned = int((prev >= 0).sum())
    n = len(pair_member)
    if n == 0:
        return total_owned
    cols = np.arange(2 * n)  # [y..., z...]
    members, topics = np.tile(pair_member, 2), np.tile(pair_topic, 2)
    result = linprog(
        np.concatenate([-np.ones(n), np.zeros(n)]),
        A_ub=sparse.csr_matrix((np.ones(2 * n), (topics, cols)), shape=(num_topics, 2 * n)), b_ub=sizes,
        A_eq=sparse.csr_matrix((np.ones(2 * n), (members, cols)), shape=(num_members, 2 * n)), b_eq=loads,
        bounds=np.column_stack([np.zeros(2 * n), np.concatenate([owned[pair_member, pair_topic],
                                                                  np.full(n, np.inf)])]),
        method="highs",
    )
    assert result.status == 0, result.message
    return total_owned - round(-result.fun)


def random_case(rng: np.random.Generator, max_partitions: int = 7, max_members: int = 4, max_topics: int = 3):
    num_members = int(rng.integers(1, max_members + 1))
    num_topics = int(rng.integers(1, max_topics + 1))
    num_partitions = int(rng.integers(0, max_partitions + 1))
    topic = rng.integers(0, num_topics, size=num_partitions)
    subscribed = rng.random((num_members, num_topics)) < 0.6
    prev = rng.integers(-1, num_members, size=num_partitions)
    new = np.full(num_partitions, -1)
    for p, t in enumerate(topic):
        options = [-1, *np.flatnonzero(subscribed[:, t]).tolist()]
        new[p] = options[rng.integers(0, len(options))] if rng.random() < 0.8 else -1
    return prev, new, topic, subscribed


@pytest.mark.parametrize("seed", range(300))
def test_matches_brute_force(seed):
    case = random_case(np.random.default_rng(seed))
    assert min_moves(*case) == brute_force(*case)


@pytest.mark.parametrize("seed", range(40))
def test_lp_path_matches_brute_force_on_overlapping_subscriptions(seed):
    """Several topics with different, overlapping subscriber sets: the LP path, not the closed form."""
    rng = np.random.default_rng(10_000 + seed)
    case = random_case(rng, max_partitions=8, max_members=3, max_topics=3)
    prev, new, topic, subscribed = case
    subscribed[0, :] = True  # one member connects every topic group
    assert min_moves(prev, new, topic, subscribed) == brute_force(prev, new, topic, subscribed)


def test_round_counts_are_the_counted_triples_flat():
    """`round_counts` against `Counter` over the partitions' (topic, previous, new owner) triples: four ints per
    distinct triple, each once; a small round's in first-seen order, so a topic's triples come together when its
    partitions do (what `TopicGroups.tally` reads a group once for), a large one's in (topic, previous, new)
    order."""
    rng = random.Random(17)
    for _ in range(600):
        members, size = rng.randint(0, 40), rng.choice((rng.randint(0, optimality.SMALL_ROUND),
                                                          rng.randint(optimality.SMALL_ROUND + 1, 2_000)))
        partition_topic = np.array(sorted(rng.randint(0, 4) for _ in range(size)), dtype=np.int32)
        if rng.random() < 0.3:
            rng.shuffle(partition_topic)
        prev = np.array([rng.randint(-1, members - 1) for _ in range(size)], dtype=np.int32)
        new = np.array([p if rng.random() < 0.5 else rng.randint(-1, members - 1) for p in prev.tolist()],
                       dtype=np.int32)
        counts = optimality.round_counts(prev, new, partition_topic)
        assert len(counts) % 4 == 0
        triples = [(*counts[k : k + 3],) for k in range(0, len(counts), 4)]
        expected = Counter(zip(partition_topic.tolist(), prev.tolist(), new.tolist(), strict=True))
        assert triples == (list(expected) if size <= optimality.SMALL_ROUND else sorted(expected))
        assert counts[3::4] == [expected[t] for t in triples]


@pytest.mark.parametrize("seed", range(100))
def test_both_ways_of_counting_give_the_same_triples(seed):
    """`round_counts`' two ways, over lists (small rounds) and in numpy (large ones), side by side on the same
    rounds: owners from nobody to hundreds of members, topics in or out of order, values out of range too."""
    rng = random.Random(seed)
    size, members = rng.randint(0, 600), rng.choice((1, 5, 300))
    topic = np.array([rng.randint(-1 if rng.random() < 0.05 else 0, 6) for _ in range(size)], dtype=np.int32)
    if rng.random() < 0.7:
        topic.sort()
    prev = np.array([rng.randint(-1, members) for _ in range(size)], dtype=np.int32)
    new = np.array([p if rng.random() < 0.6 else rng.randint(-2, members - 1) for p in prev.tolist()],
                   dtype=np.int32)

    def triples(counts):
        return sorted(zip(counts[0::4], counts[1::4], counts[2::4], counts[3::4], strict=True))

    assert triples(optimality._counted_arrays(prev, new, topic)) == triples(
        optimality._counted_lists(topic.tolist(), prev.tolist(), new.tolist()))


_FLOW_ALONE = pytest.param("flow alone", marks=pytest.mark.pure_python("assignors.optimality"))


@pytest.mark.parametrize("completion", ["greedy first", _FLOW_ALONE])
@pytest.mark.parametrize("seed", range(60))
def test_flow_alone_matches_brute_force(seed, completion, monkeypatch):
    """The min-cost flow without the shortcut that accepts the strategy's own assignment; with and without
    the greedy completion of the start flow (`_completes`) that spares the phases (without it, a few topic
    groups go to the price descent unless the test hides that branch too)."""
    if completion == "flow alone":
        monkeypatch.setattr(optimality, "_completes", lambda *args: False)
        monkeypatch.setattr(optimality, "_FEW_GROUPS", 0)  # the flow, not the price descent
    rng = np.random.default_rng(30_000 + seed)
    prev, new, topic, subscribed = random_case(rng, max_partitions=7, max_members=3, max_topics=3)
    subscribed[0, :] = True
    load, members_of, size, keep, total_owned, _ = optimality._counted_tables(
        optimality.round_counts(prev, new, topic), subscribed)
    assert total_owned - optimality._max_kept(load, members_of, size, keep) == brute_force(*(prev, new, topic,
                                                                                            subscribed))


def _tables(case):
    prev, new, topic, subscribed = case
    return optimality._counted_tables(optimality.round_counts(prev, new, topic), subscribed)


@pytest.mark.parametrize("seed", range(200))
def test_prices_match_brute_force(seed):
    """The dual's price descent (`_kept_by_prices`, a few topic groups) alone, without the bound and the greedy
    completion that answer first in `_solve` and `_max_kept`."""
    rng = np.random.default_rng(50_000 + seed)
    case = random_case(rng, max_partitions=7, max_members=3, max_topics=3)
    if rng.random() < 0.5:  # half the cases: one member connects every topic group
        case[3][0, :] = True
    load, members_of, size, keep, total_owned, _ = _tables(case)
    assert total_owned - optimality._kept_by_prices(load, members_of, size, keep) == brute_force(*case)


@pytest.mark.parametrize("seed", range(40))
def test_prices_match_lp_on_larger_groups(seed):
    """The price descent on up to 24 members and 6 topics (up to 6 topic groups, more than `_max_kept` gives it)."""
    rng = np.random.default_rng(60_000 + seed)
    case = random_case(rng, max_partitions=300, max_members=24, max_topics=6)
    load, members_of, size, keep, total_owned, _ = _tables(case)
    assert total_owned - optimality._kept_by_prices(load, members_of, size, keep) == lp_oracle(*case)


@pytest.mark.pure_python("assignors.optimality")
def test_prices_match_flow_on_many_small_groups(monkeypatch):
    """3,000 random rounds of up to 6 members, 4 topics, 30 partitions: the price descent gives the flow's
    most kept (`_kept_by_flow`, forced by hiding the greedy completion and the few-groups branch)."""
    rng = np.random.default_rng(70_000)
    cases = [random_case(rng, max_partitions=30, max_members=6, max_topics=4) for _ in range(3000)]
    tables = [_tables(case)[:4] for case in cases]
    prices = [optimality._kept_by_prices(*table) for table in tables]
    monkeypatch.setattr(optimality, "_completes", lambda *args: False)
    monkeypatch.setattr(optimality, "_FEW_GROUPS", 0)
    assert prices == [optimality._max_kept(*table) for table in tables]


def _completion_exists(members_of, left, room) -> bool:
    """Whether the groups' room can take every member's left load (each member only where it is listed), by trying
    every split of each member's load over its groups."""
    if not any(left):
        return True
    m = next(i for i, rest in enumerate(left) if rest)
    for g, members in enumerate(members_of):
        if m in members and room[g]:
            room[g] -= 1
            left[m] -= 1
            found = _completion_exists(members_of, left, room)
            room[g] += 1
            left[m] += 1
            if found:
                return True
    return False


@pytest.mark.parametrize("seed", range(300))
def test_fills_is_exactly_whether_a_completion_exists(seed):
    """`_fills` (Hall's condition over every set of a few topic groups) against a search over all completions,
    including cases the first come, first served `_completes` misses."""
    rng = np.random.default_rng(80_000 + seed)
    num_members, num_groups = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    members_of = [sorted(rng.choice(num_members, size=int(rng.integers(1, num_members + 1)), replace=False).tolist())
                  for _ in range(num_groups)]
    held = {m for members in members_of for m in members}
    left = [int(rng.integers(0, 4)) if m in held else 0 for m in range(num_members)]
    room = [int(rng.integers(0, 5)) for _ in range(num_groups)]
    assert optimality._fills(members_of, left, room) == _completion_exists(members_of, list(left), list(room))


def test_fills_accepts_a_completion_first_come_first_served_misses():
    """Member 0 may hold both groups, member 1 only the first: serving member 0 from the first group first
    leaves member 1 short, though member 0 could have taken the second."""
    members_of, left, room = [[0, 1], [0]], [1, 1], [1, 1]
    assert not optimality._completes(members_of, [0, 1], list(left), list(room))
    assert optimality._fills(members_of, left, room)


@pytest.mark.parametrize("counting", ["python", "numpy"])
@pytest.mark.parametrize("seed", range(40))
def test_matches_lp_on_larger_groups(seed, counting, monkeypatch):
    """Up to 24 members, 6 topics, 300 partitions with overlapping subscriptions and churn (beyond brute
    force): both ways of counting the tables give the LP's optimum."""
    if counting == "numpy":
        monkeypatch.setattr(optimality, "SMALL_ROUND", 0)
    rng = np.random.default_rng(40_000 + seed)
    case = random_case(rng, max_partitions=300, max_members=24, max_topics=6)
    result = min_moves(*case)
    assert result == lp_oracle(*case)
    assert 0 <= result <= moves(case[0], case[1])


@st.composite
def groups(draw):
    num_members = draw(st.integers(1, 4))
    num_topics = draw(st.integers(1, 3))
    num_partitions = draw(st.integers(0, 7))
    topic = np.array(draw(st.lists(st.integers(0, num_topics - 1), min_size=num_partitions, max_size=num_partitions)))
    flags = draw(st.lists(st.booleans(), min_size=num_members * num_topics, max_size=num_members * num_topics))
    subscribed = np.array(flags, dtype=bool).reshape(num_members, num_topics)
    prev = np.array(draw(st.lists(st.integers(-1, num_members - 1), min_size=num_partitions, max_size=num_partitions)))
    new = np.array(
        [draw(st.sampled_from([-1, *np.flatnonzero(subscribed[:, t]).tolist()])) for t in topic], dtype=np.int64
    )
    return prev.astype(np.int64), new, topic.astype(np.int64), subscribed


@settings(max_examples=300, deadline=None)
@given(groups())
def test_hypothesis_matches_lp(case):
    assert min_moves(*case) == lp_oracle(*case)


@settings(max_examples=300, deadline=None)
@given(groups())
def test_hypothesis_matches_brute_force_and_bounds_moves(case):
    prev, new, topic, subscribed = case
    result = min_moves(prev, new, topic, subscribed)
    assert result == brute_force(prev, new, topic, subscribed)
    assert 0 <= result <= moves(prev, new)


def test_strategy_pairs_outside_subscriptions_count_as_allowed():
    """Kafka's lenient cases: a pair the strategy used is allowed, so min_moves <= moves still holds."""
    prev = np.array([0, 0])
    new = np.array([1, 1])
    topic = np.array([0, 0])
    subscribed = np.array([[True], [False]])
    assert min_moves(prev, new, topic, subscribed) == 2 == moves(prev, new)


def test_identical_subscriptions_closed_form_on_a_large_group():
    rng = np.random.default_rng(7)
    num_partitions, num_members, num_topics = 1_000_000, 2000, 50
    topic = np.sort(rng.integers(0, num_topics, size=num_partitions))
    prev = rng.integers(-1, num_members, size=num_partitions)
    new = prev.copy()
    shuffled = rng.random(num_partitions) < 0.1
    new[shuffled] = rng.integers(0, num_members, size=int(shuffled.sum()))
    subscribed = np.ones((num_members, num_topics), dtype=bool)
    loads = np.bincount(new[new >= 0], minlength=num_members)
    owned = np.bincount(prev[prev >= 0], minlength=num_members)
    expected = int((prev >= 0).sum() - np.minimum(loads, owned).sum())
    assert min_moves(prev, new, topic, subscribed) == expected <= moves(prev, new)


def test_mixed_subscriptions_at_scale_stay_below_moves():
    """200 topics x 500 partitions, 500 members in 5 overlapping apps: the flow over topic groups."""
    rng = np.random.default_rng(8)
    num_topics, per_topic, num_members = 200, 500, 500
    topic = np.repeat(np.arange(num_topics), per_topic)
    app = np.arange(num_members) % 5
    topic_apps = rng.random((num_topics, 5)) < 0.4
    topic_apps[np.arange(num_topics), np.arange(num_topics) % 5] = True
    subscribed = topic_apps[:, app].T
    new = np.array([rng.choice(np.flatnonzero(subscribed[:, t])) for t in topic])
    prev = new.copy()
    moved = rng.random(len(prev)) < 0.2
    prev[moved] = rng.integers(-1, num_members, size=int(moved.sum()))
    result = min_moves(prev, new, topic, subscribed)
    assert 0 <= result <= moves(prev, new)
    assert result == lp_oracle(prev, new, topic, subscribed)


def test_rejects_bad_shapes():
    with pytest.raises(ValueError, match="subscribed"):
        min_moves(np.array([0]), np.array([0]), np.array([0]), np.array([True]))
    with pytest.raises(ValueError, match="new_owner"):
        min_moves(np.array([0]), np.array([0, 1]), np.array([0]), np.array([[True]]))
    with pytest.raises(ValueError, match="prev_owner"):
        min_moves(np.array([3]), np.array([0]), np.array([0]), np.array([[True]]))
