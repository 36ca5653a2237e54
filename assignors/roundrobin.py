"""Kafka's client `RoundRobinAssignor` ("roundrobin").

Kafka walks every partition of the subscribed topics (topics in name order, partitions ascending) with
a cursor over the circular member list in `MemberInfo` order, skipping members not subscribed to the
partition's topic. Within one topic that is plain cycling over the topic's subscribers, starting at
the first subscriber at or after the cursor, so each topic is one vectorised step: O(topics) Python
work, O(partitions) numpy work, for any mix of subscriptions.
"""

from __future__ import annotations

import numpy as np

from assignors.model import GroupSpec, ids_by_owner


class RoundRobinAssignor:
    name = "roundrobin"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        order = spec.member_info_order
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size)
        subscribers, offsets = spec.topic_subscribers
        owners = np.full(spec.num_partitions, -1, dtype=np.int64)
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
        return ids_by_owner(owners, spec.num_members)
