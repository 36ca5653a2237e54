"""The `min_moves` kernel (assignors/kept_kernel.pyx) against its specification, `optimality._solve_python`, on
thousands of random rounds shaped like the replay's, and against brute force and the LP on the exhaustive cases
of test_optimality. Skipped where the kernel is not built (a pure-Python install or run)."""

from __future__ import annotations

import numpy as np
import pytest

from assignors import optimality
from assignors.compiled import kernel
from tests.assignors.test_optimality import brute_force, lp_oracle, random_case

KEPT = kernel("assignors.kept_kernel")
pytestmark = pytest.mark.skipif(KEPT is None, reason="assignors.kept_kernel is not built here (pure Python)")

_MANY_GROUPS = 6  # passed as the kernel's `few_groups`: the price descent on every round random_case makes


def _tables(case) -> optimality.Tables:
    prev, new, topic, subscribed = case
    return optimality._counted_tables(optimality.round_counts(prev, new, topic), subscribed)


def _sticky_case(rng: np.random.Generator):
    """A round like the replay's: overlapping subscriptions, previous owners among the members that stayed
    (mostly subscribers), new owners mostly the previous ones and the rest spread over the subscribers (rounds
    where keeping the bound leaves a member short, which only the price descent or the flow answers)."""
    small = rng.random() < 0.5
    num_members = int(rng.integers(1, 7 if small else 25))
    num_topics = int(rng.integers(1, 4 if small else 7))
    subscribed = rng.random((num_members, num_topics)) < rng.uniform(0.2, 0.9)
    subscribed[rng.integers(0, num_members, size=num_topics), np.arange(num_topics)] = True
    num_partitions = int(rng.integers(0, 40 if small else 300))
    topic = rng.integers(0, num_topics, size=num_partitions)
    stayed = rng.random(num_members) < rng.uniform(0.3, 1)
    prev = np.full(num_partitions, -1, dtype=np.int64)
    for p, t in enumerate(topic):
        options = np.flatnonzero(subscribed[:, t] & stayed) if rng.random() < 0.9 else np.flatnonzero(stayed)
        if len(options) and rng.random() < 0.95:
            prev[p] = options[rng.integers(0, len(options))]
    sticky, unassigned = rng.uniform(0, 1), (0.0 if rng.random() < 0.7 else 0.05)
    new = np.empty(num_partitions, dtype=np.int64)
    for p, t in enumerate(topic):
        options = np.flatnonzero(subscribed[:, t])
        if prev[p] >= 0 and subscribed[prev[p], t] and rng.random() < sticky:
            new[p] = prev[p]
        else:
            new[p] = options[rng.integers(0, len(options))] if rng.random() >= unassigned else -1
    return prev, new, topic, subscribed


@pytest.mark.parametrize("seed", range(10))
def test_matches_python_on_random_rounds(seed):
    """600 rounds a seed (half replay-like, half random_case's; 1-6 topic groups, up to 24 members, up to a few
    hundred partitions): the kernel gives `_solve_python`'s answer, or -1 exactly where that takes the flow."""
    rng = np.random.default_rng(90_000 + seed)
    answered = 0
    for i in range(600):
        case = _sticky_case(rng) if i % 2 else random_case(rng, max_partitions=int(rng.integers(1, 400)),
                                                            max_members=24, max_topics=6)
        tables = _tables(case)
        load, members_of, size, keep, total_owned, moved = tables
        expected = optimality._solve_python(tables)
        least = KEPT.min_moves(load, members_of, size, keep, total_owned, moved, optimality._FEW_GROUPS)
        if least < 0:
            assert len(size) > optimality._FEW_GROUPS
        else:
            assert least == expected
            answered += 1
        # the descent on up to 6 topic groups, also where the strategy's own assignment reaches the bound
        assert KEPT.min_moves(load, members_of, size, keep, total_owned, moved, _MANY_GROUPS) == expected
        assert KEPT.min_moves(load, members_of, size, keep, total_owned, -1, _MANY_GROUPS) == expected
    assert answered > 500


@pytest.mark.parametrize("seed", range(200))
def test_descent_matches_brute_force(seed):
    """test_optimality's exhaustive cases (its price descent seeds), without the shortcut that accepts the
    strategy's own assignment (``moved=-1``)."""
    rng = np.random.default_rng(50_000 + seed)
    case = random_case(rng, max_partitions=7, max_members=3, max_topics=3)
    if rng.random() < 0.5:  # half the cases: one member connects every topic group
        case[3][0, :] = True
    load, members_of, size, keep, total_owned, _ = _tables(case)
    assert KEPT.min_moves(load, members_of, size, keep, total_owned, -1, _MANY_GROUPS) == brute_force(*case)


@pytest.mark.parametrize("seed", range(40))
def test_descent_matches_lp_on_larger_groups(seed):
    """Up to 24 members, 6 topics, 300 partitions (test_optimality's LP seeds), every round through the descent."""
    rng = np.random.default_rng(60_000 + seed)
    case = random_case(rng, max_partitions=300, max_members=24, max_topics=6)
    load, members_of, size, keep, total_owned, _ = _tables(case)
    assert KEPT.min_moves(load, members_of, size, keep, total_owned, -1, _MANY_GROUPS) == lp_oracle(*case)


def test_leaves_malformed_tables_to_python():
    """Tables the Python functions would fail on get -1, so that Python raises its own error."""
    assert KEPT.min_moves([1, 1], [[0, 2]], [2], [1, 1], 2, 0, 3) == -1  # member 2 of 2
    assert KEPT.min_moves([1, 1], [[0, 1]], [2], [1], 2, 0, 3) == -1  # keep table of another length
