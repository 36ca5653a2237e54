"""Kafka's client `RoundRobinAssignor` ("roundrobin").

Kafka walks every partition of the subscribed topics (topics in name order, partitions ascending) with
a cursor over the circular member list in `MemberInfo` order, skipping members not subscribed to the
partition's topic. Within one topic that is plain cycling over the topic's subscribers, starting at
the first subscriber at or after the cursor, so each topic is one vectorised step: O(topics) Python
work, O(partitions) numpy work, for any mix of subscriptions.
"""

from __future__ import annotations

import numpy as np

from assignors.model import SMALL_GROUP, GroupSpec, ids_by_owner


class RoundRobinAssignor:
    name = "roundrobin"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        return ids_by_owner(self.owners(spec), spec.num_members)

    def owners(self, spec: GroupSpec) -> np.ndarray:
        """int32 member index per global partition id (-1: nobody): `assign` without the per-member lists."""
        if spec.num_partitions <= SMALL_GROUP:
            return np.array(_small_round_robin(spec), dtype=np.int32)
        order = spec.member_info_order
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        subscribers, offsets = spec.topic_subscribers
        owners = np.full(spec.num_partitions, -1, dtype=np.int32)
        cursor = 0  # rank of the member the circular iterator points at
        for t in spec.topics_by_name:
            subs = subscribers[offsets[t] : offsets[t + 1]]
            if subs.size == 0:
                continue
            ranks = rank[subs]  # ascending: subscribers are in MemberInfo order
            first = int(np.searchsorted(ranks, cursor)) % subs.size
            n = int(spec.topic_sizes[t])
            turn = (first + np.arange(n)) % subs.size
            owners[spec.topic_start[t] : spec.topic_start[t + 1]] = subs[turn]
            cursor = (int(ranks[turn[-1]]) + 1) % order.size
        return owners


def _small_round_robin(spec: GroupSpec) -> list[int]:
    """The same walk in plain Python, for small groups: the owners."""
    rank = [0] * spec.num_members
    for r, m in enumerate(spec.info_order):
        rank[m] = r
    subscribers = spec.small_subscribers
    starts, sizes = spec.topic_start.tolist(), spec.topic_sizes.tolist()
    owners = [-1] * spec.num_partitions
    cursor = 0
    for t in spec.topics_by_name.tolist():
        subs = subscribers[t]
        if not subs:
            continue
        k = next((i for i, m in enumerate(subs) if rank[m] >= cursor), 0)  # first subscriber at the cursor
        turn = subs[k:] + subs[:k]
        rounds, rest = divmod(sizes[t], len(turn))
        owners[starts[t]:starts[t + 1]] = turn * rounds + turn[:rest]
        cursor = (rank[turn[(sizes[t] - 1) % len(turn)]] + 1) % spec.num_members  # past the last one served
    return owners
