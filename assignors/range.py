"""Kafka's client `RangeAssignor` ("range"), including the KIP-881 rack-aware pre-pass.

Each topic is split on its own over its subscribers in `MemberInfo` order: with P partitions and C
subscribers the first `P % C` get `P // C + 1` consecutive partitions, the rest `P // C`. Without
rack logic that is a closed form, computed for all (topic, subscriber) pairs at once.

With racks (some topic's subscribers have racks that meet its replica racks, and some partition is not
on every rack) Kafka first places what it can rack-locally, under the same per-topic quotas, then runs
the classic pass over what is left. Topics with the same subscriber list and the same "partition count"
are placed together so they stay co-partitioned; Kafka takes that count from its partition -> racks
map, which is empty (count 0, a group that places nothing) when no subscriber of the topic has a rack.
Within such a group every topic sees the same assignments, so one quota state stands for all of them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Final

import numpy as np

from assignors.model import (
    SMALL_GROUP,
    GroupSpec,
    even_share,
    ids_by_owner,
    rack_aware_enabled,
)
from assignors.spec import INT32, int32_codes

_NOBODY: Final = (-1).to_bytes(4, sys.byteorder, signed=True)  # an int32 owner of -1, native byte order


@dataclass
class _Quota:
    """Kafka's `TopicAssignmentState` counters for one topic (or one co-partitioned group of topics).
    Python ints and lists: the passes below are sequential scalar loops, where numpy scalars are slow."""

    per_member: int  # numPartitionsPerConsumer
    extra: int  # remainingConsumersWithExtraPartition
    assigned: list[int]  # per subscriber position

    @classmethod
    def fresh(cls, num_partitions: int, num_subscribers: int) -> _Quota:
        return cls(num_partitions // num_subscribers, num_partitions % num_subscribers, [0] * num_subscribers)

    def max_assignable(self, pos: int) -> int:
        return max(0, self.per_member + (1 if self.extra > 0 else 0) - self.assigned[pos])

    def on_assigned(self, pos: int, count: int) -> None:
        self.assigned[pos] += count
        if self.assigned[pos] > self.per_member:
            self.extra -= 1

    def classic_takes(self, available: int) -> list[int]:
        """How many of the `available` leftover partitions each subscriber takes in the classic pass."""
        takes = [0] * len(self.assigned)
        for pos in range(len(self.assigned)):
            if available == 0:
                break
            take = min(self.max_assignable(pos), available)
            if take:
                self.on_assigned(pos, take)
                takes[pos] = take
                available -= take
        return takes


class RangeAssignor:
    """Kafka's `RangeAssignor`. `prefer_rack_aware_logic` is Kafka's test-only `preferRackAwareLogic`."""

    name = "range"

    def __init__(self, prefer_rack_aware_logic: bool = False) -> None:
        self.prefer_rack_aware_logic = prefer_rack_aware_logic

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        return ids_by_owner(self.owners(spec), spec.num_members)

    def owners(self, spec: GroupSpec) -> np.ndarray:
        """int32 member index per global partition id (-1: nobody): `assign` without the per-member lists."""
        if spec.num_partitions <= SMALL_GROUP and (spec.partition_rack_bits is None
                                                   or all(r is None for r in spec.racks)):
            # no rack pass (it needs a consumer rack): the closed form alone
            return _small_closed_form(spec)
        subscribers, offsets = spec.topic_subscribers
        owners = np.full(spec.num_partitions, -1, dtype=np.int32)  # member index per global partition id
        plain = np.diff(offsets) > 0  # subscribed topics left to the closed form
        for topics, subs, quota, placed in self._rack_pass(spec, subscribers, offsets):
            plain[topics] = False
            numbers, members = _classic_leftovers(subs, quota, placed)
            for t in topics:
                owners[spec.topic_start[t] + numbers] = members
        _closed_form(spec, subscribers, offsets, plain, owners)
        return owners

    # -- rack-aware pre-pass --------------------------------------------------------------------------

    def _rack_pass(self, spec: GroupSpec, subscribers: np.ndarray, offsets: np.ndarray) -> list:
        """Kafka's `assignWithRackMatching`, if any topic needs it: per topic group it touched,
        `(topics, subscribers, quota, placed)`, `placed[p]` being the subscriber position partition p went
        to (-1: left for the classic pass), the same in every topic of the group."""
        bits = spec.partition_rack_bits
        if bits is None:
            return []
        has_rack = np.array([r is not None for r in spec.racks], dtype=bool)
        if not has_rack.any():
            return []
        member_bits = spec.member_rack_bit
        starts, sizes = spec.topic_start, spec.topic_sizes
        num_topics = len(spec.topic_names)
        needs = np.zeros(num_topics, dtype=bool)
        for t in range(num_topics):
            subs = subscribers[offsets[t] : offsets[t + 1]]
            if subs.size and has_rack[subs].any():
                needs[t] = rack_aware_enabled(
                    member_bits[subs], bits[starts[t] : starts[t + 1]], prefer=self.prefer_rack_aware_logic
                )
        if not needs.any():
            return []
        groups: dict[tuple[bytes, int], list[int]] = {}
        for t in range(num_topics):
            subs = subscribers[offsets[t] : offsets[t + 1]]
            if subs.size == 0:
                continue
            count = int(sizes[t]) if has_rack[subs].any() else 0  # size of Kafka's partitionRacks map
            groups.setdefault((subs.tobytes(), count), []).append(t)
        out = []
        for (_, count), topics in groups.items():
            t0 = topics[0]
            subs = subscribers[offsets[t0] : offsets[t0 + 1]]
            if len(topics) > 1:
                if count == 0:
                    continue
                quota = _Quota.fresh(count, subs.size)
                common = np.bitwise_and.reduce(
                    np.stack([bits[starts[t] : starts[t] + count] for t in topics]), axis=0
                )
                placed = _co_partitioned_pass(common, has_rack[subs], member_bits[subs], quota)
            elif needs[t0]:
                quota = _Quota.fresh(int(sizes[t0]), subs.size)
                placed = _single_topic_pass(bits[starts[t0] : starts[t0 + 1]], has_rack[subs], member_bits[subs], quota)
            else:
                continue
            out.append((np.array(topics, dtype=np.int64), subs, quota, placed))
        return out


def _classic_leftovers(subs: np.ndarray, quota: _Quota, placed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kafka's classic pass after the rack pass: subscribers in order take the lowest free partitions up
    to their remaining quota. Returns (partition numbers, owning members) over the whole topic."""
    free = np.flatnonzero(placed < 0)
    takes = quota.classic_takes(free.size)
    owner_pos = placed.copy()
    owner_pos[free[: sum(takes)]] = np.repeat(np.arange(subs.size), takes)
    numbers = np.flatnonzero(owner_pos >= 0)
    return numbers, subs[owner_pos[numbers]]


def _co_partitioned_pass(common: np.ndarray, has_rack: np.ndarray, bits: np.ndarray, quota: _Quota) -> np.ndarray:
    """Partition p of every topic in the group goes to the first subscriber that matches p in all of
    them (no rack, or a replica of p on its rack in every topic) and still has room in all of them.

    Subscribers with the same rack match the same partitions, so within a rack they fill up in order:
    one cursor per rack finds the candidate, and the earliest candidate over the matching racks wins."""
    placed = [-1] * common.size
    classes = _rack_classes(has_rack, bits)
    heads = dict.fromkeys(classes, 0)
    for p, on_racks in enumerate(common.tolist()):
        best = -1
        for key, positions in classes.items():
            if key is not None and not on_racks & key:
                continue
            i = heads[key]
            while i < len(positions) and quota.max_assignable(positions[i]) == 0:
                i += 1  # room only shrinks, so a full subscriber stays full
            heads[key] = i
            if i < len(positions) and (best < 0 or positions[i] < best):
                best = positions[i]
        if best >= 0:
            placed[p] = best
            quota.on_assigned(best, 1)
    return np.array(placed, dtype=np.int64)


def _single_topic_pass(part_bits: np.ndarray, has_rack: np.ndarray, bits: np.ndarray, quota: _Quota) -> np.ndarray:
    """Each subscriber in order takes up to its quota of the still free partitions on its rack, ascending.
    One queue per rack with a cursor: everything before the cursor is taken, so the scan is linear.
    `quota` is fresh (this is the topic's first pass), so a subscriber's room is q, or q + 1 while extras last.
    """
    placed = [-1] * part_bits.size
    taken = bytearray(part_bits.size)
    queues: dict[int | None, list[int]] = {}
    heads: dict[int | None, int] = {}
    per_member, extra, assigned = quota.per_member, quota.extra, quota.assigned
    for pos, key in enumerate(_rack_keys(has_rack, bits)):
        want = per_member + (1 if extra > 0 else 0)
        if key == 0 or want == 0:
            continue  # a rack no replica is on matches nothing
        if key not in queues:
            matching = np.arange(part_bits.size) if key is None else np.flatnonzero(part_bits & np.uint64(key))
            queues[key], heads[key] = matching.tolist(), 0
        queue, i, got = queues[key], heads[key], 0
        end = len(queue)
        while got < want and i < end:
            x = queue[i]
            i += 1
            if not taken[x]:
                taken[x] = 1
                placed[x] = pos
                got += 1
        heads[key] = i
        if got:
            assigned[pos] = got
            if got > per_member:
                extra -= 1
    quota.extra = extra
    return np.array(placed, dtype=np.int64)


def _rack_keys(has_rack: np.ndarray, bits: np.ndarray) -> list[int | None]:
    """Per subscriber what it matches: None = no rack (everything), else its rack's bit (0: nothing)."""
    return [int(b) if r else None for r, b in zip(has_rack.tolist(), bits.tolist(), strict=True)]


def _rack_classes(has_rack: np.ndarray, bits: np.ndarray) -> dict[int | None, list[int]]:
    """Subscriber positions grouped by `_rack_keys`; those that match nothing are left out."""
    classes: dict[int | None, list[int]] = {}
    for pos, key in enumerate(_rack_keys(has_rack, bits)):
        if key != 0:
            classes.setdefault(key, []).append(pos)
    return classes


def _small_closed_form(spec: GroupSpec) -> np.ndarray:
    """`_closed_form` over every topic of a small group, in plain Python: the int32 owners. Each subscriber's
    block is its index's native int32 bytes repeated, joined once into the buffer `np.frombuffer` wraps, which
    costs a fraction of converting a list of Python ints."""
    codes = int32_codes(spec.num_members)
    sizes = spec.topic_lists[0]
    blocks: list[bytes] = []
    for t, subs in enumerate(spec.small_subscribers):
        size = sizes[t]
        c = len(subs)
        if c == 0:
            blocks.append(_NOBODY * size)
            continue
        per = size // c
        extra = size - per * c
        for i in range(c):
            blocks.append(codes[subs[i]] * (per + 1 if i < extra else per))
    return np.frombuffer(b"".join(blocks), INT32)


def _closed_form(
    spec: GroupSpec, subscribers: np.ndarray, offsets: np.ndarray, selected: np.ndarray, owners: np.ndarray
) -> None:
    """Plain range for the selected (subscribed) topics: the i-th of C subscribers gets the next P // C
    partitions, plus one while i < P % C. `subscribers` is topic-major, so repeating each subscriber by
    its block length lays out the owners of all selected partitions in global id order at once."""
    if not selected.any():
        return
    counts = np.diff(offsets)
    c = np.maximum(counts, 1)
    pair_topic = np.repeat(np.arange(counts.size), counts)
    position = np.arange(subscribers.size) - offsets[pair_topic]
    length = np.where(selected[pair_topic], even_share(spec.topic_sizes[pair_topic], c[pair_topic], position), 0)
    blocks = np.repeat(subscribers, length)
    if selected.all():
        owners[:] = blocks
    else:
        owners[selected[spec.partition_topic]] = blocks
