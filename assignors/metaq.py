"""MetaQ (Metamorphosis) consumer balance strategies, from its client sources
(`com.taobao.metamorphosis.client.consumer`, killme2008/Metamorphosis).

MetaQ balances each topic on its own: every consumer of the group computes, for each topic it
subscribes to, its share of that topic's partition list given the list of the topic's consumers.

* Consumers of a topic = the members subscribing to it, sorted by member id (Java `String` order),
  as `ConsumerZooKeeper.getConsumersPerTopic` sorts the ZooKeeper child names.
* Partitions of a topic are strings ``"<brokerId>-<partition>"`` sorted *as strings*
  (`MetaZookeeper.getPartitionStringsForSubTopics`). A Kafka topic with n partitions is taken to
  live on one broker with id 0, so partition p is ``"0-p"`` and the list is in string order:
  0-0, 0-1, 0-10, 0-11, ..., 0-2, ... .
* `metaq-default` (`DefaultLoadBalanceStrategy`): consumer i of k takes the contiguous slice of that
  sorted list starting at ``q*i + min(i, r)`` of length ``q + (1 if i < r else 0)``, q, r = divmod(n, k).
* `metaq-consistent-hash` (`ConsisHashStrategy`): a ketama ring. Each consumer c contributes
  160 points: for i in 0..39, ``md5(f"{c}-{i}")`` (UTF-8) gives four little-endian uint32 keys
  (digest bytes 4h..4h+3, h = 0..3); consumers are inserted in sorted order, so on a key collision the
  later consumer owns the point (Java `TreeMap.put`). A partition belongs to the owner of the first
  point at or after ``ketama("0-p")`` (the first 4 digest bytes, little-endian), wrapping to the
  smallest point.

Neither strategy looks at the previous assignment or at racks.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from assignors.javaorder import java_string_key
from assignors.model import GroupSpec, even_shares, ids_by_owner

NUM_REPS = 160  # ConsisHashStrategy.NUM_REPS: virtual nodes per consumer
BROKER_ID = 0  # the single MetaQ broker a Kafka topic is mapped onto


def partition_name(partition: int) -> str:
    """MetaQ's partition string for partition `partition` of our single broker."""
    return f"{BROKER_ID}-{partition}"


@lru_cache(maxsize=16)
def _string_order(num_partitions: int) -> np.ndarray:
    """Partition numbers in the string order of their MetaQ names (read-only, cached per size)."""
    order = np.array(sorted(range(num_partitions), key=partition_name), dtype=np.int64)
    order.flags.writeable = False
    return order


def ketama_hash(key: str) -> int:
    """MetaQ's `HashAlgorithm.KETAMA_HASH`: the first four MD5 bytes of the UTF-8 key, little-endian."""
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest()[:4], "little")


@lru_cache(maxsize=1 << 14)
def _ring_points(consumer: str) -> np.ndarray:
    """The 160 ring keys of one consumer (`buildConsumerMap`, ketama branch), read-only."""
    digests = b"".join(hashlib.md5(f"{consumer}-{i}".encode()).digest() for i in range(NUM_REPS // 4))
    points = np.frombuffer(digests, dtype="<u4").astype(np.uint64)
    points.flags.writeable = False
    return points


_partition_hashes = np.zeros(0, dtype=np.uint64)


def _partition_hash_array(num_partitions: int) -> np.ndarray:
    """Ketama hashes of "0-0" .. "0-(n-1)", computed once per process and grown as needed."""
    global _partition_hashes
    have = _partition_hashes.size
    if have < num_partitions:
        more = np.fromiter(
            (ketama_hash(partition_name(p)) for p in range(have, num_partitions)),
            dtype=np.uint64,
            count=num_partitions - have,
        )
        _partition_hashes = np.concatenate((_partition_hashes, more))
    return _partition_hashes[:num_partitions]


def _consumers_per_topic(spec: GroupSpec) -> list[tuple[int, np.ndarray]]:
    """(topic index, its subscribers' member indices sorted by member id in Java String order), for
    every topic somebody subscribes to."""
    ranked = np.array(
        sorted(range(spec.num_members), key=lambda i: java_string_key(spec.member_ids[i])), dtype=np.int64
    )
    counts = np.fromiter((spec.member_topics[m].size for m in ranked), dtype=np.int64, count=ranked.size)
    if counts.sum() == 0:
        return []
    pair_topic = np.concatenate([spec.member_topics[m] for m in ranked])
    by_topic = np.argsort(pair_topic, kind="stable")
    members = np.repeat(ranked, counts)[by_topic]
    topics, first, sizes = np.unique(pair_topic[by_topic], return_index=True, return_counts=True)
    return [(int(t), members[f : f + k]) for t, f, k in zip(topics, first, sizes, strict=True)]


class MetaqDefaultAssignor:
    """`metaq-default`: per topic, contiguous slices of the string-sorted partition list."""

    name = "metaq-default"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        owners = np.full(spec.num_partitions, -1, dtype=np.int64)
        for t, consumers in _consumers_per_topic(spec):
            n = int(spec.topic_sizes[t])
            sizes = even_shares(n, consumers.size)
            start = int(spec.topic_start[t])
            owners[start + _string_order(n)] = np.repeat(consumers, sizes)
        return ids_by_owner(owners, spec.num_members)


class MetaqConsistentHashAssignor:
    """`metaq-consistent-hash`: per topic, a ketama ring of the topic's consumers."""

    name = "metaq-consistent-hash"

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        owners = np.full(spec.num_partitions, -1, dtype=np.int64)
        names: dict[bytes, tuple[str, ...]] = {}  # topics of a group mostly share one consumer list
        for t, consumers in _consumers_per_topic(spec):
            key = consumers.tobytes()
            if key not in names:
                names[key] = tuple(spec.member_ids[c] for c in consumers.tolist())
            n = int(spec.topic_sizes[t])
            start = int(spec.topic_start[t])
            owners[start : start + n] = consumers[_ring_lookup(names[key], n)]
        return ids_by_owner(owners, spec.num_members)


@lru_cache(maxsize=16)
def _ring_lookup(consumers: tuple[str, ...], num_partitions: int) -> np.ndarray:
    """For partitions "0-0".."0-(n-1)": the position in `consumers` of the ring point owner
    (`findConsumerByPartition`); read-only, cached."""
    keys, ring_owner = _ring(consumers)
    slot = np.searchsorted(keys, _partition_hash_array(num_partitions), side="left")
    slot[slot == keys.size] = 0  # past the last point: wrap to the first
    out = ring_owner[slot]
    out.flags.writeable = False
    return out


@lru_cache(maxsize=8)
def _ring(consumers: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ring keys and, per key, the position in `consumers` of its owner (the last writer).

    Cached per consumer list: topics of one group usually share their consumers."""
    keys = np.concatenate([_ring_points(c) for c in consumers])
    who = np.repeat(np.arange(len(consumers), dtype=np.int64), NUM_REPS)
    # TreeMap.put in insertion order: the last insertion of a key wins.
    uniq, first_in_reverse = np.unique(keys[::-1], return_index=True)
    owner = who[::-1][first_in_reverse]
    uniq.flags.writeable = False
    owner.flags.writeable = False
    return uniq, owner
