"""`rate-balanced`: sticky, balancing messages per second instead of partition counts; deterministic.

Kafka has no such assignor (the open-source lag-based assignors are its nearest kin). It reads the msgs/s of
every partition, an explicit argument (`assignors.registry.assign_owners(..., rates)`); without rates every
partition counts 0 and it balances counts like a sticky assignor. docs/traffic.md states the algorithm and
proves its bounds; tests/assignors/test_rate_balanced.py checks them on random inputs.

Rules (members ranked by id in Java `String` order, so the result does not depend on the order they come in;
partitions named in (topic name, partition) order; T: the msgs/s of the partitions a member may hold, M members):

* **Caps.** Member m's fair rate f_m is the sum, over the partitions of topics it subscribes to, of the
  partition's rate divided by its topic's subscriber count (T / M with identical subscriptions); its rate cap is
  `f_m + (1 - 1/M) * r_m`, r_m the highest rate among those partitions. Its zero-rate quota is the same fair
  share of the partitions without traffic (computed exactly), rounded down, or up for as many members as the
  floors leave partitions over (as Kafka's sticky quotas).
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
        n = spec.num_partitions
        rate: list[float] = [0.0] * n if rates is None else rates.tolist()
        keys = [java_string_key(mid) for mid in spec.member_ids]
        by_rank = sorted(range(m), key=keys.__getitem__)
        rank = np.empty(m, dtype=np.int64)
        rank[by_rank] = np.arange(m)
        ranks: list[int] = rank.tolist()
        name_rank: list[int] = spec.name_rank.tolist()
        topic_of: list[int] = spec.partition_topic.tolist()
        subscribers, offsets = spec.topic_subscribers
        pools = [tuple(sorted(subscribers[offsets[t]:offsets[t + 1]].tolist(), key=ranks.__getitem__))
                 for t in range(len(spec.topic_names))]
        caps, quotas = _caps(rate, topic_of, pools, m)
        previous: list[int] = previous_owner(spec, rank).tolist()
        owners = [-1] * n
        load = [0.0] * m
        idle = [0] * m  # partitions without traffic held
        kept_first = sorted((p for p in range(n) if previous[p] >= 0), key=lambda p: (-rate[p], name_rank[p]))
        over: list[list[int]] = [[] for _ in range(m)]  # previous partitions without traffic beyond the floor
        for p in kept_first:
            w, r = previous[p], rate[p]
            if r > 0 and load[w] + r <= caps[w]:
                owners[p], load[w] = w, load[w] + r
            elif r == 0:
                if idle[w] < quotas[w][0]:
                    owners[p], idle[w] = w, idle[w] + 1
                else:
                    over[w].append(p)
        extra = sum(1 for p in range(n) if rate[p] == 0 and pools[topic_of[p]]) - sum(q[0] for q in quotas)
        for w in by_rank:  # as many members as the floors leave partitions over keep one more, in rank order
            if extra > 0 and over[w] and idle[w] < quotas[w][1]:
                owners[over[w][0]], idle[w] = w, idle[w] + 1
                extra -= 1
        rest = sorted((p for p in range(n) if owners[p] < 0 and pools[topic_of[p]]),
                      key=lambda p: (-rate[p], name_rank[p]))
        busy = _Least(load, ranks)
        spare = _Least(idle, ranks)
        for p in rest:
            pool = pools[topic_of[p]]
            owners[p] = busy.take(pool, rate[p]) if rate[p] > 0 else spare.take(pool, 1)
        return ids_by_owner(np.array(owners, dtype=np.int64), m)


def _caps(rate: list[float], topic_of: list[int], pools: list[tuple[int, ...]], m: int
          ) -> tuple[list[float], list[tuple[int, int]]]:
    """Each member's rate cap and zero-rate quota, its fair share rounded down and up (module docstring)."""
    shares: list[list[float]] = [[] for _ in range(m)]
    highest = [0.0] * m
    idle = [0] * len(pools)  # partitions without traffic per topic
    for p, r in enumerate(rate):
        t = topic_of[p]
        pool = pools[t]
        if r > 0:
            share = r / len(pool) if pool else 0.0
            for w in pool:
                shares[w].append(share)
                if r > highest[w]:
                    highest[w] = r
        else:
            idle[t] += 1
    fair_idle = [Fraction(0)] * m
    for t, pool in enumerate(pools):
        if idle[t] and pool:
            share_idle = Fraction(idle[t], len(pool))
            for w in pool:
                fair_idle[w] += share_idle
    slack = 1.0 - 1.0 / m
    caps = [math.fsum(shares[w]) + slack * highest[w] for w in range(m)]
    return caps, [(math.floor(q), math.ceil(q)) for q in fair_idle]


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
