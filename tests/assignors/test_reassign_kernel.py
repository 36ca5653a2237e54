"""The C kernel of the sticky engine's small general path (`assignors/reassign_kernel.pyx`) against the Python
steps it mirrors (`_SmallGeneralBuilder`, `_Reassignment`): the same lists in Kafka's order, owners and errors
on random small groups with mixed subscriptions, random claims and generations, and on variants of a group whose
passes repeat a state. `test_cases_reach_the_rare_branches` checks on the Python steps that these cases reach
Java's NullPointerException on a fixed prevAssignment owner, moves that take another partition back
(`getTheActualPartitionToBeMoved`) and passes that start from a state seen before. (Java's revert rule never
undid a round in 20,000 such groups: its branch is written as the Python one is.)"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from assignors import KafkaAssignorError, Member
from assignors.model import build_spec
from assignors.sticky_engine import balance, general
from assignors.sticky_engine.engine import run_engine
from tests.assignors.test_sticky_engine_internals import G00190_MEMBERS, G00190_TOPICS, _g00190_tps

KERNEL = general._K
needs_kernel = pytest.mark.skipif(KERNEL is None, reason="the C kernel is not built (pure-Python run)")

TOPICS = ("t0", "t1", "t2", "t10", "orders", "zz")
MEMBERS = ("consumer1", "consumer2", "consumer10", "c0", "c1", "m-a", "zeta", "Alpha", "b", "k7", "k8", "k9")
Group = tuple[dict[str, int], dict[str, Member]]


def random_groups(n: int) -> Iterator[Group]:
    """Mixed subscriptions (some empty), claims that overlap, miss, or name partitions the claimant no longer
    subscribes to, generations from a few values (older ones make prevAssignment entries)."""
    rng = random.Random(1315)
    for _ in range(n):
        names = rng.sample(TOPICS, rng.randint(1, len(TOPICS)))
        big = rng.random() < 0.3
        topics = {t: rng.randint(0 if rng.random() < 0.05 else 1, 40 if big else 9) for t in names}
        ids = rng.sample(MEMBERS, rng.randint(2, len(MEMBERS) if big else 7))
        claimable = [(t, p) for t, n in topics.items() for p in range(n)]
        members = {}
        for mid in ids:
            subs = rng.sample(names, rng.randint(0 if rng.random() < 0.1 else 1, len(names)))
            owned = rng.sample(claimable, min(len(claimable), rng.randint(0, 3 * len(claimable) // len(ids) + 2)))
            members[mid] = Member(topics=subs, owned=owned, generation=rng.choice((-1, 1, 2, 3, 3, 3)))
        yield topics, members


def g00190_variants(n: int) -> Iterator[Group]:
    """Replayed group g00190 (passes that undo each other forever in Java, see
    tests/assignors/test_sticky_engine_internals.py) and variants: dropped claims, older generations, other
    subscriptions."""
    rng = random.Random(190)
    names = list(G00190_TOPICS)
    for case in range(n):
        members = {}
        for m, (subs, owned, _) in G00190_MEMBERS.items():
            topics = [f"g00190.{t}" for t in subs.split()]
            claims = _g00190_tps(owned)
            generation = 30
            if case and rng.random() < 0.3:
                claims = rng.sample(claims, rng.randint(0, len(claims)))
            if case and rng.random() < 0.2:
                generation = rng.choice((-1, 29))
            if case and rng.random() < 0.1:
                topics = rng.sample(names, rng.randint(1, 3))
            members[m] = Member(topics=topics, owned=claims, generation=generation)
        yield G00190_TOPICS, members


# `GroupSpec.member_topics` as the kernel may meet them: int32 arrays (what `build_spec` and the streaming layout
# make), int64 ones, strided views
TOPIC_FORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "int32": lambda topics: topics,
    "int64": lambda topics: topics.astype(np.int64),
    "strided": lambda topics: np.repeat(topics, 2)[::2],
}


def outcome(group: Group, form: str = "int32") -> tuple:
    spec = build_spec(*group, None)
    spec.member_topics = [TOPIC_FORMS[form](topics) for topics in spec.member_topics]
    try:
        result = run_engine(spec)
    except KafkaAssignorError as err:
        return err.exception, err.message
    return [ids.tolist() for ids in result.assignment], result.owners.tolist()


@needs_kernel
@pytest.mark.parametrize("cases", [lambda: random_groups(1500), lambda: g00190_variants(150)])
def test_kernel_matches_python_steps(cases: Callable[[], Iterator[Group]]):
    with pytest.MonkeyPatch.context() as patched:
        for group in cases():
            with_kernel = outcome(group)
            patched.setattr(general, "_K", None)
            python = outcome(group)
            patched.setattr(general, "_K", KERNEL)
            assert with_kernel == python, group


@needs_kernel
@pytest.mark.parametrize("form", sorted(TOPIC_FORMS))
def test_kernel_reads_member_topics_in_any_form(form: str):
    with pytest.MonkeyPatch.context() as patched:
        for group in random_groups(200):
            with_kernel = outcome(group, form)
            patched.setattr(general, "_K", None)
            assert outcome(group) == with_kernel, group
            patched.setattr(general, "_K", KERNEL)


@pytest.mark.pure_python("assignors.sticky_engine.general")
def test_cases_reach_the_rare_branches(monkeypatch):
    counts: Counter[str] = Counter()
    actual, perform, state = (balance.PartitionMovements.actual_partition, balance.Reassignment.perform,
                              balance.Reassignment._state)

    def actual_partition(movements, pid, t, old, new):
        got = actual(movements, pid, t, old, new)
        counts["other partition moved"] += got != pid
        return got

    def perform_counted(moves, partitions):
        moves.states = []
        return perform(moves, partitions)

    def state_counted(moves):
        key = state(moves)
        counts["state seen again"] += key in moves.states
        moves.states.append(key)
        return key

    monkeypatch.setattr(general, "_K", None)
    monkeypatch.setattr(balance.PartitionMovements, "actual_partition", actual_partition)
    monkeypatch.setattr(balance.Reassignment, "perform", perform_counted)
    monkeypatch.setattr(balance.Reassignment, "_state", state_counted)
    errors = sum(isinstance(outcome(group)[0], str) for group in random_groups(1500))
    assert errors >= 10 and counts["other partition moved"] >= 10, (errors, counts)
    for group in g00190_variants(150):
        outcome(group)
    assert counts["state seen again"] >= 10, counts
