"""`rate-balanced`: sticky, balancing messages per second instead of partition counts; deterministic.

Kafka has no such assignor (the open-source lag-based assignors are its nearest kin). It reads the msgs/s of
every partition, an explicit argument (`assignors.registry.assign_owners(..., rates)`); without rates every
partition counts 0 and it balances counts like a sticky assignor. docs/traffic.md states the algorithm and
proves its bounds; tests/assignors/test_rate_balanced.py checks them on random inputs.

Rules (members ranked by id in Java `String` order, so the result does not depend on the order they come in;
partitions named in (topic name, partition) order):

* **Caps.** The rules below run once as if nobody owned anything (that is LPT from scratch); the loads the
  members get there are the caps, handed out among the members with the same subscription by what they held
  before: the highest cap to the member that held the most msgs/s (ties: rank), as Kafka's sticky quotas give
  the extra partition to the members that own more. A member's zero-rate quota is its fair share of the
  partitions without traffic (each split evenly among its topic's subscribers; computed exactly), rounded down,
  or up for as many members as the floors leave partitions over.
* **Stickiness.** A partition's previous owner is the claimant with the highest generation (ties to the smaller
  id) that still subscribes to its topic. Each member keeps its previous partitions with traffic, the busiest
  first, while its load stays within its cap, and its previous partitions without traffic up to its quota (the
  rounded-up one going to members with more to keep, in rank order).
* **The rest**: partitions with traffic, busiest first (longest processing time first, LPT), each to the
  subscribed member with the least msgs/s (ties: rank); then those without traffic, each to the subscribed member
  holding the fewest such partitions (ties: rank).

Racks and `instance_id` are not used.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction

import numpy as np

from assignors.javaorder import java_string_key
from assignors.model import GroupSpec, ids_by_owner
from assignors.weighted import previous_owner


class RateBalancedAssignor:
    name = "rate-balanced"

    def assign(self, spec: GroupSpec, rates: np.ndarray | None = None) -> list[np.ndarray]:
        """Global partition ids per member (`spec.member_ids` order); `rates`: float64 msgs/s per global id
        (None: all 0)."""
        m = spec.num_members
        if m == 0:
            return []
        keys = [java_string_key(mid) for mid in spec.member_ids]
        by_rank = sorted(range(m), key=keys.__getitem__)
        rank = np.empty(m, dtype=np.int64)
        rank[by_rank] = np.arange(m)
        ranks: list[int] = rank.tolist()
        subscribers, offsets = spec.topic_subscribers
        group = _Group(
            [0.0] * spec.num_partitions if rates is None else rates.tolist(), spec.name_rank.tolist(),
            spec.partition_topic.tolist(), ranks, by_rank,
            [tuple(sorted(subscribers[offsets[t]:offsets[t + 1]].tolist(), key=ranks.__getitem__))
             for t in range(len(spec.topic_names))])
        nobody = [-1] * spec.num_partitions
        _, fresh = group.place(nobody, [math.inf] * m)  # a placement from scratch: LPT
        previous: list[int] = previous_owner(spec, rank).tolist()
        owners, _ = group.place(previous, _caps(fresh, previous, group.rate, spec.member_topics, ranks))
        return ids_by_owner(np.array(owners, dtype=np.int64), m)


def _caps(fresh: list[float], previous: list[int], rate: list[float], member_topics: list[np.ndarray],
          ranks: list[int]) -> list[float]:
    """Each member's cap: the loads of the placement from scratch (`fresh`), handed out among the members with the
    same subscription, the highest to the member that held the most msgs/s before (ties: rank)."""
    held: list[list[float]] = [[] for _ in fresh]
    for p, w in enumerate(previous):
        if w >= 0:
            held[w].append(rate[p])
    before = [math.fsum(h) for h in held]
    alike: dict[tuple[int, ...], list[int]] = {}
    for w, topics in enumerate(member_topics):
        alike.setdefault(tuple(sorted(topics.tolist())), []).append(w)
    caps = [0.0] * len(fresh)
    for members in alike.values():
        loads = sorted((fresh[w] for w in members), reverse=True)
        for w, cap in zip(sorted(members, key=lambda w: (-before[w], ranks[w])), loads, strict=True):
            caps[w] = cap
    return caps


class _Group:
    """One call's partitions (msgs/s, name order, topic) and members (rank, each topic's subscribers by rank)."""

    def __init__(self, rate: list[float], name_rank: list[int], topic_of: list[int], ranks: list[int],
                 by_rank: list[int], pools: list[tuple[int, ...]]) -> None:
        self.rate, self.name_rank, self.topic_of, self.ranks, self.by_rank, self.pools = (
            rate, name_rank, topic_of, ranks, by_rank, pools)
        self.quotas = _quotas(rate, topic_of, pools, len(ranks))

    def place(self, previous: list[int], caps: list[float]) -> tuple[list[int], list[float]]:
        """Owners per partition and msgs/s per member: each member keeps its `previous` partitions with traffic,
        busiest first, while its load stays within its cap (`caps`), and those without up to its quota; the rest
        go LPT."""
        rate, name_rank, topic_of, pools, quotas = self.rate, self.name_rank, self.topic_of, self.pools, self.quotas
        n, m = len(rate), len(self.ranks)
        owners = [-1] * n
        load = [0.0] * m
        idle = [0] * m  # partitions without traffic held
        over: list[list[int]] = [[] for _ in range(m)]  # previous partitions without traffic beyond the floor
        for p in sorted((p for p in range(n) if previous[p] >= 0), key=lambda p: (-rate[p], name_rank[p])):
            w, r = previous[p], rate[p]
            if r > 0 and load[w] + r <= caps[w]:
                owners[p], load[w] = w, load[w] + r
            elif r == 0:
                if idle[w] < quotas[w][0]:
                    owners[p], idle[w] = w, idle[w] + 1
                else:
                    over[w].append(p)
        extra = sum(1 for p in range(n) if rate[p] == 0 and pools[topic_of[p]]) - sum(q[0] for q in quotas)
        for w in self.by_rank:  # as many members as the floors leave partitions over keep one more, in rank order
            if extra > 0 and over[w] and idle[w] < quotas[w][1]:
                owners[over[w][0]], idle[w] = w, idle[w] + 1
                extra -= 1
        busy = _Least(load, self.ranks)
        spare = _Least(idle, self.ranks)
        for p in sorted((p for p in range(n) if owners[p] < 0 and pools[topic_of[p]]),
                        key=lambda p: (-rate[p], name_rank[p])):
            pool = pools[topic_of[p]]
            owners[p] = busy.take(pool, rate[p]) if rate[p] > 0 else spare.take(pool, 1)
        return owners, load


def _quotas(rate: list[float], topic_of: list[int], pools: list[tuple[int, ...]], m: int) -> list[tuple[int, int]]:
    """Each member's fair share of the partitions without traffic (each split evenly among its topic's
    subscribers, summed exactly), rounded down and up."""
    idle = [0] * len(pools)  # partitions without traffic per topic
    for p, r in enumerate(rate):
        if r == 0:
            idle[topic_of[p]] += 1
    fair = [Fraction(0)] * m
    for t, pool in enumerate(pools):
        if idle[t] and pool:
            share = Fraction(idle[t], len(pool))
            for w in pool:
                fair[w] += share
    return [(math.floor(q), math.ceil(q)) for q in fair]


class _Least:
    """The member with the least value (then the least rank) among a pool's members: a lazy heap per pool, as
    values only grow (a stale entry is pushed again with the member's current value)."""

    def __init__(self, values: list[float] | list[int], ranks: list[int]) -> None:
        self.values = values
        self.ranks = ranks
        self.heaps: dict[tuple[int, ...], list[tuple[float, int, int]]] = {}

    def take(self, pool: tuple[int, ...], amount: float) -> int:
        """The least member of `pool`, its value raised by `amount`."""
        heap = self.heaps.get(pool)
        if heap is None:
            heap = self.heaps[pool] = [(self.values[w], self.ranks[w], w) for w in pool]
            heapq.heapify(heap)
        values = self.values
        while True:
            value, r, w = heap[0]
            if values[w] == value:
                values[w] = value + amount
                heapq.heapreplace(heap, (values[w], r, w))
                return w
            heapq.heapreplace(heap, (values[w], r, w))  # raised through another pool's heap since
