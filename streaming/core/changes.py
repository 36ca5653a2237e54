"""What moved in one round, per member: the assigned and revoked partitions of a diff record's `changes`
(docs/events-and-diffs.md §2)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

import numpy as np

Changes = dict[str, dict[str, dict[str, list[int]]]]  # member -> {"assigned"|"revoked": {topic: [partitions]}}


def member_changes(
    prev_owner: np.ndarray,
    new_owner: np.ndarray,
    member_ids: Sequence[str],
    topic_names: Sequence[str],
    topic_sizes: np.ndarray,
) -> tuple[Changes, int, int]:
    """Per-member assigned/revoked partitions between two owner arrays over the same layout.

    Owners are indices into `member_ids` (-1: nobody); `topic_sizes`: partitions per topic of `topic_names`
    (0: a deleted topic). Members come in `member_ids` order, topics in layout order, partitions ascending.
    Returns (changes, assigned count, revoked count). One pass over the changed partitions (ascending, so
    topics come in layout order and partitions ascending), each side collected per member (`_Side`).
    """
    changed = (prev_owner != new_owner).nonzero()[0]
    bounds: list[int] = [0, *accumulate(topic_sizes.tolist())]
    assigned, revoked = _Side(len(member_ids)), _Side(len(member_ids))
    end = -1
    name = ""
    first = t = 0
    ids: list[int] = changed.tolist()
    news: list[int] = new_owner[changed].tolist()
    prevs: list[int] = prev_owner[changed].tolist()
    for k, i in enumerate(ids):
        n, p = news[k], prevs[k]
        if i >= end:  # the next topic holding a change
            t = bisect_right(bounds, i) - 1
            end, name, first = bounds[t + 1], topic_names[t], bounds[t]
        if n >= 0:
            assigned.add(n, t, name, i - first)
        if p >= 0:
            revoked.add(p, t, name, i - first)
    out: Changes = {}
    for m, gained in enumerate(assigned.topics):
        lost = revoked.topics[m]
        if gained is not None or lost is not None:
            out[member_ids[m]] = {"assigned": {} if gained is None else gained, "revoked": {} if lost is None else lost}
    return out, assigned.count, revoked.count


class _Side:
    """One side ("assigned" or "revoked") of a round's changes, collected in partition order topic by topic, in
    tables indexed by member; each side keeps its own per-member topics (`member_changes` pairs them)."""

    def __init__(self, members: int) -> None:
        self.count = 0
        self.topic = [-1] * members  # member -> the topic of its list below (-1: none yet)
        self.lists: list[list[int]] = [[]] * members  # member -> its partitions of that topic
        self.topics: list[dict[str, list[int]] | None] = [None] * members  # member -> its topics (None: no change)

    def add(self, member: int, topic: int, name: str, number: int) -> None:
        """Partition `number` of topic `name` (index `topic`)."""
        self.count += 1
        if self.topic[member] == topic:
            self.lists[member].append(number)
            return
        self.topic[member] = topic
        topics = self.topics[member]
        if topics is None:
            topics = self.topics[member] = {}
        self.lists[member] = topics[name] = [number]
