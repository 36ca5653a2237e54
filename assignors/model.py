"""The data of one assignment call: clear objects at the API edge, flat integer arrays inside.

`GroupSpec` is built once per call (validation happens here, with messages that name the field) and
every strategy works on it. Partitions are global integer ids: ``id = topic_start[t] + p`` with topics
in the caller's metadata order, so a caller that keeps its own arrays in that layout (the streaming
state machine does) can build a spec without any per-partition Python objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from assignors.javaorder import java_string_key

MAX_RACKS = 64  # racks are bitmasks in one uint64 per partition


@dataclass(frozen=True, slots=True)
class Member:
    """One group member as the leader sees it.

    `owned` is what the member held after the last rebalance it took part in, with that rebalance's
    `generation` (-1: unknown). For eager `sticky` it is what the member's userData carries, for
    `cooperative-sticky` its ownedPartitions + generationId.
    """

    topics: Sequence[str]
    owned: Sequence[tuple[str, int]] = ()
    generation: int = -1
    rack: str | None = None
    instance_id: str | None = None


@dataclass(eq=False)
class GroupSpec:
    """One assignment call as flat arrays (see the module docstring for the id layout)."""

    topic_names: list[str]  # topics with metadata (>= 1 partition), caller's order
    topic_sizes: np.ndarray  # int64[T]
    member_ids: list[str]  # caller's order: the Java HashMap iteration order Kafka would use
    subscriptions: list[tuple[str, ...]]  # raw subscribed names, deduplicated, order kept (may lack metadata)
    member_topics: list[np.ndarray]  # int32 topic indices per member: subscribed topics that have metadata
    owned: list[np.ndarray]  # int64 global ids per member, caller's order, only partitions with metadata
    generations: np.ndarray  # int64[M]
    racks: list[str | None]
    instance_ids: list[str | None]
    rack_names: list[str] = field(default_factory=list)  # racks named by partition replicas
    partition_rack_bits: np.ndarray | None = None  # uint64[P]: bit r = a replica on rack_names[r]
    topic_start: np.ndarray = field(init=False)  # int64[T+1]
    topic_index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.topic_start = np.zeros(len(self.topic_names) + 1, dtype=np.int64)
        np.cumsum(self.topic_sizes, out=self.topic_start[1:])
        self.topic_index = {name: i for i, name in enumerate(self.topic_names)}

    @property
    def num_partitions(self) -> int:
        return int(self.topic_start[-1])

    @property
    def num_members(self) -> int:
        return len(self.member_ids)

    @cached_property
    def partition_topic(self) -> np.ndarray:
        """int32 topic index of every global partition id."""
        return np.repeat(np.arange(len(self.topic_names), dtype=np.int32), self.topic_sizes)

    @cached_property
    def partition_number(self) -> np.ndarray:
        """int64 partition number (within its topic) of every global partition id."""
        return np.arange(self.num_partitions, dtype=np.int64) - self.topic_start[self.partition_topic]

    @cached_property
    def topics_by_name(self) -> np.ndarray:
        """Topic indices sorted by topic name (Java String order)."""
        keys = [java_string_key(n) for n in self.topic_names]
        return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int32)

    @cached_property
    def name_rank(self) -> np.ndarray:
        """int64 rank of every global id in (topic name, partition) order."""
        rank = np.empty(self.num_partitions, dtype=np.int64)
        pos = 0
        for t in self.topics_by_name:
            n = int(self.topic_sizes[t])
            start = int(self.topic_start[t])
            rank[start : start + n] = np.arange(pos, pos + n)
            pos += n
        return rank

    @cached_property
    def member_rack_bit(self) -> np.ndarray:
        """uint64 per member: its rack's bit, 0 when it has no rack or no replica is on its rack."""
        index = {r: i for i, r in enumerate(self.rack_names)}
        return np.array(
            [np.uint64(1) << np.uint64(index[r]) if r in index else 0 for r in self.racks], dtype=np.uint64
        )

    def partition_id(self, topic: str, partition: int) -> int:
        return int(self.topic_start[self.topic_index[topic]]) + partition

    def to_result(self, assignment: Sequence[np.ndarray]) -> dict[str, list[tuple[str, int]]]:
        """Per-member global ids -> the public result, partitions sorted by (topic, partition)."""
        rank = self.name_rank
        topic = np.asarray(self.topic_names, dtype=object)[self.partition_topic] if self.num_partitions else None
        number = self.partition_number
        out: dict[str, list[tuple[str, int]]] = {}
        for member, ids in zip(self.member_ids, assignment, strict=True):
            ids = np.asarray(ids, dtype=np.int64)
            if ids.size == 0:
                out[member] = []
                continue
            ids = ids[np.argsort(rank[ids], kind="stable")]
            out[member] = list(zip(topic[ids].tolist(), number[ids].tolist(), strict=True))
        return out


def _check_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def _check_int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{where}: expected an integer, got {type(value).__name__}")
    return int(value)


def build_spec(
    topics: Mapping[str, int],
    members: Mapping[str, Member],
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> GroupSpec:
    """Validate the public inputs and lay them out as a `GroupSpec`.

    Kafka's lenient cases stay lenient: topics with 0 partitions count as without metadata, subscribed
    topics without metadata are ignored, owned partitions outside the metadata are dropped.
    """
    if not isinstance(topics, Mapping):
        raise ValueError(f"topics: expected a mapping of topic -> partition count, got {type(topics).__name__}")
    if not isinstance(members, Mapping):
        raise ValueError(f"members: expected a mapping of member id -> Member, got {type(members).__name__}")
    names: list[str] = []
    sizes: list[int] = []
    for name, count in topics.items():
        _check_str(name, "topics")
        count = _check_int(count, f"topics[{name!r}]")
        if count < 0:
            raise ValueError(f"topics[{name!r}]: partition count must be >= 0, got {count}")
        if count > 0:
            names.append(name)
            sizes.append(count)
    topic_index = {n: i for i, n in enumerate(names)}
    size_of = dict(zip(names, sizes, strict=True))
    starts = dict(zip(names, np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])[:-1].tolist(), strict=True))

    member_ids: list[str] = []
    subscriptions: list[tuple[str, ...]] = []
    member_topics: list[np.ndarray] = []
    owned: list[np.ndarray] = []
    generations: list[int] = []
    racks: list[str | None] = []
    instance_ids: list[str | None] = []
    for mid, m in members.items():
        _check_str(mid, "members")
        where = f"members[{mid!r}]"
        if not isinstance(m, Member):
            raise ValueError(f"{where}: expected a Member, got {type(m).__name__}")
        if isinstance(m.topics, (str, bytes)) or not isinstance(m.topics, Sequence | set | frozenset):
            raise ValueError(f"{where}.topics: expected a list of topic names")
        subs = tuple(dict.fromkeys(_check_str(t, f"{where}.topics") for t in m.topics))
        gen = _check_int(m.generation, f"{where}.generation")
        if m.rack is not None:
            _check_str(m.rack, f"{where}.rack")
        if m.instance_id is not None:
            _check_str(m.instance_id, f"{where}.instance_id")
        ids: list[int] = []
        seen: set[int] = set()
        for i, tp in enumerate(m.owned):
            if not isinstance(tp, Sequence) or isinstance(tp, (str, bytes)) or len(tp) != 2:
                raise ValueError(f"{where}.owned[{i}]: expected a (topic, partition) pair")
            t = _check_str(tp[0], f"{where}.owned[{i}][0]")
            p = _check_int(tp[1], f"{where}.owned[{i}][1]")
            if p < 0:
                raise ValueError(f"{where}.owned[{i}][1]: partition must be >= 0, got {p}")
            start = starts.get(t)
            if start is not None and p < size_of[t]:
                g = start + p
                if g not in seen:
                    seen.add(g)
                    ids.append(g)
        member_ids.append(mid)
        subscriptions.append(subs)
        member_topics.append(np.array([topic_index[t] for t in subs if t in topic_index], dtype=np.int32))
        owned.append(np.array(ids, dtype=np.int64))
        generations.append(gen)
        racks.append(m.rack or None)
        instance_ids.append(m.instance_id)

    spec = GroupSpec(
        topic_names=names,
        topic_sizes=np.array(sizes, dtype=np.int64),
        member_ids=member_ids,
        subscriptions=subscriptions,
        member_topics=member_topics,
        owned=owned,
        generations=np.array(generations, dtype=np.int64),
        racks=racks,
        instance_ids=instance_ids,
    )
    if partition_racks is not None:
        _attach_partition_racks(spec, partition_racks)
    return spec


def _attach_partition_racks(spec: GroupSpec, partition_racks: Mapping[str, Sequence[Sequence[str]]]) -> None:
    """Replica racks -> one uint64 bitmask per partition (topics without an entry: no replica racks)."""
    if not isinstance(partition_racks, Mapping):
        raise ValueError("partition_racks: expected a mapping of topic -> list of replica rack lists")
    rack_index: dict[str, int] = {}
    bits = np.zeros(spec.num_partitions, dtype=np.uint64)
    for topic, per_partition in partition_racks.items():
        _check_str(topic, "partition_racks")
        where = f"partition_racks[{topic!r}]"
        if isinstance(per_partition, (str, bytes)) or not isinstance(per_partition, Sequence):
            raise ValueError(f"{where}: expected one list of racks per partition")
        t = spec.topic_index.get(topic)
        if t is not None and len(per_partition) > spec.topic_sizes[t]:
            raise ValueError(f"{where}: {len(per_partition)} entries for {int(spec.topic_sizes[t])} partitions")
        for p, replica_racks in enumerate(per_partition):
            if isinstance(replica_racks, (str, bytes)) or not isinstance(replica_racks, Sequence):
                raise ValueError(f"{where}[{p}]: expected a list of rack names")
            mask = 0
            for rack in replica_racks:
                if rack is None:  # a replica on a broker without a rack
                    continue
                _check_str(rack, f"{where}[{p}]")
                r = rack_index.setdefault(rack, len(rack_index))
                if r >= MAX_RACKS:
                    raise ValueError(f"{where}[{p}]: more than {MAX_RACKS} distinct racks")
                mask |= 1 << r
            if t is not None:
                bits[int(spec.topic_start[t]) + p] = mask
    spec.rack_names = list(rack_index)
    spec.partition_rack_bits = bits


def rack_aware_enabled(
    member_rack_bits: np.ndarray, partition_rack_bits: np.ndarray | None, *, prefer: bool = False
) -> bool:
    """KIP-881's `useRackAwareAssignment` over the given members and partitions.

    False when no consumer rack is also a replica rack; else true when `prefer` (Kafka's test-only
    flag) or when some partition lacks a replica on some rack (every partition on every rack makes rack
    logic pointless). `member_rack_bits` comes from `GroupSpec.member_rack_bit` (a consumer rack no
    replica is on contributes no bit, which is the C ∩ P test).
    """
    if partition_rack_bits is None or partition_rack_bits.size == 0:
        return False
    consumer = np.bitwise_or.reduce(member_rack_bits) if member_rack_bits.size else np.uint64(0)
    if not consumer:
        return False
    if prefer:
        return True
    every = np.bitwise_or.reduce(partition_rack_bits)
    return bool(np.any(partition_rack_bits != every))
