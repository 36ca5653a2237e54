"""The data of one assignment call: clear objects at the API edge, flat integer arrays inside.

`GroupSpec` is built once per call (validation happens here, with messages that name the field) and
every strategy works on it. Partitions are global integer ids: ``id = topic_start[t] + p`` with topics
in the caller's metadata order, so a caller that keeps its own arrays in that layout (the streaming
state machine does) can build a spec without any per-partition Python objects.
"""

from __future__ import annotations

import gc
import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat

import numpy as np

from assignors.javaorder import hashmap_positions, java_string_key
from assignors.pairs import CACHE, RESULTS

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


@dataclass(eq=False)
class GroupSpec:
    """One assignment call as flat arrays (see the module docstring for the id layout)."""

    topic_names: list[str]  # topics with metadata (>= 1 partition), caller's order
    topic_sizes: np.ndarray  # int64[T]
    member_ids: list[str]  # caller's order: the order the group leader received the members in
    subscriptions: list[tuple[str, ...]]  # raw subscribed names, deduplicated, order kept (may lack metadata)
    member_topics: list[np.ndarray]  # int32 topic indices per member: subscribed topics that have metadata
    owned: list[np.ndarray]  # int64 global ids per member, caller's order, only partitions with metadata
    generations: np.ndarray  # int64[M]
    racks: list[str | None]
    instance_ids: list[str | None]
    rack_names: list[str] = field(default_factory=list)  # racks named by partition replicas
    partition_rack_bits: np.ndarray | None = None  # uint64[P]: bit r = a replica on rack_names[r]
    # owned partitions past their topic's partition count, per member index: [(topic index, partition)];
    # left out of `owned` (they have no global id), but Kafka's constrained path counts them (sticky_engine)
    phantoms: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    weights: np.ndarray | None = None  # float64[M], > 0 (None: all 1)
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
        return np.array([np.uint64(1) << np.uint64(index[r]) if r in index else 0 for r in self.racks], dtype=np.uint64)

    @cached_property
    def leader_order(self) -> np.ndarray:
        """Member indices in the order Kafka's client leader iterates them: `ConsumerCoordinator`
        puts the subscriptions into a default-capacity `java.util.HashMap` in the order it received
        them (`member_ids`), and the sticky assignors iterate that map."""
        return hashmap_positions(self.member_ids).astype(np.int64, copy=False)  # member ids are distinct (mapping keys)

    @cached_property
    def round_results(self) -> dict:
        """Results of assignor calls on these topics and members, keyed by what else such a call depends on
        (its round's `owned` and `generations`, the strategy's options). The streaming state machine runs
        every strategy's rounds of an event on copies of one spec (`for_round`, which share this dict), and
        eager and cooperative sticky often make the same engine call from the same ownership. The sticky
        engine also keeps here what it derives from the topics and members alone, for the event's next call."""
        return {}

    def reordered(self, order: np.ndarray) -> GroupSpec:
        """The same call with the members taken in `order` (indices into `member_ids`); the topic layout
        and what was computed from it are shared."""
        other = self._copy()
        at = order.tolist()
        for name in _PER_MEMBER:
            values = getattr(self, name)
            setattr(other, name, [values[i] for i in at])
        other.generations = self.generations[order]
        if self.weights is not None:
            other.weights = self.weights[order]
        if self.phantoms:
            position = {m: pos for pos, m in enumerate(at)}
            other.phantoms = {position[m]: claims for m, claims in self.phantoms.items()}
        for name in _MEMBER_CACHES:
            other.__dict__.pop(name, None)
        return other

    def for_round(self, owned: list[np.ndarray], generations: np.ndarray) -> GroupSpec:
        """The same topics and members with another round's `owned` and `generations`, sharing what this
        spec has derived from them so far; `keep_derived` takes back what a round derived."""
        other = self._copy()
        other.owned, other.generations = owned, generations
        return other

    def with_members(self, member_ids: list[str], subscriptions: list[tuple[str, ...]],
                     member_topics: list[np.ndarray], owned: list[np.ndarray], generations: np.ndarray,
                     racks: list[str | None], instance_ids: list[str | None], weights: np.ndarray | None,
                     rack_names: list[str], partition_rack_bits: np.ndarray | None) -> GroupSpec:
        """This spec's topics with other members (and replica racks), sharing what it derived from the
        topics alone: a caller that keeps one member-less spec per topic layout (the streaming state
        machine, whose every event is a new membership on a layout it met before) derives those once."""
        other = self._copy()
        for name in _MEMBER_CACHES:
            other.__dict__.pop(name, None)
        other.member_ids, other.subscriptions, other.member_topics = member_ids, subscriptions, member_topics
        other.owned, other.generations, other.racks, other.instance_ids = owned, generations, racks, instance_ids
        other.weights, other.rack_names, other.partition_rack_bits = weights, rack_names, partition_rack_bits
        other.phantoms = {}
        return other

    def _copy(self) -> GroupSpec:
        """`copy.copy(self)` without the generic copy protocol, a few microseconds per call: a replay
        makes a copy per round."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        return other

    def keep_derived(self, other: GroupSpec) -> None:
        """Adopt what `other` (from `for_round`) derived from the shared topics and members."""
        for name in _DERIVED:
            if name in other.__dict__ and name not in self.__dict__:
                self.__dict__[name] = other.__dict__[name]

    @cached_property
    def member_info_order(self) -> np.ndarray:
        """Member indices in Kafka's `MemberInfo` order (Range, RoundRobin, server Range): static members
        first by `group.instance.id`, then the others by member id, Java String order; a stable sort, so
        equal instance ids keep the caller's order as Java's `Collections.sort` does."""
        keys = [
            (0, java_string_key(iid)) if iid is not None else (1, java_string_key(mid))
            for mid, iid in zip(self.member_ids, self.instance_ids, strict=True)
        ]
        return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)

    @cached_property
    def topic_subscribers(self) -> tuple[np.ndarray, np.ndarray]:
        """`(members, offsets)`: topic t's subscribers are `members[offsets[t]:offsets[t + 1]]`, in
        `member_info_order`; only topics with metadata, each member once."""
        order = self.member_info_order
        num_topics = len(self.topic_names)
        offsets = np.zeros(num_topics + 1, dtype=np.int64)
        first = self.member_topics[0] if self.member_topics else None
        if first is not None and all(mt is first for mt in self.member_topics):  # one shared subscription
            counts = np.zeros(num_topics, dtype=np.int64)
            counts[first] = order.size
            np.cumsum(counts, out=offsets[1:])
            return np.tile(order, first.size), offsets
        sizes = np.fromiter((self.member_topics[m].size for m in order), dtype=np.int64, count=order.size)
        if sizes.sum() == 0:
            return np.zeros(0, dtype=np.int64), offsets
        pair_topic = np.concatenate([self.member_topics[m] for m in order])
        pair_member = np.repeat(order, sizes)
        np.cumsum(np.bincount(pair_topic, minlength=num_topics), out=offsets[1:])
        if num_topics < 2**15:  # numpy's stable sort is a radix sort for 16-bit keys
            pair_topic = pair_topic.astype(np.int16)
        return pair_member[np.argsort(pair_topic, kind="stable")], offsets

    @cached_property
    def small_subscribers(self) -> list[list[int]]:
        """`topic_subscribers` as plain lists for small groups: per topic, its subscribers in
        `member_info_order` (kept: the state machine runs Range and RoundRobin on the same spec)."""
        subscribers: list[list[int]] = [[] for _ in self.topic_names]
        lists: dict[int, list[int]] = {}  # members share subscription arrays
        for m in self.member_info_order.tolist():
            topics = self.member_topics[m]
            ts = lists.get(id(topics))
            if ts is None:
                ts = lists[id(topics)] = topics.tolist()
            for t in ts:
                subscribers[t].append(m)
        return subscribers

    def partition_id(self, topic: str, partition: int) -> int:
        return int(self.topic_start[self.topic_index[topic]]) + partition

    def to_result(self, assignment: Sequence[np.ndarray]) -> dict[str, list[tuple[str, int]]]:
        """Per-member global ids -> the public result, partitions sorted by (topic, partition).

        The tuples come from `assignors.pairs` (made once per layout and shared), and the lists handed
        out are remembered so that the next call recognises them as `owned`.
        """
        if len(assignment) != self.num_members:
            raise ValueError(f"assignment: {len(assignment)} lists for {self.num_members} members")
        sizes = [len(ids) for ids in assignment]
        bounds = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=bounds[1:])
        if bounds[-1] == 0:
            return {member: [] for member in self.member_ids}
        flat = np.concatenate([np.asarray(ids, dtype=np.int64) for ids in assignment])
        rank = self.name_rank[flat]
        if flat.size <= 1 << 16:  # one sort by (member, name rank): fewer numpy calls for small groups
            flat = flat[np.argsort(np.repeat(np.arange(len(sizes)), sizes) * self.num_partitions + rank)]
        else:  # per member: many short sorts beat one long one
            flat = np.concatenate(
                [flat[lo:hi][np.argsort(rank[lo:hi], kind="stable")] for lo, hi in itertools.pairwise(bounds.tolist())]
            )
        key = (tuple(self.topic_names), tuple(self.topic_sizes.tolist()))
        b = bounds.tolist()
        flat.flags.writeable = False  # its slices become the owned ids of the next call
        with _gc_paused():
            arrays = CACHE.take(key, flat, b)
            lists = [a.tolist() for a in arrays]
        RESULTS.remember(key, lists, arrays, [flat[lo:hi] for lo, hi in itertools.pairwise(b)])
        return dict(zip(self.member_ids, lists, strict=True))


# GroupSpec fields that are lists with one entry per member, and the cached properties that depend on members
_PER_MEMBER = ("member_ids", "subscriptions", "member_topics", "owned", "racks", "instance_ids")
_MEMBER_CACHES = ("leader_order", "member_rack_bit", "member_info_order", "topic_subscribers", "small_subscribers",
                  "round_results")
_DERIVED = (*_MEMBER_CACHES, "partition_topic", "partition_number", "topics_by_name", "name_rank")  # cached_property


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while allocating millions of small tuples (they cannot form cycles; each
    allocation burst would otherwise trigger repeated young-generation collections)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
    with _gc_paused():
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
        _attach_partition_racks(spec, partition_racks)
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


def _attach_partition_racks(spec: GroupSpec, partition_racks: Mapping[str, Sequence[Sequence[str]]]) -> None:
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
