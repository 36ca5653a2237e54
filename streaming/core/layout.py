"""Step 2 of an event: the layout change from the old state to the next shape.

Partitions are global ids (start of their topic + partition number) and members are indices, so a new
topic, a partition increase, a deleted topic or a member leaving changes what every id means. `Relayout`
holds the maps between the old and the new numbering, once per event, for all strategies: old -> new,
and a *union* numbering (the new partitions plus the deleted ones, the new members plus the leavers) in
which a round's diff can name what left the group. It also holds what the assignors are given: the live
topics, each member's subscribed topics, and partitions in Kafka's (topic name, partition) order.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from assignors import GroupSpec
from assignors.javaorder import java_string_key
from assignors.optimality import TopicGroups
from assignors.spec import INT32
from streaming.core.shape import GroupShape
from streaming.core.state_codec import GroupState

_CACHED_PARTITIONS = 1 << 16  # layouts up to this size are kept: most events of a group leave its layout as is
_CACHED_SUBSCRIPTIONS = 1_024  # distinct subscriptions kept per layout (bounds what hostile input can pile up)


def layout_map(old_sizes: list[int], new_sizes: list[int]) -> np.ndarray:
    """Old global id -> new global id (-1: the partition is gone); topics may only be appended. Each old
    topic's partitions move by one offset, so one offset per topic and a few numpy calls build the map (a
    numpy call per step costs more than the few dozen partitions of a typical group)."""
    if old_sizes == new_sizes:  # most events keep the layout
        return identity(sum(new_sizes))
    shift: list[int] = []
    cut: list[tuple[int, int]] = []  # old ids past a topic's new count (a deleted topic's are all of them)
    old_start = new_start = 0
    for t, n_old in enumerate(old_sizes):
        n_new = new_sizes[t]
        shift.append(new_start - old_start)
        if n_new < n_old:
            cut.append((old_start + n_new, old_start + n_old))
        old_start += n_old
        new_start += n_new
    out = np.arange(old_start, dtype=np.int64) + _by_topic(shift, old_sizes)
    for a, b in cut:
        out[a:b] = -1
    return out


def identity(num_partitions: int) -> np.ndarray:
    """The `layout_map` of a layout onto itself (read-only; shared for small layouts)."""
    return _cached_identity(num_partitions) if num_partitions <= _CACHED_PARTITIONS else _identity(num_partitions)


def _identity(num_partitions: int) -> np.ndarray:
    out = np.arange(num_partitions, dtype=np.int64)
    out.setflags(write=False)
    return out


_cached_identity = lru_cache(maxsize=1_024)(_identity)


def move(values: np.ndarray, mapping: np.ndarray, size: int, fill: int, gone: bool = True) -> np.ndarray:
    """Re-lay a per-partition array through a `layout_map`; `gone=False` says no partition is gone (no -1 in
    `mapping`: a map into the union layout, or one of added partitions only), which spares the masking. The
    calls are numpy's cheapest for the few dozen partitions of most groups (`np.full` and a Python int operand
    cost more than the work on them)."""
    out = np.empty(size, dtype=values.dtype)
    out.fill(fill)
    if gone:
        keep = mapping >= 0
        out[mapping[keep]] = values[keep]
    else:
        out[mapping] = values
    return out


def relaid_owner(owner: np.ndarray, lay: Relayout) -> np.ndarray:
    """Old owners on the new layout: members renumbered, partitions moved; -1 where a member left. An event
    that keeps every old member at its index and every partition keeps the array itself (owner arrays are
    never written in place, so states may share one)."""
    out = owner if lay.same_members else lay.remap_or_nobody.take(owner)
    return out if lay.same_partitions else move(out, lay.old_to_new, lay.num_partitions, -1, lay.partitions_gone)


def relaid_generations(member_generation: np.ndarray, lay: Relayout) -> np.ndarray:
    """Old members' generations (int32 per member) in the new member order; a member new to the group has none
    (-1). Always a new array: a state's arrays are its own."""
    if lay.same_members and len(lay.member_ids) == member_generation.size:
        return member_generation.copy()
    gens = np.full(len(lay.member_ids), -1, dtype=np.int32)
    kept = lay.remap >= 0
    gens[lay.remap[kept]] = member_generation[kept]
    return gens


def union_owner(owner: np.ndarray, lay: Relayout) -> np.ndarray:
    """Old owners on the union layout (leavers and deleted partitions kept, for a diff to name them); an event
    that keeps the old partitions (a leave) keeps their ids too."""
    out = lay.to_union_or_nobody.take(owner)
    return out if lay.union_keeps_old_ids else move(out, lay.old_to_union, lay.union_num_partitions, -1,  # type: ignore[arg-type]
                                                    False)


def union_values(values: np.ndarray, lay: Relayout) -> np.ndarray:
    """A per-partition array of the new layout on the union layout (a leaver keeps its partitions' values; a
    deleted topic's partitions get 0)."""
    return values if lay.union_is_new else move(values, lay.new_to_union, lay.union_num_partitions, 0,  # type: ignore[arg-type]
                                                False)


class NewPartitions:
    """The next shape's partitions: counts, where every old partition went, and their replica racks."""

    def __init__(self, sizes: np.ndarray, old_to_new: np.ndarray | None, rack_bits: np.ndarray | None,
                 same: bool) -> None:
        self.sizes = sizes  # int64 per topic (0 = deleted)
        self.old_to_new = old_to_new  # old global id -> new (-1: gone); None: the identity (`same`)
        self.rack_bits = rack_bits  # uint64 per new partition, None when the group knows no racks
        self.same = same  # the partition counts are the old ones (`sizes` is then the old state's array)


def new_partitions(old: GroupState, shape: GroupShape) -> NewPartitions:
    """The partitions after the event; a topic whose replica racks it changed joins `shape.metadata_changed`
    (so this comes before deciding whether the group rebalances)."""
    old_sizes = old.sizes.tolist()
    old_to_new: np.ndarray | None = None
    if old_sizes == shape.sizes:  # most events: the states share the (never modified) counts
        sizes = old.sizes
    else:
        sizes = np.array(shape.sizes, dtype=np.int64)
        old_to_new = layout_map(old_sizes, shape.sizes)
    return NewPartitions(sizes, old_to_new, _rack_bits(old, shape, sizes, old_to_new), sizes is old.sizes)


class Relayout:
    """The old state's numbering mapped onto the next shape's (see the module docstring), made once per event
    (`apply_event`). What only some events read is derived on first use and kept (None until then)."""

    def __init__(self, old: GroupState, shape: GroupShape, parts: NewPartitions) -> None:
        new = _partition_layout(tuple(shape.topics), tuple(shape.sizes))
        old_sizes = shape.sizes if parts.same else old.sizes.tolist()
        members = shape.members
        self.sizes = parts.sizes  # int64 per topic, the new partition counts (0 = deleted)
        self.starts = new.starts  # int64[T+1]
        self.num_partitions = new.num_partitions
        self._old_to_new = parts.old_to_new
        self.same_partitions = parts.same  # the event left the partitions as they were (`old_to_new` is the identity)
        # a count went down (a topic was deleted): `old_to_new` holds -1
        gone = False
        if not parts.same:
            for t, n in enumerate(old_sizes):
                if shape.sizes[t] < n:
                    gone = True
                    break
        self.partitions_gone = gone
        self.rack_bits = parts.rack_bits  # uint64 per new partition, None when the group knows no racks
        self.member_ids = [m.id for m in members]
        remap = [-1] * len(old.members)
        for i, c in enumerate(shape.carry):
            if isinstance(c, int):
                remap[c] = i
        self._remap = remap  # old member index -> new (-1: left)
        same_members = True  # each old member kept its index (most events)
        for j, i in enumerate(remap):
            if i != j:
                same_members = False
                break
        self.same_members = same_members
        self.leavers = [j for j, i in enumerate(remap) if i < 0]  # old indices of the members that left, ascending
        self.union_ids = self.member_ids + [old.members[j].id for j in self.leavers]
        union_l = old_sizes if parts.same else [
            max(a, b) for a, b in zip(old_sizes + [0] * (len(shape.sizes) - len(old_sizes)), shape.sizes, strict=True)]
        # nobody left and no topic was deleted: union numbering = new numbering
        self.union_is_new = not self.leavers and union_l == shape.sizes
        self.union_sizes = parts.sizes if union_l == shape.sizes else np.array(union_l, dtype=np.int64)
        # `union_owner` sizes its array with it (numpy sums cost more)
        self.union_num_partitions = new.num_partitions if union_l == shape.sizes else sum(union_l)
        self.old_to_union: np.ndarray | None = None if self.union_is_new else layout_map(old_sizes, union_l)
        self.union_keeps_old_ids = union_l == old_sizes  # `old_to_union` is the identity
        self.new_to_union: np.ndarray | None = None if self.union_is_new else layout_map(shape.sizes, union_l)
        self.live_names = new.live_names  # topics with metadata, as the assignors see them
        self.partition_topic = new.partition_topic  # new global id -> live topic index
        self.ids_by_name = new.ids_by_name  # new global ids in Kafka's (topic name, partition) order
        self.name_rank = new.name_rank  # new global id -> its position in `ids_by_name`
        self.in_name_order = new.in_name_order  # `ids_by_name` is the identity: global id order is name order
        member_topics = []
        rows = []
        member_live: list[list[int]] = []
        for m in members:
            ts, row, live = new.subscription(m.topics)
            member_topics.append(ts)
            rows.append(row)
            member_live.append(live)
        self._member_live = member_live  # `member_topics` as lists, for `topic_groups`
        rows.append(new.everyone)
        self.member_topics = member_topics  # per member: live topic indices it subscribes to
        # `subscribed` and a last row of True: index -1 (nobody) is never foreign
        # (the `ndarray` constructor: one call instead of `frombuffer` and `reshape`)
        self.subscribed_or_nobody = np.ndarray((len(members) + 1, len(new.live_names)), bool, b"".join(rows))
        self.subscribed = self.subscribed_or_nobody[: len(members)]  # bool [member, live topic]
        # old global id -> `topic_index << 32 | partition` (a layout-free name); the old layout is usually
        # still cached from the event that made it
        self.old_keys = new.keys if parts.same else _partition_layout(tuple(old.topics), tuple(old_sizes)).keys
        self.spec = new.spec  # the live topics without members (`_PartitionLayout.spec`)
        self._remap_or_nobody: np.ndarray | None = None
        self._to_union_or_nobody: np.ndarray | None = None
        self._subscribed_rows: list[list[bool]] | None = None
        self._topic_groups: TopicGroups | None = None

    @property
    def old_to_new(self) -> np.ndarray:
        """Old global id -> new (-1: gone); made on first use when the partitions stayed as they were (the
        identity), which most events never read (`relaid_owner`)."""
        if self._old_to_new is None:
            self._old_to_new = identity(self.num_partitions)
        return self._old_to_new

    @property
    def remap_or_nobody(self) -> np.ndarray:
        """Old member index -> new, and a last -1: indexed by an owner array, nobody (-1) stays nobody. Events
        that keep the members' indices never read it (`relaid_owner`)."""
        if self._remap_or_nobody is None:
            self._remap_or_nobody = np.array([*self._remap, -1], INT32)
        return self._remap_or_nobody

    @property
    def remap(self) -> np.ndarray:
        """Old member index -> new (-1: left)."""
        return self.remap_or_nobody[:-1]

    @property
    def to_union_or_nobody(self) -> np.ndarray:
        """Old member index -> union index (leavers after the new members), and a last -1; read only when the
        union numbering is not the new one (`union_owner`)."""
        if self._to_union_or_nobody is None:
            if self.leavers:
                to_union = list(self._remap)
                for k, j in enumerate(self.leavers):
                    to_union[j] = len(self.member_ids) + k
                self._to_union_or_nobody = np.array([*to_union, -1], INT32)
            else:
                self._to_union_or_nobody = self.remap_or_nobody
        return self._to_union_or_nobody

    @property
    def subscribed_rows(self) -> list[list[bool]]:
        """`subscribed` as Python lists, for the per-round checks of small groups (one numpy call per
        event instead of one indexing per round)."""
        if self._subscribed_rows is None:
            self._subscribed_rows = self.subscribed.tolist()
        return self._subscribed_rows

    @property
    def topic_groups(self) -> TopicGroups:
        """The live topics' subscribers merged into topic groups: every strategy's round of the event reads them
        (metrics and `min_moves` of small rounds), so they are derived once per event; from the members' topic
        lists rather than `optimality.topic_subscribers` of the matrix (whose transposed `tolist` and a scan
        of every (topic, member) cost more on a few topics)."""
        if self._topic_groups is None:
            subscribers: list[list[int]] = [[] for _ in self.live_names]
            for i, live in enumerate(self._member_live):
                for t in live:
                    subscribers[t].append(i)
            self._topic_groups = TopicGroups([frozenset(members) for members in subscribers], len(self.member_ids))
        return self._topic_groups


class _PartitionLayout:
    """What a layout (topic names and partition counts) alone decides: shared, read-only arrays. Every
    per-partition array is an `arange` plus one offset per topic, so a few numpy calls build each, whatever
    the number of topics (most layouts hold a few dozen partitions, where each numpy call costs more than the
    partitions)."""

    def __init__(self, topics: tuple[str, ...], sizes: tuple[int, ...]) -> None:
        starts = [0]
        for n in sizes:
            starts.append(starts[-1] + n)
        live = [t for t, n in enumerate(sizes) if n > 0]
        live_sizes = [sizes[t] for t in live]
        topic_sizes = np.array(live_sizes, dtype=np.int64)
        by_name = sorted(live, key=lambda t: java_string_key(topics[t]))
        first_rank = [0] * len(sizes)  # per topic: the position of its partition 0 in (topic name, partition) order
        rank = 0
        for t in by_name:
            first_rank[t] = rank
            rank += sizes[t]
        ordinal = np.arange(starts[-1], dtype=np.int64)
        self.starts = np.array(starts, dtype=np.int64)  # int64[T+1]
        self.num_partitions = starts[-1]
        self.live_names = [topics[t] for t in live]
        # topic name -> live topic index (-1: deleted)
        self.live_of = dict.fromkeys(topics, -1) | {topics[t]: i for i, t in enumerate(live)}
        self.in_name_order = by_name == live  # the live topics' ids are in name order (`ids_by_name` = `ordinal`)
        # global ids in Kafka's (topic name, partition) order
        self.ids_by_name = ordinal if self.in_name_order else ordinal + _by_topic(
            [starts[t] - first_rank[t] for t in by_name], [sizes[t] for t in by_name])
        # per global id, its `topic_index << 32 | partition`: an offset per live topic in id order, repeated
        self.keys = np.array([(t << 32) - starts[t] for t in live], dtype=np.int64).repeat(topic_sizes) + ordinal
        self.everyone = b"\x01" * len(live)  # a `Relayout.subscribed` row of a member subscribing to every live topic
        # the live topics without members: each event's assignor input copies it (`with_members`)
        self.spec = spec = GroupSpec(
            topic_names=self.live_names, topic_sizes=topic_sizes, member_ids=[],
            subscriptions=[], member_topics=[], owned=[], generations=np.zeros(0, dtype=np.int64), racks=[],
            instance_ids=[])
        # what the assignors derive from the topics alone, read from the spec rather than derived again
        self.partition_topic = spec.partition_topic  # global id -> live topic index
        self.name_rank = spec.name_rank  # global id -> its position in `ids_by_name`
        # subscription -> (live topic indices, its `Relayout.subscribed` row, the indices as a list): a group's
        # members keep their subscriptions over many events, and the layout with them
        self.subscriptions = _subscriptions(tuple(self.live_names))
        for array in (self.starts, self.ids_by_name, self.keys, topic_sizes):  # shared by every event
            array.setflags(write=False)

    def subscription(self, topics: tuple[str, ...]) -> tuple[np.ndarray, bytes, list[int]]:
        """A member's live topic indices (read-only, subscription order), its `subscribed` row, and the indices
        as a list (shared: not to be modified)."""
        known = self.subscriptions.get(topics)
        if known is None:
            if len(self.subscriptions) >= _CACHED_SUBSCRIPTIONS:
                self.subscriptions.clear()
            live = [self.live_of[t] for t in topics if self.live_of.get(t, -1) >= 0]
            row = bytearray(len(self.live_names))
            for t in live:
                row[t] = 1
            ids = np.array(live, dtype=np.int32)
            ids.setflags(write=False)
            known = self.subscriptions[topics] = (ids, bytes(row), live)
        return known


@lru_cache(maxsize=4_096)
def _subscriptions(live_names: tuple[str, ...]) -> dict[tuple[str, ...], tuple[np.ndarray, bytes, list[int]]]:
    """`_PartitionLayout.subscriptions`, shared by the layouts of the same live topics: what a subscription maps
    to depends on those alone, and a partition count that changes makes a new layout of the same topics."""
    return {}


def _by_topic(offsets: list[int], counts: list[int]) -> np.ndarray:
    """int64 per partition: each topic's offset repeated over its partitions (the method: `np.repeat` adds a
    Python-level wrapper)."""
    return np.array(offsets, dtype=np.int64).repeat(counts)


def _partition_layout(topics: tuple[str, ...], sizes: tuple[int, ...]) -> _PartitionLayout:
    if sum(sizes) <= _CACHED_PARTITIONS:
        return _cached_partition_layout(topics, sizes)
    return _PartitionLayout(topics, sizes)


_cached_partition_layout = lru_cache(maxsize=4_096)(_PartitionLayout)


def _rack_bits(old: GroupState, shape: GroupShape, sizes: np.ndarray,
               old_to_new: np.ndarray | None) -> np.ndarray | None:
    """Replica racks per new partition as bit masks over `shape.rack_names`; a topic whose racks the
    event changed joins `shape.metadata_changed`. `old_to_new`: None when the partitions stayed as they were."""
    if not shape.rack_names:
        return None
    total = int(sizes.sum())
    if old.rack_bits is None:
        bits = np.zeros(total, np.uint64)
    else:
        bits = old.rack_bits.copy() if old_to_new is None else move(old.rack_bits, old_to_new, total, 0)
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
