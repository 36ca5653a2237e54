"""Step 2 of an event: the layout change from the old state to the next shape.

Partitions are global ids (start of their topic + partition number) and members are indices, so a new
topic, a partition increase, a deleted topic or a member leaving changes what every id means. `Relayout`
holds the maps between the old and the new numbering, once per event, for all strategies: old -> new,
and a *union* numbering (the new partitions plus the deleted ones, the new members plus the leavers) in
which a round's diff can name what left the group. It also holds what the assignors are given: the live
topics, each member's subscribed topics, and partitions in Kafka's (topic name, partition) order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from assignors import GroupSpec
from assignors.javaorder import java_string_key
from assignors.optimality import topic_subscribers
from streaming.core.shape import GroupShape
from streaming.core.state_codec import GroupState

_CACHED_PARTITIONS = 1 << 16  # layouts up to this size are kept: most events of a group leave its layout as is
_CACHED_SUBSCRIPTIONS = 1_024  # distinct subscriptions kept per layout (bounds what hostile input can pile up)


def layout_map(old_sizes: np.ndarray, new_sizes: np.ndarray) -> np.ndarray:
    """Old global id -> new global id (-1: the partition is gone); topics may only be appended."""
    old_list, new_list = old_sizes.tolist(), new_sizes.tolist()
    if old_list == new_list:  # most events keep the layout (lists compare faster than numpy calls on a few topics)
        return identity(sum(new_list))
    old = np.zeros(new_sizes.size, dtype=np.int64)
    old[: old_sizes.size] = old_sizes
    old_starts = np.concatenate([[0], np.cumsum(old)])
    new_starts = np.concatenate([[0], np.cumsum(new_sizes)])
    topic = np.repeat(np.arange(old.size), old)
    number = np.arange(topic.size, dtype=np.int64) - old_starts[topic]
    return np.where(number < new_sizes[topic], new_starts[topic] + number, -1)


def identity(num_partitions: int) -> np.ndarray:
    """The `layout_map` of a layout onto itself (read-only; shared for small layouts)."""
    return _cached_identity(num_partitions) if num_partitions <= _CACHED_PARTITIONS else _identity(num_partitions)


def _identity(num_partitions: int) -> np.ndarray:
    out = np.arange(num_partitions, dtype=np.int64)
    out.flags.writeable = False
    return out


_cached_identity = lru_cache(maxsize=1_024)(_identity)


def move(values: np.ndarray, mapping: np.ndarray, size: int, fill: int) -> np.ndarray:
    """Re-lay a per-partition array through a `layout_map`."""
    out = np.full(size, fill, dtype=values.dtype)
    keep = mapping >= 0
    out[mapping[keep]] = values[keep]
    return out


def relaid_owner(owner: np.ndarray, lay: Relayout) -> np.ndarray:
    """Old owners on the new layout: members renumbered, partitions moved; -1 where a member left."""
    out = lay.remap_or_nobody[owner]
    return out if lay.same_partitions else move(out, lay.old_to_new, lay.num_partitions, -1)


def union_owner(owner: np.ndarray, lay: Relayout) -> np.ndarray:
    """Old owners on the union layout (leavers and deleted partitions kept, for a diff to name them)."""
    return move(lay.to_union_or_nobody[owner], lay.old_to_union, int(lay.union_sizes.sum()), -1)  # type: ignore[arg-type]


@dataclass
class Relayout:
    """The old state's numbering mapped onto the next shape's (see the module docstring). What it derives on
    first use is kept in a slot (None until then) rather than a `functools.cached_property`, which would keep the
    class a Python class for mypyc."""

    sizes: np.ndarray  # int64 per topic, the new partition counts (0 = deleted)
    starts: np.ndarray  # int64[T+1]
    num_partitions: int
    old_to_new: np.ndarray  # old global id -> new (-1: gone)
    same_partitions: bool  # the event left the partitions as they were (`old_to_new` is the identity)
    rack_bits: np.ndarray | None  # uint64 per new partition, None when the group knows no racks
    member_ids: list[str]
    remap: np.ndarray  # old member index -> new (-1: left)
    remap_or_nobody: np.ndarray  # `remap` and a last -1: indexed by an owner array, nobody (-1) stays nobody
    leavers: list[int]  # old indices of the members that left, ascending
    to_union_or_nobody: np.ndarray  # old member index -> union index (leavers after the new members), a last -1
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
    subscribed_or_nobody: np.ndarray  # `subscribed` and a last row of True: index -1 (nobody) is never foreign
    old_keys: np.ndarray  # old global id -> `topic_index << 32 | partition` (a layout-free name)
    spec: GroupSpec  # the live topics without members (`_PartitionLayout.spec`)

    def __post_init__(self) -> None:
        # mypyc leaves a native dataclass's `field(init=False, default=None)` unset: the slots start here
        self._subscribed_rows: list[list[bool]] | None = None
        self._topic_subscribers: list[frozenset[int]] | None = None

    @property
    def subscribed_rows(self) -> list[list[bool]]:
        """`subscribed` as Python lists, for the per-round checks of small groups (one numpy call per
        event instead of one indexing per round)."""
        if self._subscribed_rows is None:
            self._subscribed_rows = self.subscribed.tolist()
        return self._subscribed_rows

    @property
    def topic_subscribers(self) -> list[frozenset[int]]:
        """Per live topic, the members subscribing to it: every strategy's round of the event reads them
        (metrics and `min_moves` of small rounds), so they are derived once per event."""
        if self._topic_subscribers is None:
            self._topic_subscribers = topic_subscribers(self.subscribed)
        return self._topic_subscribers


@dataclass
class NewPartitions:
    """The next shape's partitions: counts, where every old partition went, and their replica racks."""

    sizes: np.ndarray  # int64 per topic (0 = deleted)
    old_to_new: np.ndarray  # old global id -> new (-1: gone)
    rack_bits: np.ndarray | None  # uint64 per new partition, None when the group knows no racks
    same: bool  # the partition counts are the old ones (`sizes` is then the old state's array)


def new_partitions(old: GroupState, shape: GroupShape) -> NewPartitions:
    """The partitions after the event; a topic whose replica racks it changed joins `shape.metadata_changed`
    (so this comes before deciding whether the group rebalances)."""
    if old.sizes.tolist() == shape.sizes:  # most events: the states share the (never modified) counts
        sizes, old_to_new = old.sizes, identity(sum(shape.sizes))
    else:
        sizes = np.array(shape.sizes, dtype=np.int64)
        old_to_new = layout_map(old.sizes, sizes)
    return NewPartitions(sizes, old_to_new, _rack_bits(old, shape, sizes, old_to_new), sizes is old.sizes)


def relayout(old: GroupState, shape: GroupShape, parts: NewPartitions) -> Relayout:
    sizes, old_to_new = parts.sizes, parts.old_to_new
    new = _partition_layout(tuple(shape.topics), tuple(shape.sizes))
    old_sizes = shape.sizes if parts.same else old.sizes.tolist()
    members = shape.members
    member_ids = [m.id for m in members]
    m_new = len(members)
    remap_l = [-1] * len(old.members)
    for i, c in enumerate(shape.carry):
        if isinstance(c, int):
            remap_l[c] = i
    leavers = [j for j, i in enumerate(remap_l) if i < 0]
    remap_or_nobody = np.array([*remap_l, -1], dtype=np.int32)
    to_union_or_nobody = remap_or_nobody  # most events: nobody left, the union's members are the new ones
    if leavers:
        to_union_l = list(remap_l)
        for k, j in enumerate(leavers):
            to_union_l[j] = m_new + k
        to_union_or_nobody = np.array([*to_union_l, -1], dtype=np.int32)
    same_partitions = parts.same
    union_l = old_sizes if same_partitions else [
        max(a, b) for a, b in zip(old_sizes + [0] * (len(shape.sizes) - len(old_sizes)), shape.sizes, strict=True)]
    union_is_new = not leavers and union_l == shape.sizes
    union_sizes = sizes if union_l == shape.sizes else np.array(union_l, dtype=np.int64)
    member_topics = []
    rows = []
    for m in members:
        ts, row = new.subscription(m.topics)
        member_topics.append(ts)
        rows.append(row)
    rows.append(new.everyone)
    subscribed_or_nobody = np.frombuffer(b"".join(rows), dtype=bool).reshape(m_new + 1, len(new.live_names))
    return Relayout(
        sizes=sizes, starts=new.starts, num_partitions=new.num_partitions, old_to_new=old_to_new,
        same_partitions=same_partitions, rack_bits=parts.rack_bits, member_ids=member_ids,
        remap=remap_or_nobody[:-1], remap_or_nobody=remap_or_nobody,
        leavers=leavers, to_union_or_nobody=to_union_or_nobody,
        union_ids=member_ids + [old.members[j].id for j in leavers], union_sizes=union_sizes,
        union_is_new=union_is_new,
        old_to_union=None if union_is_new else layout_map(old.sizes, union_sizes),
        new_to_union=None if union_is_new else layout_map(sizes, union_sizes),
        live_names=new.live_names, partition_topic=new.partition_topic, ids_by_name=new.ids_by_name,
        name_rank=new.name_rank, member_topics=member_topics, subscribed=subscribed_or_nobody[:m_new],
        subscribed_or_nobody=subscribed_or_nobody,
        # the old layout's keys: usually still cached from the event that made it
        old_keys=new.keys if same_partitions else _partition_layout(tuple(old.topics), tuple(old_sizes)).keys,
        spec=new.spec,
    )


@dataclass(frozen=True)
class _PartitionLayout:
    """What a layout (topic names and partition counts) alone decides: shared, read-only arrays."""

    starts: np.ndarray  # int64[T+1]
    num_partitions: int
    live_names: list[str]
    live_of: dict[str, int]  # topic name -> live topic index (-1: deleted)
    partition_topic: np.ndarray  # global id -> live topic index
    ids_by_name: np.ndarray
    name_rank: np.ndarray
    keys: np.ndarray  # global id -> `topic_index << 32 | partition`
    everyone: bytes  # a `Relayout.subscribed` row of a member subscribing to every live topic
    spec: GroupSpec  # the live topics without members: each event's assignor input copies it (`with_members`)
    # subscription -> (live topic indices, its `Relayout.subscribed` row): a group's members keep their
    # subscriptions over many events, and the layout with them
    subscriptions: dict[tuple[str, ...], tuple[np.ndarray, bytes]] = field(default_factory=dict)

    def subscription(self, topics: tuple[str, ...]) -> tuple[np.ndarray, bytes]:
        """A member's live topic indices (read-only, subscription order) and its `subscribed` row."""
        known = self.subscriptions.get(topics)
        if known is None:
            if len(self.subscriptions) >= _CACHED_SUBSCRIPTIONS:
                self.subscriptions.clear()
            live = [self.live_of[t] for t in topics if self.live_of.get(t, -1) >= 0]
            row = bytearray(len(self.live_names))
            for t in live:
                row[t] = 1
            ids = np.array(live, dtype=np.int32)
            ids.flags.writeable = False
            known = self.subscriptions[topics] = (ids, bytes(row))
        return known


def _partition_layout(topics: tuple[str, ...], sizes: tuple[int, ...]) -> _PartitionLayout:
    if sum(sizes) <= _CACHED_PARTITIONS:
        return _cached_partition_layout(topics, sizes)
    return _make_partition_layout(topics, sizes)


def _make_partition_layout(topics: tuple[str, ...], sizes_t: tuple[int, ...]) -> _PartitionLayout:
    sizes = np.array(sizes_t, dtype=np.int64)
    num_partitions = int(sizes.sum())
    starts = np.concatenate([[0], np.cumsum(sizes)])
    live = np.flatnonzero(sizes > 0)
    by_name = sorted(live.tolist(), key=lambda t: java_string_key(topics[t]))
    ids_by_name = (np.concatenate([np.arange(starts[t], starts[t + 1]) for t in by_name])
                   if by_name else np.zeros(0, dtype=np.int64))
    name_rank = np.empty(num_partitions, dtype=np.int64)
    name_rank[ids_by_name] = np.arange(num_partitions)
    live_index = dict.fromkeys(topics, -1) | {topics[t]: i for i, t in enumerate(live.tolist())}
    live_names = [topics[t] for t in live.tolist()]
    partition_topic = np.repeat(np.arange(live.size, dtype=np.int32), sizes[live])
    for array in (starts, ids_by_name, name_rank, partition_topic):
        array.flags.writeable = False
    spec = GroupSpec(topic_names=live_names, topic_sizes=sizes[live], member_ids=[], subscriptions=[],
                     member_topics=[], owned=[], generations=np.zeros(0, dtype=np.int64), racks=[], instance_ids=[])
    # what a spec derives from the topics alone is known here already: the same arrays, and its live topics in
    # name order are `by_name` renumbered (deleted topics hold no place among them)
    spec.__dict__.update(partition_topic=partition_topic, name_rank=name_rank,
                         topics_by_name=np.array([live_index[topics[t]] for t in by_name], dtype=np.int32))
    out = _PartitionLayout(
        starts=starts, num_partitions=num_partitions, live_names=live_names, live_of=live_index,
        partition_topic=partition_topic, ids_by_name=ids_by_name, name_rank=name_rank, keys=_partition_keys(sizes_t),
        everyone=b"\x01" * live.size, spec=spec)
    for array in (out.keys, spec.topic_sizes, spec.topic_start, spec.topics_by_name):  # shared by every event
        array.flags.writeable = False
    return out


_cached_partition_layout = lru_cache(maxsize=4_096)(_make_partition_layout)


def _partition_keys(sizes_t: tuple[int, ...]) -> np.ndarray:
    """Global id -> `topic_index << 32 | partition` (a layout-free name) of a layout with these counts."""
    sizes = np.array(sizes_t, dtype=np.int64)
    topic = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return (topic << 32) | (np.arange(topic.size, dtype=np.int64) - starts[topic])


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
