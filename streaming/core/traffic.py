"""The load model (docs/traffic.md): one topic's traffic in messages per second, spread over its partitions as
Kafka's producer partitioner spreads it, and what a round's owners make of it per member.

A `traffic` event gives a topic's rates either per partition (`rates`, kept as given; partitions added later
carry 0) or as a total `rate` with key weights and a null-key share. Keys are kept as `toPositive(murmur2(key))`,
all the partitioner needs: a key then goes to partition `hash % n` for any count n, so keyed traffic is spread
again when the topic grows. Null-key traffic is spread evenly (docs/traffic.md says why).

Every number is an IEEE double computed by the formulas below in the order written, and every sum is
`math.fsum` (the correctly rounded sum, whatever the order of its terms): the same log gives the same bits in
both builds, whatever the batching, and a test can recompute them exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from assignors.compiled import kernel

MAX_RATE = 1e12  # msgs/s of one partition or topic, and one key weight: sums of them stay far from overflow
_K = kernel("streaming.core.load_kernel")  # `member_extremes` in C (None: `member_rates` runs)


class TopicTraffic:
    """One topic's traffic as its latest `traffic` event gave it (immutable once made)."""

    def __init__(self, rates: tuple[float, ...] | None, rate: float, key_hashes: tuple[int, ...],
                 weights: tuple[float, ...], null_share: float) -> None:
        self.rates = rates  # the `rates` form: msgs/s per partition as given (None: the keyed form)
        self.rate = rate  # the keyed form: msgs/s over the topic
        self.key_hashes = key_hashes  # toPositive(murmur2(UTF-8 key)) per key, in the event's key order
        self.weights = weights  # per key, >= 0
        self.null_share = null_share  # the part of `rate` with null keys, in [0, 1]
        self.key_weight = math.fsum(weights)  # W
        self._spread: tuple[int, list[float]] = (0, [])  # the last `partition_rates` answer: (count, rates)

    @property
    def keyed(self) -> bool:
        """Whether the traffic has key weight to spread (W > 0): only such a topic's keys move when it grows."""
        return self.rates is None and self.key_weight > 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TopicTraffic) and self.wire() == other.wire()

    def __repr__(self) -> str:
        return f"TopicTraffic{self.wire()!r}"

    def wire(self) -> list:
        """What the state blob keeps: `[rates, rate, key hashes, weights, null_share]` (plain JSON values)."""
        return [None if self.rates is None else list(self.rates), self.rate, list(self.key_hashes),
                list(self.weights), self.null_share]

    def partition_rates(self, num_partitions: int) -> list[float]:
        """msgs/s of each of the topic's `num_partitions` partitions (a list the caller must not modify).

        `rates`: as given, 0.0 for partitions past them. Keyed: partition p carries
        `rate * (null_share / n + (1 - null_share) * W_p / W)`, W_p the fsum of the weights of the keys with
        `hash % n == p`, W of all (W = 0: `rate * (null_share / n)`)."""
        count, spread = self._spread
        if count == num_partitions:
            return spread
        if self.rates is not None:
            spread = list(self.rates) + [0.0] * (num_partitions - len(self.rates))
        else:
            n = num_partitions
            rate, null_share, total = self.rate, self.null_share, self.key_weight
            if total > 0:
                per_partition: list[list[float]] = [[] for _ in range(n)]
                for h, w in zip(self.key_hashes, self.weights, strict=True):
                    per_partition[h % n].append(w)
                spread = [rate * (null_share / n + (1.0 - null_share) * math.fsum(ws) / total)
                          for ws in per_partition]
            else:
                spread = [rate * (null_share / n)] * n
        self._spread = (num_partitions, spread)
        return spread

    def keys_moved(self, old_count: int, new_count: int) -> float:
        """The share of the key weight whose partition changes when the topic goes from `old_count` to
        `new_count` partitions: fsum of those keys' weights / W (0.0 when W = 0)."""
        if self.key_weight <= 0:
            return 0.0
        moved = [w for h, w in zip(self.key_hashes, self.weights, strict=True) if h % old_count != h % new_count]
        return math.fsum(moved) / self.key_weight


def traffic_from_wire(value: Sequence) -> TopicTraffic:
    """Inverse of `TopicTraffic.wire` (a state blob's header entry)."""
    rates, rate, hashes, weights, null_share = value
    return TopicTraffic(None if rates is None else tuple(float(r) for r in rates), float(rate),
                        tuple(int(h) for h in hashes), tuple(float(w) for w in weights), float(null_share))


def member_rates(owner: list[int], rates: list[float], num_members: int) -> list[float]:
    """msgs/s per member: the fsum of the rates of the partitions it owns (`owner`: member index per partition,
    -1: nobody); a member holding nothing has 0.0."""
    held: list[list[float]] = [[] for _ in range(num_members)]
    for o, rate in zip(owner, rates, strict=True):
        if o >= 0:
            held[o].append(rate)
    return [math.fsum(h) for h in held]


def member_extremes(owner: np.ndarray, rates: np.ndarray, num_members: int) -> tuple[float, float]:
    """The least and most msgs/s of a member ((0.0, 0.0) without members) for `owner` (int32 per partition) and
    `rates` (float64, the same layout): `member_rates`' extremes, computed in C where the load kernel is built."""
    if _K is not None:
        found = _K.member_extremes(owner, rates, num_members)
        if found is not None:
            return found
    loads = member_rates(owner.tolist(), rates.tolist(), num_members)
    return (min(loads), max(loads)) if loads else (0.0, 0.0)


class GroupLoad:
    """One event's load: msgs/s per partition of the group's new layout (global ids: topics in the group's order,
    deleted ones without partitions), their fsum over the subscribed topics, and `keys_moved` when the event grows
    a subscribed topic with keyed traffic. Made only for a group with traffic for a subscribed topic."""

    def __init__(self, traffic: dict[str, TopicTraffic], sizes: list[int], subscribed_topics: set[str],
                 rates: list[float], subscribed_rates: list[float], keys_moved: dict[str, float]) -> None:
        # what it was made from: the next event reuses it when they are the same (`group_load`)
        self.traffic, self.sizes, self.subscribed_topics = traffic, sizes, subscribed_topics
        self.rates = np.array(rates, dtype=np.float64)  # what a rate-aware strategy balances
        self.total = math.fsum(subscribed_rates)
        self.keys_moved = keys_moved

    def fields(self, owner: np.ndarray, num_members: int) -> dict[str, object]:
        """A diff record's load fields (docs/traffic.md §2) for a round that leaves `owner` (member index per
        partition, -1: nobody): `rate_total`, the least and most msgs/s of a member (0.0 without members), and
        `keys_moved` when the event has them."""
        least, most = member_extremes(owner, self.rates, num_members)
        out: dict[str, object] = {"rate_total": self.total, "rate_min": least, "rate_max": most}
        if self.keys_moved:
            out["keys_moved"] = self.keys_moved
        return out


def group_load(traffic: dict[str, TopicTraffic], old_sizes: list[int], topics: list[str], sizes: list[int],
               subscriptions: Sequence[tuple[str, ...]], previous: GroupLoad | None) -> GroupLoad | None:
    """The event's `GroupLoad` (None: no subscribed topic has traffic). `old_sizes`: the counts before the event
    (topics appended since have none); `subscriptions`: each member's topics after it;
    `previous`: the last event's, returned when made from the same traffic, counts and subscribed topics."""
    subscribed_topics: set[str] = set()
    for member_topics in subscriptions:
        subscribed_topics.update(member_topics)
    if subscribed_topics.isdisjoint(traffic):
        return None
    if (previous is not None and previous.traffic is traffic and not previous.keys_moved
            and previous.sizes == sizes and previous.subscribed_topics == subscribed_topics):
        return previous
    rates: list[float] = []
    subscribed_rates: list[float] = []
    keys_moved: dict[str, float] = {}
    for t, (name, n) in enumerate(zip(topics, sizes, strict=True)):
        if not n:
            continue
        tr = traffic.get(name)
        spread = tr.partition_rates(n) if tr is not None else [0.0] * n
        rates.extend(spread)
        if name in subscribed_topics:
            subscribed_rates.extend(spread)
            old = old_sizes[t] if t < len(old_sizes) else 0
            if tr is not None and tr.keyed and 0 < old != n:
                keys_moved[name] = tr.keys_moved(old, n)
    return GroupLoad(traffic, sizes, subscribed_topics, rates, subscribed_rates, keys_moved)
