"""The tally kernel (`assignors/tally_kernel.pyx`) against `TopicGroups.tally_python`, its spec, side by side
on random counts: topics with and without subscribers, owners outside the groups, and triples out of range
(the kernel answers None where the Python method raises)."""

from __future__ import annotations

import random

import pytest

from assignors.compiled import kernel
from assignors.optimality import TopicGroups

K = kernel("assignors.tally_kernel")


@pytest.mark.skipif(K is None, reason="the tally kernel is not built (pure-Python run)")
@pytest.mark.parametrize("seed", range(300))
def test_kernel_tallies_what_python_tallies(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        # few members and topics, or enough topic groups that the kernel's tables outgrow its stack buffer
        members, topics = (rng.randint(0, 12), rng.randint(1, 6)) if rng.random() < 0.9 else (40, 16)
        allowed = [frozenset(m for m in range(members) if rng.random() < 0.6) for _ in range(topics)]
        groups = TopicGroups(allowed, members)
        counts: list[int] = []
        for t in sorted(rng.randint(0, topics - 1) for _ in range(rng.randint(0, 16))):
            counts += (t, rng.randint(-1, members - 1), rng.randint(-1, members - 1), rng.randint(1, 1_000))
        if counts and rng.random() < 0.1:
            counts[rng.randrange(len(counts) // 4) * 4 + rng.randrange(3)] = rng.choice((-2, members, topics, 1 << 40))
        try:
            want = groups.tally_python(counts, topics)
        except ValueError:
            want = None
        assert K.tally(counts, groups.topic_group, groups.allowed, members, len(groups.members_of), topics) == want
