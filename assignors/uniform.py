"""KIP-848 broker-side `uniform` assignor (group-coordinator `UniformAssignor`, Kafka 4.0).

How Kafka's inputs map onto a `GroupSpec`:

* previous target assignment = each member's `owned`; `memberIds()` order = `spec.member_ids` order;
* subscribed topic ids = the member's subscribed topics that have metadata (the coordinator drops
  unknown names before calling the assignor, so Kafka's "unknown topic" exception cannot happen);
* subscription type: HOMOGENEOUS iff every subscribed topic *name* has one subscriber per member, or
  nobody subscribes to anything — what the coordinator computes from subscribed names;
* Java `HashSet<Uuid>` iteration order of topics = the caller's metadata order (`spec.topic_names`);
* a member's previous-assignment map is walked topic by topic in the order topics first appear in its
  `owned`, partitions in `owned` order (Kafka walks the member's map and sets in their iteration order);
* Uuid order, the last tie-break of the heterogeneous topic sort, = the metadata order index;
* a partition claimed by several members (impossible for a real target assignment) stays with the
  first claimant in member order.

Kafka returns no entry for a member whose builder produced none (a homogeneous group whose first member
subscribes to nothing returns {}); our API lists every member, so such members get [].
"""

from __future__ import annotations

import numpy as np

from assignors.model import GroupSpec, even_shares, ids_by_owner

MAX_ITERATION_COUNT = 16  # balancing passes of the heterogeneous builder


def subscription_is_homogeneous(spec: GroupSpec) -> bool:
    """The coordinator's `SubscriptionType`: True iff all members subscribe to the same topic names."""
    if not spec.subscriptions:
        return True
    head = spec.subscriptions[0]
    first = frozenset(head)
    # Members mostly share one subscription tuple: identity and order-equal checks skip the set build.
    return all(s is head or s == head or frozenset(s) == first for s in spec.subscriptions[1:])


def _claims(spec: GroupSpec) -> tuple[np.ndarray, np.ndarray]:
    """All owned ids with their member index, in member order; repeated claims dropped (first wins)."""
    lens = [o.size for o in spec.owned]
    total = sum(lens)
    if total == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    ids = np.concatenate(spec.owned).astype(np.int64, copy=False)
    owner = np.repeat(np.arange(spec.num_members, dtype=np.int64), lens)
    _, first = np.unique(ids, return_index=True)
    if first.size != ids.size:
        first.sort()
        ids, owner = ids[first], owner[first]
    return ids, owner


class UniformAssignor:
    """`uniform`: balanced and sticky, perfectly balanced when all subscriptions are equal."""

    name = "uniform"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        if spec.num_members == 0:
            return []
        if subscription_is_homogeneous(spec):
            return _assign_homogeneous(spec)
        return _assign_heterogeneous(spec)


def _empty(num_members: int) -> list[np.ndarray]:
    return [np.empty(0, dtype=np.int64) for _ in range(num_members)]


def _assign_homogeneous(spec: GroupSpec) -> list[np.ndarray]:
    """`UniformHomogeneousAssignmentBuilder`: quotas in member order, keep owned up to the quota."""
    m = spec.num_members
    topics = np.unique(spec.member_topics[0])  # HashSet order = metadata order
    if topics.size == 0:
        return _empty(m)
    subscribed = np.zeros(len(spec.topic_names), dtype=bool)
    subscribed[topics] = True
    total = int(spec.topic_sizes[topics].sum())
    quota = even_shares(total, m)

    ids, owner = _claims(spec)
    topic_of = spec.partition_topic[ids]
    keep = subscribed[topic_of]  # owned partitions of unsubscribed topics are dropped
    ids, owner, topic_of = ids[keep], owner[keep], topic_of[keep]

    # Walk each member's previous assignment topic by topic (first appearance), partitions in order.
    group = owner * len(spec.topic_names) + topic_of
    _, first_pos, inverse = np.unique(group, return_index=True, return_inverse=True)
    walk = np.lexsort((np.arange(ids.size), first_pos[inverse]))
    walked, walked_owner = ids[walk], owner[walk]
    held = np.bincount(walked_owner, minlength=m)
    starts = np.concatenate(([0], np.cumsum(held)[:-1]))
    rank = np.arange(walked.size) - starts[walked_owner]
    kept_mask = rank < quota[walked_owner]

    assigned = np.zeros(spec.num_partitions, dtype=bool)
    assigned[ids] = True
    never_assigned = np.flatnonzero(subscribed[spec.partition_topic] & ~assigned)
    unassigned = np.concatenate((never_assigned, walked[~kept_mask]))
    remaining = quota - np.minimum(held, quota)
    if int(remaining.sum()) != unassigned.size:
        raise AssertionError("uniform: partitions were left unassigned")

    owners = np.full(spec.num_partitions, -1, dtype=np.int64)
    owners[walked[kept_mask]] = walked_owner[kept_mask]
    owners[unassigned] = np.repeat(np.arange(m, dtype=np.int64), remaining)
    return ids_by_owner(owners, m)


def _assign_heterogeneous(spec: GroupSpec) -> list[np.ndarray]:
    """`UniformHeterogeneousAssignmentBuilder` (KAFKA-17710): import, water-fill, then balance per topic."""
    return _HeterogeneousBuilder(spec).build()


class _HeterogeneousBuilder:
    def __init__(self, spec: GroupSpec) -> None:
        self.spec = spec
        m = spec.num_members
        self.subscribers: dict[int, list[int]] = {}
        for member, topics in enumerate(spec.member_topics):
            for t in topics.tolist():
                self.subscribers.setdefault(t, []).append(member)
        self.sizes = [0] * m
        self.owners = np.full(spec.num_partitions, -1, dtype=np.int64)

    def sorted_topics(self, topics: list[int]) -> list[int]:
        """Partitions per subscriber descending, then subscriber count ascending, then topic id ascending."""
        sizes = self.spec.topic_sizes

        def key(t: int) -> tuple[float, int, int]:
            count = len(self.subscribers[t])
            return (-(int(sizes[t]) / count), count, t)

        return sorted(topics, key=key)

    def build(self) -> list[np.ndarray]:
        spec = self.spec
        if not self.subscribers:
            return _empty(spec.num_members)
        self.import_previous()
        self.assign_unassigned()
        self.balance()
        return ids_by_owner(self.owners, spec.num_members)

    def import_previous(self) -> None:
        """Keep every owned partition of a still-subscribed topic (no quotas in this phase)."""
        spec = self.spec
        ids, owner = _claims(spec)
        if ids.size == 0:
            return
        num_topics = len(spec.topic_names)
        wanted = np.concatenate(
            [mem * num_topics + topics.astype(np.int64) for mem, topics in enumerate(spec.member_topics)]
        )
        keep = np.isin(owner * num_topics + spec.partition_topic[ids], wanted)
        ids, owner = ids[keep], owner[keep]
        self.owners[ids] = owner
        self.sizes = np.bincount(owner, minlength=spec.num_members).tolist()

    def assign_unassigned(self) -> None:
        """Hand each topic's free partitions to its least-loaded subscribers by water-filling."""
        spec = self.spec
        pending = {}
        for t in self.subscribers:
            start = int(spec.topic_start[t])
            free = np.flatnonzero(self.owners[start : start + int(spec.topic_sizes[t])] < 0)
            if free.size:
                pending[t] = free + start
        for t in self.sorted_topics(list(pending)):
            free = pending[t]
            members = sorted(self.subscribers[t], key=lambda i: (self.sizes[i], i))
            ranks = _water_fill([self.sizes[i] for i in members], free.size)
            receivers = np.asarray(members, dtype=np.int64)[ranks]
            self.owners[free] = receivers
            for member, count in zip(*np.unique(receivers, return_counts=True), strict=True):
                self.sizes[int(member)] += int(count)

    def balance(self) -> None:
        """Move partitions from most- to least-loaded subscribers, topic by topic, up to 16 passes."""
        topics = self.sorted_topics([t for t, subs in self.subscribers.items() if len(subs) >= 2])
        if not topics:
            return
        last_changed = -1
        for _ in range(MAX_ITERATION_COUNT):
            for index, t in enumerate(topics):
                if index == last_changed:
                    return
                moved = self.balance_topic(t)
                if moved > 0 or last_changed == -1:
                    last_changed = index

    def balance_topic(self, t: int) -> int:
        sizes = self.sizes
        balancer = _Balancer(sizes, self.subscribers[t])
        if balancer.imbalance <= 1:
            return 0
        start = int(self.spec.topic_start[t])
        owners = self.owners[start : start + int(self.spec.topic_sizes[t])]
        grouped = np.lexsort((np.arange(owners.size), owners))  # partitions grouped by owner, ascending
        grouped_owner = owners[grouped]
        uniq, first, counts = np.unique(grouped_owner, return_index=True, return_counts=True)
        begin = dict(zip(uniq.tolist(), first.tolist(), strict=True))
        end = dict(zip(uniq.tolist(), (first + counts).tolist(), strict=True))
        grouped_list = grouped.tolist()
        moved = 0
        while not balancer.is_balanced():
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if end.get(most, 0) - begin.get(most, 0) <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            end[most] -= 1
            partition = grouped_list[end[most]]
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            owners[partition] = least  # a view into self.owners
            sizes[most] -= 1
            sizes[least] += 1
            moved += 1
        return moved


def _water_fill(sorted_sizes: list[int], n: int) -> np.ndarray:
    """Receiver ranks (into the size-sorted member list) of `n` partitions handed out by water-filling.

    Level by level from the smallest size: every member whose size is at most the level receives one
    partition per level, in sorted order — `MemberAssignmentBalancer.nextLeastLoadedMember` repeated.
    """
    sizes = np.asarray(sorted_sizes, dtype=np.int64)
    k = sizes.size
    base = int(sizes[0])
    # Members at or below each level; levels beyond the largest size hold everybody.
    span = int(sizes[-1]) - base + 1
    in_range = np.searchsorted(sizes, base + np.arange(span), side="right")
    full = np.cumsum(in_range)
    if n <= full[-1]:
        levels = int(np.searchsorted(full, n, side="left")) + 1
        widths = in_range[:levels].copy()
    else:
        rest = n - int(full[-1])
        widths = np.concatenate((in_range, np.full(-(-rest // k), k, dtype=np.int64)))
    widths_total = np.cumsum(widths)
    starts = widths_total - widths
    ranks = np.arange(int(widths_total[-1]), dtype=np.int64) - np.repeat(starts, widths)
    return ranks[:n]


class _Balancer:
    """`MemberAssignmentBalancer`: a least-loaded range growing right and a most-loaded range growing left
    over one topic's subscribers sorted by (size, index); `sizes` is the live per-member size list."""

    def __init__(self, sizes: list[int], members: list[int]) -> None:
        self.sizes = sizes
        self.order = sorted(members, key=lambda i: (sizes[i], i))
        n = len(self.order)
        low, high = sizes[self.order[0]], sizes[self.order[-1]]
        self.imbalance = high - low
        self.least_end = 0  # exclusive end of the least-loaded range
        self.least_count = low - 1
        self.next_least = 0
        self.most_start = n  # inclusive start of the most-loaded range
        self.most_end = n  # exclusive end (members without partitions to give are swapped out)
        self.most_count = high + 1
        self.next_most = n - 1

    def next_least_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = order[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = sizes[order[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = order[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        """Swap the member last returned by `next_most_loaded` out of the most-loaded range."""
        i, last = self.next_most + 1, self.most_end - 1
        self.order[i], self.order[last] = self.order[last], self.order[i]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
