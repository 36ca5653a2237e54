"""KIP-848 broker-side `range` assignor (group-coordinator `RangeAssignor` after KAFKA-16944), here
named `server-range` to tell it from the client-side `range`.

Per topic, the topic's subscribers in `MemberInfo` order (static members first by
`group.instance.id`, then the others by member id) take contiguous ranges of `P // N` partitions, the
first `P % N` of them one more. It ignores the previous assignment and racks, and lists every member.

Kafka has a homogeneous path (topics of the first sorted member, all members as subscribers) and a
heterogeneous one (each topic's own subscribers); when all subscriptions are equal the two coincide,
so one vectorised path serves both. Subscribed topics without metadata are left out, as the
coordinator does before calling the assignor.
"""

from __future__ import annotations

import numpy as np

from assignors.model import GroupSpec, even_shares, ids_by_owner


class ServerRangeAssignor:
    """`server-range`: co-partitioned contiguous ranges, stable for static members."""

    name = "server-range"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        m = spec.num_members
        if m == 0:
            return []
        members, offsets = spec.topic_subscribers
        owners = np.full(spec.num_partitions, -1, dtype=np.int64)
        for t in np.flatnonzero(np.diff(offsets)).tolist():
            subscribers = members[offsets[t] : offsets[t + 1]]
            sizes = even_shares(int(spec.topic_sizes[t]), subscribers.size)
            start = int(spec.topic_start[t])
            owners[start : start + int(spec.topic_sizes[t])] = np.repeat(subscribers, sizes)
        return ids_by_owner(owners, m)
