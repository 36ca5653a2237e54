"""The data of one assignment call: clear objects at the API edge, flat integer arrays inside.

`GroupSpec` (assignors/spec.py) is built once per call (validation happens here, with messages that name the field) and
every strategy works on it. Partitions are global integer ids: ``id = topic_start[t] + p`` with topics
in the caller's metadata order, so a caller that keeps its own arrays in that layout (the streaming
state machine does) can build a spec without any per-partition Python objects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from assignors.pairs import CACHE, RESULTS
from assignors.spec import GroupSpec, gc_paused

MAX_RACKS = 64  # racks are bitmasks in one uint64 per partition
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


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
    weight: float = 1  # > 0: the member's share for `weighted-sticky` (carried in userData, docs/assignors.md)


def even_share(total, parts, position):
    """How many of `total` items the `position`-th of `parts` takes when they are split as evenly as possible,
    the first `total % parts` taking one more: the rule of Kafka's range assignors, the KIP-848 uniform
    quotas and MetaQ's slices. Works on ints and elementwise on numpy arrays."""
    return total // parts + (position < total % parts)


def even_shares(total: int, parts: int) -> np.ndarray:
    """`even_share` of every position, in order (int64)."""
    return np.asarray(even_share(total, parts, np.arange(parts, dtype=np.int64)), dtype=np.int64)


def owner_of(assignment: Sequence[np.ndarray], num_partitions: int) -> np.ndarray:
    """Each member's partition ids -> the owner (member index, -1 = nobody) of every partition."""
    owner = np.full(num_partitions, -1, dtype=np.int32)
    if assignment:
        sizes = [a.size for a in assignment]
        owner[np.concatenate(assignment).astype(np.int64)] = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    return owner


def ids_by_owner(owners: np.ndarray, num_members: int) -> list[np.ndarray]:
    """An owner (member index, -1 = nobody) per global partition id -> each member's ids, ascending."""
    assigned = np.flatnonzero(owners >= 0)
    who = owners[assigned]
    if num_members < 2**15:  # numpy's stable sort is a radix sort for 16-bit keys
        who = who.astype(np.int16)
    order = np.argsort(who, kind="stable")
    bounds = np.searchsorted(who[order], np.arange(num_members + 1))
    ids = assigned[order]
    return [ids[bounds[m] : bounds[m + 1]] for m in range(num_members)]


SMALL_GROUP = 512  # up to this many partitions, plain-Python assignor paths beat numpy's per-call overhead


def topic_blocks(spec: GroupSpec, topics: list[int]) -> np.ndarray:
    """The global ids of `topics`, topic after topic, partitions ascending."""
    if not topics:
        return np.zeros(0, dtype=np.int64)
    if spec.num_partitions <= SMALL_GROUP:
        start = spec.topic_start.tolist()
        ids: list[int] = []
        for t in topics:
            ids += range(start[t], start[t + 1])
        return np.array(ids, dtype=np.int64)
    t = np.asarray(topics, dtype=np.int64)
    sizes = spec.topic_sizes[t]
    offsets = np.cumsum(sizes) - sizes
    return np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(spec.topic_start[t] - offsets, sizes)


def _first_occurrences(ids: np.ndarray) -> np.ndarray:
    """`ids` without repeats, each kept where it first occurs."""
    unique, first = np.unique(ids, return_index=True)
    return ids if unique.size == ids.size else ids[np.sort(first)]


def _check_str(value: object, where: str) -> str:
    if type(value) is not str and not isinstance(value, str):
        raise ValueError(f"{where}: expected a string, got {type(value).__name__}")
    if not value.isascii() and _SURROGATE.search(value):  # Kafka's strings travel as UTF-8, which has none
        raise ValueError(f"{where}: {value!r} contains an unpaired UTF-16 surrogate")
    return value


def _check_int(value: object, where: str) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{where}: expected an integer, got {type(value).__name__}")
    return int(value)


def _check_int32(value: object, where: str) -> int:
    """Kafka's generation ids and partition counts are int32 on the wire."""
    number = _check_int(value, where)
    if not INT32_MIN <= number <= INT32_MAX:
        raise ValueError(f"{where}: {number} is outside Kafka's 32-bit range")
    return number


def _check_weight(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{where}: expected a positive number, got {type(value).__name__}")
    weight = float(value)
    if not math.isfinite(weight) or weight <= 0:
        raise ValueError(f"{where}: expected a positive number, got {value!r}")
    return weight


def build_spec(
    topics: Mapping[str, int],
    members: Mapping[str, Member],
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> GroupSpec:
    """Validate the public inputs and lay them out as a `GroupSpec`.

    Kafka's lenient cases stay lenient: topics with 0 partitions count as without metadata, subscribed
    topics without metadata are ignored, owned partitions outside the metadata are left out of `owned`
    (those of a topic with metadata are kept aside in `phantoms`: Kafka's sticky engine can throw on them).
    """
    if not isinstance(topics, Mapping):
        raise ValueError(f"topics: expected a mapping of topic -> partition count, got {type(topics).__name__}")
    if not isinstance(members, Mapping):
        raise ValueError(f"members: expected a mapping of member id -> Member, got {type(members).__name__}")
    names: list[str] = []
    sizes: list[int] = []
    for name, count in topics.items():
        _check_str(name, "topics")
        count = _check_int32(count, f"topics[{name!r}]")
        if count < 0:
            raise ValueError(f"topics[{name!r}]: partition count must be >= 0, got {count}")
        if count > 0:
            names.append(name)
            sizes.append(count)
    topic_index = {n: i for i, n in enumerate(names)}

    member_ids: list[str] = []
    subscriptions: list[tuple[str, ...]] = []
    member_topics: list[np.ndarray] = []
    generations: list[int] = []
    racks: list[str | None] = []
    instance_ids: list[str | None] = []
    weights: list[float] = []
    raw_owned: list[Sequence] = []
    seen_subscriptions: dict[tuple, tuple[tuple[str, ...], np.ndarray]] = {}  # members mostly share them
    for mid, m in members.items():
        _check_str(mid, "members")
        where = f"members[{mid!r}]"
        if not isinstance(m, Member):
            raise ValueError(f"{where}: expected a Member, got {type(m).__name__}")
        if type(m.topics) not in (list, tuple) and (
            isinstance(m.topics, (str, bytes)) or not isinstance(m.topics, Sequence | set | frozenset)
        ):
            raise ValueError(f"{where}.topics: expected a list of topic names")
        key = tuple(m.topics)
        known = seen_subscriptions.get(key)
        if known is None:
            # a name of `topics` was checked there (a str equal to a key is that key); only others are checked
            subs = tuple(dict.fromkeys(t if type(t) is str and t in topic_index else _check_str(t, f"{where}.topics")
                                       for t in key))
            indices = np.array([topic_index[t] for t in subs if t in topic_index], dtype=np.int32)
            indices.flags.writeable = False  # shared by every member with this subscription
            known = seen_subscriptions[key] = (subs, indices)
        gen = _check_int32(m.generation, f"{where}.generation")
        if m.rack is not None:
            _check_str(m.rack, f"{where}.rack")
        if m.instance_id is not None:
            _check_str(m.instance_id, f"{where}.instance_id")
        if type(m.owned) not in (list, tuple) and (
            isinstance(m.owned, (str, bytes, Mapping)) or not isinstance(m.owned, Sequence | set | frozenset)
        ):
            raise ValueError(f"{where}.owned: expected a list of (topic, partition) pairs")
        member_ids.append(mid)
        subscriptions.append(known[0])
        member_topics.append(known[1])
        raw_owned.append(m.owned)
        generations.append(gen)
        racks.append(m.rack or None)
        instance_ids.append(m.instance_id)
        weights.append(1.0 if type(m.weight) is int and m.weight == 1 else _check_weight(m.weight, f"{where}.weight"))
    layout = _TopicLayout(names, sizes, topic_index)
    with gc_paused():
        owned = layout.owned_ids_all(raw_owned, [f"members[{mid!r}].owned" for mid in member_ids])

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
        phantoms=layout.phantoms,
        weights=None if all(w == 1 for w in weights) else np.array(weights, dtype=np.float64),
    )
    if partition_racks is not None:
        attach_partition_racks(spec, partition_racks)
    return spec


class _TopicLayout:
    """Maps owned (topic, partition) pairs to global ids; topics without metadata are dropped (Kafka)."""

    def __init__(self, names: list[str], sizes: list[int], topic_index: dict[str, int]) -> None:
        self.names = names
        self.topic_index = topic_index
        self.sizes = np.array([*sizes, 0], dtype=np.int64)  # index -1: a topic without metadata has no partitions
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.phantoms: dict[int, list[tuple[int, int]]] = {}

    def owned_ids_all(self, lists: list[Sequence], wheres: list[str]) -> list[np.ndarray]:
        """Global ids of every member's owned pairs that have metadata, first occurrence order,
        duplicates dropped. Lists a previous result handed out are recognised without reading their
        pairs, and validated caller tuples seed the tuple cache (`assignors.pairs`)."""
        key = (tuple(self.names), tuple(self.sizes[:-1].tolist()))
        out = []
        seeds: list[tuple[np.ndarray, np.ndarray]] = []
        for member, (pairs, where) in enumerate(zip(lists, wheres, strict=True)):
            ids = RESULTS.ids_of(pairs, key) if type(pairs) is list and pairs else None
            out.append(ids if ids is not None else self.owned_ids(pairs, where, seeds, member))
        if seeds:
            CACHE.seed(key, seeds)
        # One count over everyone instead of a unique() per member: repeats are rare (conflicts aside).
        counts = np.bincount(np.concatenate([np.zeros(0, dtype=np.int64), *out]), minlength=int(self.starts[-1]))
        if counts.max(initial=0) > 1:
            out = [_first_occurrences(ids) if ids.size and counts[ids].max() > 1 else ids for ids in out]
        return out

    def owned_ids(self, pairs: Sequence, where: str, seeds: list | None = None, member: int = -1) -> np.ndarray:
        """Global ids of the owned pairs with metadata, in order, repeats kept. When every pair is a
        plain `(str, int)` tuple, `(ids, tuples)` is added to `seeds`: results may hand those out."""
        if not pairs:
            return np.zeros(0, dtype=np.int64)
        # C-level checks and lookups (map/zip/fromiter): members may own a million partitions in total.
        pair_types = set(map(type, pairs))
        if not pair_types <= {tuple, list}:
            return self._owned_ids_checked(pairs, where, member)
        try:
            topics, numbers = zip(*pairs, strict=True)  # fails unless every pair has two items
        except ValueError:
            return self._owned_ids_checked(pairs, where, member)
        if set(map(type, topics)) != {str} or set(map(type, numbers)) != {int}:
            return self._owned_ids_checked(pairs, where, member)
        try:
            p = np.fromiter(numbers, dtype=np.int64, count=len(numbers))
        except OverflowError:
            return self._owned_ids_checked(pairs, where, member)
        if p.min() < 0:
            return self._owned_ids_checked(pairs, where, member)
        t = np.fromiter(map(self.topic_index.get, topics, repeat(-1)), dtype=np.int64, count=len(topics))
        keep = p < self.sizes[t]
        ids = self.starts[t[keep]] + p[keep]
        beyond = ~keep & (t >= 0)
        if beyond.any():
            self.phantoms.setdefault(member, []).extend(zip(t[beyond].tolist(), p[beyond].tolist(), strict=True))
        if seeds is not None and pair_types == {tuple}:
            seeds.append((ids, np.fromiter(pairs, dtype=object, count=len(pairs))[keep]))
        return ids

    def _owned_ids_checked(self, pairs: Sequence, where: str, member: int) -> np.ndarray:
        """The slow path: one pair at a time, with an error naming the first bad one."""
        for i, tp in enumerate(pairs):
            if not isinstance(tp, Sequence) or isinstance(tp, (str, bytes)) or len(tp) != 2:
                raise ValueError(f"{where}[{i}]: expected a (topic, partition) pair")
            _check_str(tp[0], f"{where}[{i}][0]")
            p = _check_int(tp[1], f"{where}[{i}][1]")
            if p < 0:
                raise ValueError(f"{where}[{i}][1]: partition must be >= 0, got {p}")
        # Partition ids are int32 in Kafka: larger ones cannot be in the metadata.
        return self.owned_ids([(tp[0], int(tp[1])) for tp in pairs if int(tp[1]) < 2**31], where, None, member)


def attach_partition_racks(spec: GroupSpec, partition_racks: Mapping[str, Sequence[Sequence[str]]]) -> None:
    """Replica racks -> one uint64 bitmask per partition (topics without an entry: no replica racks)."""
    if not isinstance(partition_racks, Mapping):
        raise ValueError("partition_racks: expected a mapping of topic -> list of replica rack lists")
    rack_index: dict[str, int] = {}
    seen_masks: dict[tuple, int] = {}
    bits = np.zeros(spec.num_partitions, dtype=np.uint64)
    for topic, per_partition in partition_racks.items():
        _check_str(topic, "partition_racks")
        where = f"partition_racks[{topic!r}]"
        if isinstance(per_partition, (str, bytes)) or not isinstance(per_partition, Sequence):
            raise ValueError(f"{where}: expected one list of racks per partition")
        t = spec.topic_index.get(topic)
        if t is not None and len(per_partition) > spec.topic_sizes[t]:
            raise ValueError(f"{where}: {len(per_partition)} entries for {int(spec.topic_sizes[t])} partitions")
        masks = []
        for p, replica_racks in enumerate(per_partition):
            # Layouts repeat a few replica-rack lists; each distinct one is validated and converted once.
            key = tuple(replica_racks) if type(replica_racks) is list or type(replica_racks) is tuple else None
            try:
                mask = seen_masks.get(key)
            except TypeError:  # something unhashable inside: let _rack_mask name it
                key = mask = None
            if mask is None:
                mask = _rack_mask(replica_racks, rack_index, f"{where}[{p}]")
                if key is not None:
                    seen_masks[key] = mask
            masks.append(mask)
        if t is not None and masks:
            start = int(spec.topic_start[t])
            bits[start : start + len(masks)] = np.array(masks, dtype=np.uint64)
    spec.rack_names = list(rack_index)
    spec.partition_rack_bits = bits


def _rack_mask(replica_racks: object, rack_index: dict[str, int], where: str) -> int:
    """One partition's replica racks -> bitmask, registering new rack names in `rack_index`."""
    if isinstance(replica_racks, (str, bytes)) or not isinstance(replica_racks, Sequence):
        raise ValueError(f"{where}: expected a list of rack names")
    mask = 0
    for rack in replica_racks:
        if rack is None:  # a replica on a broker without a rack
            continue
        _check_str(rack, where)
        r = rack_index.setdefault(rack, len(rack_index))
        if r >= MAX_RACKS:
            raise ValueError(f"{where}: more than {MAX_RACKS} distinct racks")
        mask |= 1 << r
    return mask


def rack_aware_enabled(
    member_rack_bits: np.ndarray, partition_rack_bits: np.ndarray | None, *, prefer: bool = False
) -> bool:
    """KIP-881's `useRackAwareAssignment` over the given members and partitions.

    False when no consumer rack is also a replica rack; else true when `prefer` (Kafka's test-only
    flag) or when some partition lacks a replica on some rack (every partition on every rack makes rack
    logic pointless). `member_rack_bits` comes from `GroupSpec.member_rack_bit` (a consumer rack no
    replica is on contributes no bit); racks only on partitions outside `partition_rack_bits` are masked
    out, so the predicate can be evaluated per topic as Range does.
    """
    if partition_rack_bits is None or partition_rack_bits.size == 0:
        return False
    consumer = np.bitwise_or.reduce(member_rack_bits) if member_rack_bits.size else np.uint64(0)
    every = np.bitwise_or.reduce(partition_rack_bits)
    if not consumer & every:  # C ∩ P = ∅ (P: the racks of these partitions only)
        return False
    if prefer:
        return True
    return bool(np.any(partition_rack_bits != every))
