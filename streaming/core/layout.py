"""Step 2 of an event: the layout change from the old state to the next shape.

Partitions are global ids (start of their topic + partition number) and members are indices, so a new
topic, a partition increase, a deleted topic or a member leaving changes what every id means. `Relayout`
holds the maps between the old and the new numbering, once per event, for all strategies: old -> new,
and a *union* numbering (the new partitions plus the deleted ones, the new members plus the leavers) in
which a round's diff can name what left the group. It also holds what the assignors are given: the live
topics, each member's subscribed topics, and partitions in Kafka's (topic name, partition) order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assignors.javaorder import java_string_key
from streaming.core.shape import GroupShape
from streaming.core.state_codec import GroupState


def layout_map(old_sizes: np.ndarray, new_sizes: np.ndarray) -> np.ndarray:
    """Old global id -> new global id (-1: the partition is gone); topics may only be appended."""
    if old_sizes.size == new_sizes.size and np.array_equal(old_sizes, new_sizes):  # most events keep the layout
        return np.arange(int(new_sizes.sum()), dtype=np.int64)
    old = np.zeros(new_sizes.size, dtype=np.int64)
    old[: old_sizes.size] = old_sizes
    old_starts = np.concatenate([[0], np.cumsum(old)])
    new_starts = np.concatenate([[0], np.cumsum(new_sizes)])
    topic = np.repeat(np.arange(old.size), old)
    number = np.arange(topic.size, dtype=np.int64) - old_starts[topic]
    return np.where(number < new_sizes[topic], new_starts[topic] + number, -1)


def move(values: np.ndarray, mapping: np.ndarray, size: int, fill: int) -> np.ndarray:
    """Re-lay a per-partition array through a `layout_map`."""
    out = np.full(size, fill, dtype=values.dtype)
    keep = mapping >= 0
    out[mapping[keep]] = values[keep]
    return out


def translate(owner: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Member indices through `table` (old index -> new index), keeping -1."""
    out = np.full(owner.size, -1, dtype=np.int32)
    held = owner >= 0
    out[held] = table[owner[held]]
    return out


def owner_of(assignment: Sequence[np.ndarray], num_partitions: int) -> np.ndarray:
    """Each member's partition ids -> the owner (member index, -1 = nobody) of every partition."""
    owner = np.full(num_partitions, -1, dtype=np.int32)
    if assignment:
        sizes = [a.size for a in assignment]
        owner[np.concatenate(assignment).astype(np.int64)] = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    return owner


@dataclass
class Relayout:
    """The old state's numbering mapped onto the next shape's (see the module docstring)."""

    sizes: np.ndarray  # int64 per topic, the new partition counts (0 = deleted)
    starts: np.ndarray  # int64[T+1]
    num_partitions: int
    old_to_new: np.ndarray  # old global id -> new (-1: gone)
    rack_bits: np.ndarray | None  # uint64 per new partition, None when the group knows no racks
    member_ids: list[str]
    remap: np.ndarray  # old member index -> new (-1: left)
    leavers: list[int]  # old indices of the members that left, ascending
    to_union: np.ndarray  # old member index -> union index (leavers after the new members)
    union_ids: list[str]
    union_sizes: np.ndarray
    union_is_new: bool  # nobody left and no topic was deleted: union numbering = new numbering
    old_to_union: np.ndarray | None
    new_to_union: np.ndarray | None
    live_names: list[str]  # topics with metadata, as the assignors see them
    partition_topic: np.ndarray  # new global id -> live topic index
    ids_by_name: np.ndarray  # new global ids in Kafka's (topic name, partition) order
    name_rank: np.ndarray  # new global id -> its position in `ids_by_name`
    member_topics: list[np.ndarray]  # per member: live topic indices it subscribes to
    subscribed: np.ndarray  # bool [member, live topic]
    old_keys: np.ndarray  # old global id -> `topic_index << 32 | partition` (a layout-free name)


@dataclass
class NewPartitions:
    """The next shape's partitions: counts, where every old partition went, and their replica racks."""

    sizes: np.ndarray  # int64 per topic (0 = deleted)
    old_to_new: np.ndarray  # old global id -> new (-1: gone)
    rack_bits: np.ndarray | None  # uint64 per new partition, None when the group knows no racks


def new_partitions(old: GroupState, shape: GroupShape) -> NewPartitions:
    """The partitions after the event; a topic whose replica racks it changed joins `shape.metadata_changed`
    (so this comes before deciding whether the group rebalances)."""
    sizes = np.array(shape.sizes, dtype=np.int64)
    old_to_new = layout_map(old.sizes, sizes)
    return NewPartitions(sizes, old_to_new, _rack_bits(old, shape, sizes, old_to_new))


def relayout(old: GroupState, shape: GroupShape, parts: NewPartitions) -> Relayout:
    sizes, old_to_new = parts.sizes, parts.old_to_new
    num_partitions = int(sizes.sum())
    starts = np.concatenate([[0], np.cumsum(sizes)])
    members = shape.members
    member_ids = [m.id for m in members]
    m_new = len(members)
    remap = np.full(len(old.members), -1, dtype=np.int32)
    for i, c in enumerate(shape.carry):
        if isinstance(c, int):
            remap[c] = i
    leavers = np.flatnonzero(remap < 0).tolist()
    to_union = remap.copy()
    for k, j in enumerate(leavers):
        to_union[j] = m_new + k
    old_padded = np.zeros(sizes.size, dtype=np.int64)
    old_padded[: old.sizes.size] = old.sizes
    union_sizes = np.maximum(old_padded, sizes)
    union_is_new = not leavers and bool(np.array_equal(union_sizes, sizes))
    live = np.flatnonzero(sizes > 0)
    live_index = np.full(sizes.size, -1, dtype=np.int32)
    live_index[live] = np.arange(live.size, dtype=np.int32)
    by_name = sorted(live.tolist(), key=lambda t: java_string_key(shape.topics[t]))
    ids_by_name = (np.concatenate([np.arange(starts[t], starts[t + 1]) for t in by_name])
                   if by_name else np.zeros(0, dtype=np.int64))
    name_rank = np.empty(num_partitions, dtype=np.int64)
    name_rank[ids_by_name] = np.arange(num_partitions)
    cache: dict[int, np.ndarray] = {}  # by tuple identity: members share subscription tuples
    subscribed = np.zeros((m_new, live.size), dtype=bool)
    member_topics = []
    for i, m in enumerate(members):
        ts = cache.get(id(m.topics))
        if ts is None:
            idx = np.array([shape.topic_index.get(t, -1) for t in m.topics], dtype=np.int64)
            idx = live_index[idx[idx >= 0]]
            ts = cache[id(m.topics)] = idx[idx >= 0]
        member_topics.append(ts)
        subscribed[i, ts] = True
    old_topic = np.repeat(np.arange(old.sizes.size, dtype=np.int64), old.sizes)
    return Relayout(
        sizes=sizes, starts=starts, num_partitions=num_partitions, old_to_new=old_to_new,
        rack_bits=parts.rack_bits, member_ids=member_ids, remap=remap, leavers=leavers,
        to_union=to_union, union_ids=member_ids + [old.members[j].id for j in leavers], union_sizes=union_sizes,
        union_is_new=union_is_new,
        old_to_union=None if union_is_new else layout_map(old.sizes, union_sizes),
        new_to_union=None if union_is_new else layout_map(sizes, union_sizes),
        live_names=[shape.topics[t] for t in live.tolist()],
        partition_topic=np.repeat(np.arange(live.size, dtype=np.int32), sizes[live]),
        ids_by_name=ids_by_name, name_rank=name_rank, member_topics=member_topics, subscribed=subscribed,
        old_keys=(old_topic << 32) | (np.arange(old_topic.size, dtype=np.int64) - old.starts()[old_topic]),
    )


def _rack_bits(old: GroupState, shape: GroupShape, sizes: np.ndarray, old_to_new: np.ndarray) -> np.ndarray | None:
    """Replica racks per new partition as bit masks over `shape.rack_names`; a topic whose racks the
    event changed joins `shape.metadata_changed`."""
    if not shape.rack_names:
        return None
    total = int(sizes.sum())
    bits = move(old.rack_bits, old_to_new, total, 0) if old.rack_bits is not None else np.zeros(total, np.uint64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    rack_bit = {r: 1 << i for i, r in enumerate(shape.rack_names)}
    for t, rows in shape.rack_updates.items():
        block = np.zeros(int(sizes[t]), dtype=np.uint64)
        for p, row in enumerate(rows):
            mask = 0
            for rack in row:
                mask |= rack_bit[rack]
            block[p] = mask
        if not np.array_equal(bits[starts[t]:starts[t + 1]], block):
            shape.metadata_changed.add(t)
        bits[starts[t]:starts[t + 1]] = block
    return bits
