"""`weighted-sticky`: per-member load proportional to the member's weight, sticky, deterministic.

Kafka has no such assignor; its founding use of `Subscription.userData` is exactly this (members of
different sizes announcing a weight). docs/assignors.md defines the userData bytes a Java
`ConsumerPartitionAssignor` would carry the weight in.

Rules (every tie broken by member id in Java `String` order, so the result does not depend on the order
the members come in):

* **Topic groups.** Topics with the same set of subscribers are pooled (with identical subscriptions:
  one pool of all partitions). A pool of N partitions is shared among its subscribers by largest
  remainder: member m's exact share is N * w_m / W (W: the subscribers' total weight, computed exactly
  from the float weights), its quota the share rounded down, and the N - sum(floors) members with the
  largest fractional parts get one more. Every load is within 1 of its exact share.
* **Stickiness.** A partition a member owned (the claim with the highest generation wins, ties to the
  smaller member id) stays with it while the member is below its quota in that pool, taken in (topic
  name, partition) order; so a member loses only what is beyond its quota, which for identical
  subscriptions is the fewest moves any assignment with these loads can make (`assignors.optimality`).
* **The rest** (unowned, released or beyond a quota), in (topic name, partition) order, goes round robin
  to the members still below their quotas, in member id order.

Racks and `instance_id` are not used.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from assignors.javaorder import java_string_key
from assignors.model import GroupSpec, ids_by_owner, topic_blocks


class WeightedStickyAssignor:
    name = "weighted-sticky"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        m = spec.num_members
        if m == 0:
            return []
        keys = [java_string_key(mid) for mid in spec.member_ids]
        rank = np.empty(m, dtype=np.int64)
        rank[sorted(range(m), key=keys.__getitem__)] = np.arange(m)
        name_pos = np.empty(len(spec.topic_names), dtype=np.int64)
        name_pos[spec.topics_by_name] = np.arange(len(spec.topic_names))
        weights = spec.weights if spec.weights is not None else np.ones(m)
        previous = previous_owner(spec, rank)
        owners = np.full(spec.num_partitions, -1, dtype=np.int64)
        slot = np.full(m, -1, dtype=np.int64)  # a member's position among its pool's subscribers
        for members, topics in _pools(spec).items():
            subs = np.array(sorted(members, key=rank.__getitem__), dtype=np.int64)
            slot[subs] = np.arange(subs.size)
            parts = topic_blocks(spec, sorted(topics, key=name_pos.__getitem__))
            quota = _quotas(parts.size, [Fraction(float(w)) for w in weights[subs]], rank[subs])
            prev = previous[parts]
            owners[parts] = subs[_fill_pool(np.where(prev >= 0, slot[prev], -1), quota)]
        return ids_by_owner(owners, m)


def previous_owner(spec: GroupSpec, rank: np.ndarray) -> np.ndarray:
    """Per partition, the member whose claim counts (highest generation, then smallest member id), among
    claimants that still subscribe to its topic; -1 if none."""
    out = np.full(spec.num_partitions, -1, dtype=np.int64)
    lengths = [ids.size for ids in spec.owned]
    if not sum(lengths):
        return out
    ids = np.concatenate(spec.owned)
    members = np.repeat(np.arange(spec.num_members, dtype=np.int64), lengths)
    subscribed = np.zeros((spec.num_members, len(spec.topic_names)), dtype=bool)
    for i, topics in enumerate(spec.member_topics):
        subscribed[i, topics] = True
    valid = subscribed[members, spec.partition_topic[ids]]
    ids, members = ids[valid], members[valid]
    order = np.lexsort((rank[members], -spec.generations[members], ids))
    ids, members = ids[order], members[order]
    first = np.ones(ids.size, dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    out[ids[first]] = members[first]
    return out


def _pools(spec: GroupSpec) -> dict[frozenset[int], list[int]]:
    """Topics with metadata and at least one subscriber, pooled by their set of subscribers."""
    subscribers, offsets = spec.topic_subscribers
    pools: dict[frozenset[int], list[int]] = {}
    for t in range(len(spec.topic_names)):
        members = frozenset(subscribers[offsets[t] : offsets[t + 1]].tolist())
        if members:
            pools.setdefault(members, []).append(t)
    return pools


def _quotas(total: int, weights: list[Fraction], rank: np.ndarray) -> np.ndarray:
    """Largest-remainder quotas of `total` in proportion to `weights`, ties to the smaller rank."""
    whole = sum(weights)
    shares = [total * w / whole for w in weights]
    quota = np.array([int(s) for s in shares], dtype=np.int64)
    extra = total - int(quota.sum())
    if extra:
        by_remainder = sorted(range(len(shares)), key=lambda i: (-(shares[i] - quota[i]), int(rank[i])))
        quota[by_remainder[:extra]] += 1
    return quota


def _fill_pool(previous: np.ndarray, quota: np.ndarray) -> np.ndarray:
    """Per partition of a pool (in order), the subscriber slot it goes to: its previous owner's slot
    (`previous`, -1: none) while that member is below quota, then the rest round robin to the slots
    below quota."""
    out = np.full(previous.size, -1, dtype=np.int64)
    owned = np.flatnonzero(previous >= 0)
    if owned.size:
        order = np.argsort(previous[owned], kind="stable")
        who = previous[owned][order]
        keep = np.arange(who.size) - np.searchsorted(who, who) < quota[who]
        out[owned[order[keep]]] = who[keep]
    deficit = quota - np.bincount(out[out >= 0], minlength=quota.size)
    # round r gives one partition to every slot whose deficit exceeds r, slots in order
    takers = np.repeat(np.arange(quota.size), deficit)
    rounds = np.arange(takers.size) - np.repeat(np.cumsum(deficit) - deficit, deficit)
    out[out < 0] = takers[np.lexsort((takers, rounds))]
    return out
