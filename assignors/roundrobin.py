"""Kafka's client `RoundRobinAssignor` ("roundrobin").

Kafka walks every partition of the subscribed topics (topics in name order, partitions ascending) with
a cursor over the circular member list in `MemberInfo` order, skipping members not subscribed to the
partition's topic. Within one topic that is plain cycling over the topic's subscribers, starting at
the first subscriber at or after the cursor, so each topic is one vectorised step: O(topics) Python
work, O(partitions) numpy work, for any mix of subscriptions.
"""

from __future__ import annotations

import sys

import numpy as np

from assignors.model import SMALL_GROUP, GroupSpec, ids_by_owner


class RoundRobinAssignor:
    name = "roundrobin"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        return ids_by_owner(self.owners(spec), spec.num_members)

    def owners(self, spec: GroupSpec) -> np.ndarray:
        """int32 member index per global partition id (-1: nobody): `assign` without the per-member lists."""
        if spec.num_partitions <= SMALL_GROUP:
            return _small_round_robin(spec)
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


def _small_round_robin(spec: GroupSpec) -> np.ndarray:
    """The same walk in plain Python, for small groups: the int32 owners, each topic's turn written as native
    int32 bytes into one buffer that `np.frombuffer` wraps (converting a list of Python ints cost more)."""
    rank = [0] * spec.num_members
    for r, m in enumerate(spec.info_order):
        rank[m] = r
    subscribers = spec.small_subscribers
    starts, sizes = spec.topic_start.tolist(), spec.topic_sizes.tolist()
    order = sys.byteorder
    buf = bytearray((-1).to_bytes(4, order, signed=True) * spec.num_partitions)
    cursor = 0
    for t in spec.topics_by_name.tolist():
        subs = subscribers[t]
        if not subs:
            continue
        k = next((i for i, m in enumerate(subs) if rank[m] >= cursor), 0)  # first subscriber at the cursor
        turn = subs[k:] + subs[:k]
        size = sizes[t]
        rounds, rest = divmod(size, len(turn))
        block = b"".join([m.to_bytes(4, order, signed=True) for m in turn])
        buf[4 * starts[t]:4 * starts[t + 1]] = block * rounds + block[:4 * rest]
        cursor = (rank[turn[(size - 1) % len(turn)]] + 1) % spec.num_members  # past the last one served
    return np.frombuffer(buf, dtype=np.int32)
