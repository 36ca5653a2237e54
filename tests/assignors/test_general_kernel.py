"""The sticky engine's general builder in C (`assignors/reassign_kernel.pyx`) against its specification
(`assignors.sticky_engine.general`), side by side through the public API: each group's sticky and
cooperative-sticky lists (in Kafka's order), owners and errors in this process, which runs the kernel where it is
built, and in a pure-Python process (`REBALANCE_PURE_PYTHON=1`), which runs the specification. The groups: random
small and bigger ones with mixed subscriptions (some empty), claims that overlap, miss, or name partitions the
claimant no longer subscribes to, generations from a few values (older ones make prevAssignment entries), with and
without racks (rack logic runs the specification on both sides: the selection is what is checked there); and
variants of a replayed group whose passes repeat a state. `test_cases_reach_the_rare_branches` checks on the
specification that these cases reach Java's NullPointerException on a fixed prevAssignment owner, moves that take
another partition back (`getTheActualPartitionToBeMoved`) and passes that start from a state seen before."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from assignors import KafkaAssignorError, Member, build_spec, get_assignor
from assignors.compiled import kernel
from streaming.build import PURE_PYTHON_ENV
from tests.assignors.test_sticky_engine_internals import G00190_MEMBERS, G00190_TOPICS, _g00190_tps

ROOT = Path(__file__).resolve().parents[2]
needs_kernel = pytest.mark.skipif(kernel("assignors.reassign_kernel") is None,
                                  reason="the C kernel is not built or not loaded here (pure-Python run)")

TOPICS = ("t0", "t1", "t2", "t10", "orders", "zz")
MEMBERS = ("consumer1", "consumer2", "consumer10", "c0", "c1", "m-a", "zeta", "Alpha", "b", "k7", "k8", "k9")
RACKS = ("a", "b", "c")
Group = tuple[dict[str, int], dict[str, Member], dict[str, list[list[str]]] | None]


def random_groups(n: int, seed: int = 1315, racks: bool = False, big: float = 0.3) -> Iterator[Group]:
    """Mixed subscriptions, overlapping and stale claims, generations from a few values; `big` of them with up to
    40 partitions a topic and 12 members; with `racks`, member racks and replica racks."""
    rng = random.Random(seed)
    for _ in range(n):
        names = rng.sample(TOPICS, rng.randint(1, len(TOPICS)))
        large = rng.random() < big
        topics = {t: rng.randint(0 if rng.random() < 0.05 else 1, 40 if large else 9) for t in names}
        ids = rng.sample(MEMBERS, rng.randint(2, len(MEMBERS) if large else 7))
        claimable = [(t, p) for t, n in topics.items() for p in range(n)]
        members = {}
        for mid in ids:
            subs = rng.sample(names, rng.randint(0 if rng.random() < 0.1 else 1, len(names)))
            owned = rng.sample(claimable, min(len(claimable), rng.randint(0, 3 * len(claimable) // len(ids) + 2)))
            rack = rng.choice((*RACKS, None)) if racks else None
            members[mid] = Member(topics=subs, owned=owned, generation=rng.choice((-1, 1, 2, 3, 3, 3)), rack=rack)
        layout = {t: [rng.sample(RACKS, rng.randint(0, 2)) for _ in range(k)] for t, k in topics.items()}
        yield topics, members, layout if racks else None


def regrouped_groups(n: int) -> Iterator[Group]:
    """Groups of 40-120 members over up to 3,000 partitions after a round: some leave, some change subscriptions,
    some report an older generation."""
    rng = random.Random(4242)
    for _ in range(n):
        topics = {f"topic-{i}": rng.randint(1, 250) for i in range(rng.randint(3, 20))}
        names = list(topics)
        members = {f"m{i:03d}": Member(rng.sample(names, rng.randint(1, len(names))))
                   for i in range(rng.randint(40, 120))}
        prev = get_assignor("sticky").assign(build_spec(topics, members))
        spec = build_spec(topics, members)
        nxt = {}
        for (mid, member), ids in zip(members.items(), prev, strict=True):
            if rng.random() < 0.15:
                continue
            subs = member.topics if rng.random() < 0.85 else rng.sample(names, rng.randint(1, len(names)))
            owned = [(spec.topic_names[int(spec.partition_topic[g])], int(spec.partition_number[g])) for g in ids]
            nxt[mid] = Member(subs, owned=owned, generation=rng.choice((1, 1, 1, 0)))
        nxt["joiner"] = Member(rng.sample(names, rng.randint(1, len(names))))
        yield topics, nxt, None


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
        yield G00190_TOPICS, members, None


CASES: dict[str, Callable[[], Iterator[Group]]] = {
    "random": lambda: random_groups(1200),
    "random with racks": lambda: random_groups(300, seed=77, racks=True),
    "regrouped": lambda: regrouped_groups(25),
    "g00190": lambda: g00190_variants(120),
}

# `GroupSpec.member_topics` as the kernel may meet them: int32 arrays (what `build_spec` and the streaming layout
# make), int64 ones, strided views
TOPIC_FORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "int32": lambda topics: topics,
    "int64": lambda topics: topics.astype(np.int64),
    "strided": lambda topics: np.repeat(topics, 2)[::2],
}


def outcome(group: Group, form: str = "int32") -> list:
    """Per sticky strategy: its lists (global ids in Kafka's order) and owners, or Kafka's error."""
    got = []
    for strategy in ("sticky", "cooperative-sticky"):
        spec = build_spec(*group)
        spec.member_topics = [TOPIC_FORMS[form](topics) for topics in spec.member_topics]
        assignor = get_assignor(strategy)
        try:
            got.append([[ids.tolist() for ids in assignor.assign(spec)], assignor.owners(spec).tolist()])
        except KafkaAssignorError as err:
            got.append([err.exception, err.message])
    return got


def outcomes(case: str) -> list:
    return [outcome(group) for group in CASES[case]()]


_PURE_RUN = """
import json, sys
from streaming.build import prefer_fresh_sources
prefer_fresh_sources()
from assignors.compiled import kernel
from tests.assignors.test_general_kernel import outcomes
print(json.dumps([kernel("assignors.reassign_kernel") is None, outcomes(sys.argv[1])]))
"""


@needs_kernel
@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_the_specification(case: str):
    path = [str(ROOT), str(ROOT / "tests" / "assignors"), os.environ.get("PYTHONPATH", "")]  # as pytest's
    env = {**os.environ, PURE_PYTHON_ENV: "1", "PYTHONPATH": os.pathsep.join(path)}
    run = subprocess.run([sys.executable, "-c", _PURE_RUN, case], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    without_kernel, specification = json.loads(run.stdout.splitlines()[-1])
    assert without_kernel
    groups = list(CASES[case]())
    assert len(specification) == len(groups)
    for group, expected in zip(groups, specification, strict=True):
        assert outcome(group) == expected, group


@needs_kernel
@pytest.mark.parametrize("form", sorted(set(TOPIC_FORMS) - {"int32"}))
def test_kernel_reads_member_topics_in_any_form(form: str):
    for group in random_groups(200):
        assert outcome(group, form) == outcome(group), group


@pytest.mark.pure_python("assignors.sticky_engine.balance")
def test_cases_reach_the_rare_branches(monkeypatch):
    from assignors.sticky_engine import balance

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

    monkeypatch.setattr(balance.PartitionMovements, "actual_partition", actual_partition)
    monkeypatch.setattr(balance.Reassignment, "perform", perform_counted)
    monkeypatch.setattr(balance.Reassignment, "_state", state_counted)
    errors = sum(isinstance(outcome(group)[0][0], str) for group in random_groups(1200))
    assert errors >= 10 and counts["other partition moved"] >= 10, (errors, counts)
    for group in g00190_variants(120):
        outcome(group)
    assert counts["state seen again"] >= 10, counts
