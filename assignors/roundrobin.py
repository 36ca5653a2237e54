"""Kafka's client `RoundRobinAssignor` ("roundrobin").

Kafka walks every partition of the subscribed topics (topics in name order, partitions ascending) with
a cursor over the circular member list in `MemberInfo` order, skipping members not subscribed to the
partition's topic. Within one topic that is plain cycling over the topic's subscribers, starting at
the first subscriber at or after the cursor, so each topic is one vectorised step: O(topics) Python
work, O(partitions) numpy work, for any mix of subscriptions.
"""

from __future__ import annotations

import sys
from typing import Final

import numpy as np

from assignors.model import SMALL_GROUP, GroupSpec, ids_by_owner
from assignors.spec import INT32, int32_codes

_NOBODY: Final = (-1).to_bytes(4, sys.byteorder, signed=True)  # an int32 owner of -1, native byte order


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
    """The same walk in plain Python, for small groups: the int32 owners, each topic's turn as native int32 bytes,
    joined in topic order into the buffer `np.frombuffer` wraps (converting a list of Python ints cost more)."""
    num_members = spec.num_members
    rank = [0] * num_members
    for r, m in enumerate(spec.info_order):
        rank[m] = r
    subscribers = spec.small_subscribers
    sizes, by_name = spec.topic_lists
    codes = int32_codes(num_members)
    blocks: list[bytes] = [b""] * len(sizes)  # per topic
    cursor = 0
    for t in by_name:
        subs = subscribers[t]
        size = sizes[t]
        n = len(subs)
        if n == 0:
            blocks[t] = _NOBODY * size
            continue
        k = 0  # the first subscriber at the cursor (none: the first one)
        while k < n and rank[subs[k]] < cursor:
            k += 1
        if k == n:
            k = 0
        block = b"".join([codes[subs[(k + i) % n]] for i in range(n)])
        rounds = size // n
        rest = size - rounds * n
        blocks[t] = block * rounds + block[:4 * rest]
        cursor = (rank[subs[(k + size - 1) % n]] + 1) % num_members  # past the last one served
    return np.frombuffer(b"".join(blocks), INT32)
