"""`GroupSpec`, the flat arrays of one assignment call (`assignors.model` validates the public inputs into one).

Compiled with the loop (setup.py): the streaming state machine copies a spec for every round of every event and the
assignors read its fields and tables many times per round, which costs a dictionary lookup (and a cached_property
call) per read on an interpreted class. The tables derived from the spec are `None` until first use and live in
two objects that copies share: `_TopicTables` (the topics alone: every copy of the spec) and `_MemberTables` (the
topics and members: the copies `for_round` makes), so whichever copy derives a table first derives it for all.
"""

from __future__ import annotations

import gc
import itertools
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

import numpy as np

from assignors.javaorder import hashmap_positions, java_string_key
from assignors.pairs import CACHE, RESULTS


class _TopicTables:
    """What a spec derives from its topics alone; every spec copied from it shares this object."""

    def __init__(self, topic_names: list[str], topic_sizes: np.ndarray) -> None:
        # summed in Python: `np.cumsum(..., out=)` goes through numpy's Python-level wrapper, which cost more than
        # the few topics of a group
        start: list[int] = list(itertools.accumulate(topic_sizes.tolist(), initial=0))
        self.topic_start: np.ndarray = np.array(start, dtype=np.int64)
        self.num_partitions: int = start[-1]
        self.topic_index: dict[str, int] = {name: i for i, name in enumerate(topic_names)}
        self.partition_topic: np.ndarray | None = None
        self.partition_number: np.ndarray | None = None
        self.topics_by_name: np.ndarray | None = None
        self.name_rank: np.ndarray | None = None
        self.lists: tuple[list[int], list[int]] | None = None
        self.ids_by_number: list[int] | None = None
        self.ids_by_name: list[int] | None = None
        self.pair_key: tuple[tuple[str, ...], tuple[int, ...]] | None = None
        self.pairs: list[Any] = []  # `GroupSpec.pair_tuples`, valid while the pair cache's epoch is `pairs_epoch`
        self.pairs_epoch = -1


class _MemberTables:
    """What a spec derives from its topics and members (not from a round's `owned` and `generations`); the
    copies `for_round` makes share this object."""

    def __init__(self) -> None:
        self.leader_list: list[int] | None = None
        self.leader_order: np.ndarray | None = None
        self.member_rack_bit: np.ndarray | None = None
        self.member_info_order: np.ndarray | None = None
        self.info_order: list[int] | None = None
        self.topic_subscribers: tuple[np.ndarray, np.ndarray] | None = None
        self.small_subscribers: list[list[int]] | None = None
        self.round_results: dict | None = None


class GroupSpec:
    """One assignment call as flat arrays (see `assignors.model` for the global id layout)."""

    def __init__(
        self,
        topic_names: list[str],  # topics with metadata (>= 1 partition), caller's order
        topic_sizes: np.ndarray,  # int64[T]
        member_ids: list[str],  # caller's order: the order the group leader received the members in
        subscriptions: list[tuple[str, ...]],  # raw subscribed names, deduplicated, order kept (may lack metadata)
        member_topics: list[np.ndarray],  # int32 topic indices per member: subscribed topics that have metadata
        owned: list[np.ndarray],  # int64 global ids per member, caller's order, only partitions with metadata
        generations: np.ndarray | list[int],  # int64[M], or as a list (`generation_list`)
        racks: list[str | None],
        instance_ids: list[str | None],
        rack_names: list[str] | None = None,  # racks named by partition replicas (None: none)
        partition_rack_bits: np.ndarray | None = None,  # uint64[P]: bit r = a replica on rack_names[r]
        # owned partitions past their topic's partition count, per member index: [(topic index, partition)];
        # left out of `owned` (they have no global id), but Kafka's constrained path counts them (sticky_engine)
        phantoms: dict[int, list[tuple[int, int]]] | None = None,
        weights: np.ndarray | None = None,  # float64[M], > 0 (None: all 1)
    ) -> None:
        self.topic_names = topic_names
        self.topic_sizes = topic_sizes
        self.member_ids = member_ids
        self.subscriptions = subscriptions
        self.member_topics = member_topics
        self._owned: list[np.ndarray] | None = owned  # None: a round given as lists (`owned_lists`)
        self._owned_lists: list[list[int]] | None = None  # the same claims as lists, if given or asked for
        self.owned_disjoint = False  # known: no id is claimed twice (`for_round`), which spares the engine's check
        self.claims_key: object = None  # the caller's name for these claims among the event's rounds (`for_round`)
        # one form at hand, the other made on first use: the streaming state machine gives each round's as a
        # list, which the sticky engine reads, and an int64 array per round cost more than the rest of its claims
        self._generations: np.ndarray | None = None
        self._generation_list: list[int] | None = None
        if isinstance(generations, list):
            self._generation_list = generations
        else:
            self._generations = generations
        self.racks = racks
        self.instance_ids = instance_ids
        self.rack_names: list[str] = [] if rack_names is None else rack_names
        self.partition_rack_bits = partition_rack_bits
        self.phantoms: dict[int, list[tuple[int, int]]] = {} if phantoms is None else phantoms
        self.weights = weights
        self._topics: _TopicTables | None = None  # made on first use, then shared by copies
        self._members: _MemberTables | None = None

    def _topic_tables(self) -> _TopicTables:
        tables = self._topics
        if tables is None:
            tables = self._topics = _TopicTables(self.topic_names, self.topic_sizes)
        return tables

    def _member_tables(self) -> _MemberTables:
        tables = self._members
        if tables is None:
            tables = self._members = _MemberTables()
        return tables

    @property
    def owned(self) -> list[np.ndarray]:
        """int64 global ids per member (see `__init__`); made from `owned_lists` on first use when a round
        gave lists (`for_round`)."""
        owned = self._owned
        if owned is None:
            lists: list[list[int]] = self._owned_lists  # type: ignore[assignment]
            owned = self._owned = [np.array(ids, dtype=np.int64) for ids in lists]
        return owned

    @property
    def generations(self) -> np.ndarray:
        """int64 generation per member (see `__init__`); made from `generation_list` on first use."""
        gens = self._generations
        if gens is None:
            gens = self._generations = np.array(self._generation_list, dtype=np.int64)
        return gens

    @property
    def generation_list(self) -> list[int]:
        """`generations` as a list of ints, what the sticky engine reads (made once per spec)."""
        gens = self._generation_list
        if gens is None:
            gens = self._generation_list = self._generations.tolist()  # type: ignore[union-attr]
        return gens

    @property
    def owned_lists(self) -> list[list[int]]:
        """`owned` as lists of ints, what small groups' plain-Python paths read (made once per spec)."""
        lists = self._owned_lists
        if lists is None:
            lists = self._owned_lists = [ids.tolist() for ids in self._owned]  # type: ignore[union-attr]
        return lists

    @property
    def topic_start(self) -> np.ndarray:
        """int64[T+1]: topic t's global ids are `topic_start[t]:topic_start[t + 1]`."""
        return self._topic_tables().topic_start

    @property
    def topic_index(self) -> dict[str, int]:
        return self._topic_tables().topic_index

    @property
    def num_partitions(self) -> int:
        return self._topic_tables().num_partitions

    @property
    def num_members(self) -> int:
        return len(self.member_ids)

    @property
    def partition_topic(self) -> np.ndarray:
        """int32 topic index of every global partition id."""
        tables = self._topic_tables()
        if tables.partition_topic is None:
            tables.partition_topic = np.repeat(np.arange(len(self.topic_names), dtype=np.int32), self.topic_sizes)
        return tables.partition_topic

    @property
    def partition_number(self) -> np.ndarray:
        """int64 partition number (within its topic) of every global partition id."""
        tables = self._topic_tables()
        if tables.partition_number is None:
            tables.partition_number = (np.arange(tables.num_partitions, dtype=np.int64)
                                       - tables.topic_start[self.partition_topic])
        return tables.partition_number

    @property
    def topics_by_name(self) -> np.ndarray:
        """Topic indices sorted by topic name (Java String order)."""
        tables = self._topic_tables()
        if tables.topics_by_name is None:
            keys = [java_string_key(n) for n in self.topic_names]
            tables.topics_by_name = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int32)
        return tables.topics_by_name

    @property
    def topic_lists(self) -> tuple[list[int], list[int]]:
        """`(topic_sizes, topics_by_name)` as lists (shared: not to be modified), for the small-group
        paths of Range and RoundRobin: made once per layout, where a `tolist` per call cost more than the walk."""
        tables = self._topic_tables()
        if tables.lists is None:
            tables.lists = (self.topic_sizes.tolist(), self.topics_by_name.tolist())
        return tables.lists

    @property
    def ids_by_number(self) -> list[int]:
        """Every global id in (partition number, topic name) order, the order in which Kafka's constrained sticky
        builder keeps owned partitions: a list (shared: not to be modified), made once per topic layout."""
        tables = self._topic_tables()
        if tables.ids_by_number is None:
            sizes, by_name = self.topic_lists
            start: list[int] = tables.topic_start.tolist()
            most = 0
            for size in sizes:
                most = max(most, size)
            order: list[int] = []
            for number in range(most):
                for t in by_name:
                    if number < sizes[t]:
                        order.append(start[t] + number)
            tables.ids_by_number = order
        return tables.ids_by_number

    @property
    def ids_by_name(self) -> list[int]:
        """Every global id in (topic name, partition) order, the order of a result's lists: a list (shared: not to be
        modified), made once per topic layout."""
        tables = self._topic_tables()
        if tables.ids_by_name is None:
            sizes, by_name = self.topic_lists
            start: list[int] = tables.topic_start.tolist()
            order: list[int] = []
            for t in by_name:
                order += range(start[t], start[t] + sizes[t])
            tables.ids_by_name = order
        return tables.ids_by_name

    @property
    def pair_key(self) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The topic layout as `assignors.pairs` keys it: topic names and sizes in global id order."""
        tables = self._topic_tables()
        if tables.pair_key is None:
            tables.pair_key = (tuple(self.topic_names), tuple(self.topic_lists[0]))
        return tables.pair_key

    def pair_tuples(self) -> list[Any]:
        """Every global id's `(topic, partition)` tuple, as the pair cache holds them (`assignors.pairs`): a list by
        global id (shared: not to be modified), kept with the topic tables until the cache drops the layout."""
        tables = self._topic_tables()
        if tables.pairs_epoch != CACHE.epoch:
            tables.pairs, tables.pairs_epoch = CACHE.listed(self.pair_key)
        return tables.pairs

    def pair_tuples_known(self) -> bool:
        """Whether `pair_tuples` holds: every tuple of the layout is made, so input tuples have nothing to seed."""
        return self._topic_tables().pairs_epoch == CACHE.epoch

    @property
    def name_rank(self) -> np.ndarray:
        """int64 rank of every global id in (topic name, partition) order."""
        tables = self._topic_tables()
        if tables.name_rank is None:
            rank = np.empty(tables.num_partitions, dtype=np.int64)
            pos = 0
            for t in self.topics_by_name.tolist():
                n = int(self.topic_sizes[t])
                start = int(tables.topic_start[t])
                rank[start : start + n] = np.arange(pos, pos + n)
                pos += n
            tables.name_rank = rank
        return tables.name_rank

    @property
    def member_rack_bit(self) -> np.ndarray:
        """uint64 per member: its rack's bit, 0 when it has no rack or no replica is on its rack."""
        tables = self._member_tables()
        if tables.member_rack_bit is None:
            index = {r: i for i, r in enumerate(self.rack_names)}
            tables.member_rack_bit = np.array(
                [np.uint64(1) << np.uint64(index[r]) if r is not None and r in index else 0 for r in self.racks],
                dtype=np.uint64)
        return tables.member_rack_bit

    @property
    def leader_list(self) -> list[int]:
        """Member indices in the order Kafka's client leader iterates them: `ConsumerCoordinator`
        puts the subscriptions into a default-capacity `java.util.HashMap` in the order it received
        them (`member_ids`), and the sticky assignors iterate that map. A list, what the sticky engine reads."""
        tables = self._member_tables()
        if tables.leader_list is None:  # member ids are distinct (mapping keys)
            tables.leader_list = hashmap_positions(self.member_ids)
        return tables.leader_list

    @property
    def leader_order(self) -> np.ndarray:
        """`leader_list` as an int64 array (made on first use)."""
        tables = self._member_tables()
        if tables.leader_order is None:
            tables.leader_order = np.array(self.leader_list, dtype=np.int64)
        return tables.leader_order

    @property
    def round_results(self) -> dict:
        """Results of assignor calls on these topics and members, keyed by what else such a call depends on
        (its round's `owned` and `generations`, the strategy's options). The streaming state machine runs
        every strategy's rounds of an event on copies of one spec (`for_round`, which share this dict), and
        eager and cooperative sticky often make the same engine call from the same ownership. The sticky
        engine also keeps here what it derives from the topics and members alone, for the event's next call."""
        tables = self._member_tables()
        if tables.round_results is None:
            tables.round_results = {}
        return tables.round_results

    @property
    def member_info_order(self) -> np.ndarray:
        """Member indices in Kafka's `MemberInfo` order (Range, RoundRobin, server Range): `info_order` as an array."""
        tables = self._member_tables()
        if tables.member_info_order is None:
            tables.member_info_order = np.array(self.info_order, dtype=np.int64)
        return tables.member_info_order

    @property
    def info_order(self) -> list[int]:
        """Member indices in Kafka's `MemberInfo` order: static members first by `group.instance.id`, then the
        others by member id, Java String order; a stable sort, so equal instance ids keep the caller's order as
        Java's `Collections.sort` does. A list: the small-group paths read it in Python. ASCII ids (the usual
        ones) sort as Python strings, which is UTF-16 order for them, without encoding every id."""
        tables = self._member_tables()
        order = tables.info_order
        if order is None:
            ids, iids = self.member_ids, self.instance_ids
            static = [i for i, iid in enumerate(iids) if iid is not None]
            if not static and "".join(ids).isascii():  # the usual case: one sort of the ids themselves
                order = sorted(range(len(ids)), key=ids.__getitem__)
            else:
                names: list[str] = [mid if iid is None else iid for mid, iid in zip(ids, iids, strict=True)]
                keys: list = names if "".join(names).isascii() else [java_string_key(s) for s in names]
                dynamic = [i for i, iid in enumerate(iids) if iid is None]
                order = sorted(static, key=keys.__getitem__) + sorted(dynamic, key=keys.__getitem__)
            tables.info_order = order
        return order

    @property
    def topic_subscribers(self) -> tuple[np.ndarray, np.ndarray]:
        """`(members, offsets)`: topic t's subscribers are `members[offsets[t]:offsets[t + 1]]`, in
        `member_info_order`; only topics with metadata, each member once."""
        tables = self._member_tables()
        if tables.topic_subscribers is None:
            tables.topic_subscribers = self._topic_subscribers()
        return tables.topic_subscribers

    def _topic_subscribers(self) -> tuple[np.ndarray, np.ndarray]:
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

    @property
    def small_subscribers(self) -> list[list[int]]:
        """`topic_subscribers` as plain lists for small groups: per topic, its subscribers in
        `member_info_order` (kept: the state machine runs Range and RoundRobin on the same spec)."""
        tables = self._member_tables()
        if tables.small_subscribers is None:
            subscribers: list[list[int]] = [[] for _ in self.topic_names]
            member_topics = self.member_topics
            # members share subscription arrays: each distinct one is converted once, found by identity (a group
            # has a few)
            arrays: list[np.ndarray] = []
            lists: list[list[int]] = []
            for m in self.info_order:
                topics = member_topics[m]
                k = 0
                while k < len(arrays) and arrays[k] is not topics:
                    k += 1
                if k == len(arrays):
                    arrays.append(topics)
                    lists.append(topics.tolist())
                ts = lists[k]
                for t in ts:
                    subscribers[t].append(m)
            tables.small_subscribers = subscribers
        return tables.small_subscribers

    def _copy(self, member_ids: list[str], subscriptions: list[tuple[str, ...]], member_topics: list[np.ndarray],
              owned: list[np.ndarray], generations: np.ndarray | list[int], racks: list[str | None],
              instance_ids: list[str | None], weights: np.ndarray | None, rack_names: list[str],
              partition_rack_bits: np.ndarray | None, phantoms: dict[int, list[tuple[int, int]]],
              members: _MemberTables | None) -> GroupSpec:
        """A spec of these topics (sharing what is derived from them) with the given members; `members`: the
        member tables to share (None: the members differ)."""
        other = GroupSpec(self.topic_names, self.topic_sizes, member_ids, subscriptions, member_topics, owned,
                          generations, racks, instance_ids, rack_names, partition_rack_bits, phantoms, weights)
        other._topics = self._topic_tables()
        other._members = members
        return other

    def reordered(self, order: np.ndarray | list[int]) -> GroupSpec:
        """The same call with the members taken in `order` (indices into `member_ids`); the topic layout
        and what was computed from it are shared."""
        at: list[int] = order if isinstance(order, list) else order.tolist()
        phantoms = self.phantoms
        if phantoms:
            position = {m: pos for pos, m in enumerate(at)}
            phantoms = {position[m]: claims for m, claims in phantoms.items()}
        owned, lists = self.owned_in(at)
        return self._copy(
            [self.member_ids[i] for i in at], [self.subscriptions[i] for i in at],
            [self.member_topics[i] for i in at], owned or [], self.generations_in(at),
            [self.racks[i] for i in at], [self.instance_ids[i] for i in at],
            None if self.weights is None else self.weights[order], self.rack_names, self.partition_rack_bits,
            phantoms, None)._claimed(owned, lists, self.owned_disjoint)

    def owned_in(self, at: list[int]) -> tuple[list[np.ndarray] | None, list[list[int]] | None]:
        """`owned` and `owned_lists` with the members taken in order `at` (indices into `member_ids`), each None
        unless at hand: a reordered round keeps the form its claims came in."""
        owned, lists = self._owned, self._owned_lists
        return None if owned is None else [owned[i] for i in at], None if lists is None else [lists[i] for i in at]

    def generations_in(self, at: list[int]) -> np.ndarray | list[int]:
        """`generations` with the members taken in order `at` (indices into `member_ids`), in the form at hand."""
        gens = self._generation_list
        if gens is None:
            return self.generations[at]
        return [gens[i] for i in at]

    def for_round(self, owned: list[np.ndarray] | None, generations: np.ndarray | list[int],
                  owned_lists: list[list[int]] | None = None, disjoint: bool = False,
                  claims_key: object = None) -> GroupSpec:
        """The same topics and members with another round's `owned` and `generations`, sharing what this
        spec and its other rounds derive from them. A small round may give its claims as `owned_lists` instead
        (`owned` None): its readers take the lists as they are, and `owned` is made only if one asks. `disjoint`:
        the caller knows that no id is claimed twice (the claims of one owner per partition). `claims_key`: a
        hashable that the caller gives only to rounds of these topics and members with the same claims (None:
        none), which the sticky engine keys its results by (`GroupSpec.round_results`) instead of the claims."""
        other = self._copy(self.member_ids, self.subscriptions, self.member_topics, owned or [], generations,
                           self.racks, self.instance_ids, self.weights, self.rack_names, self.partition_rack_bits,
                           self.phantoms, self._member_tables())._claimed(owned, owned_lists, disjoint)
        other.claims_key = claims_key
        return other

    def _claimed(self, owned: list[np.ndarray] | None, lists: list[list[int]] | None, disjoint: bool) -> GroupSpec:
        """This new copy with its claims in the forms given (`owned` None: only as `lists`)."""
        self._owned, self._owned_lists, self.owned_disjoint = owned, lists, disjoint
        return self

    def with_members(self, member_ids: list[str], subscriptions: list[tuple[str, ...]],
                     member_topics: list[np.ndarray], owned: list[np.ndarray] | None,
                     generations: np.ndarray | list[int], racks: list[str | None], instance_ids: list[str | None],
                     weights: np.ndarray | None, rack_names: list[str], partition_rack_bits: np.ndarray | None,
                     owned_lists: list[list[int]] | None = None, disjoint: bool = False) -> GroupSpec:
        """This spec's topics with other members (and replica racks), sharing what it derived from the
        topics alone: a caller that keeps one member-less spec per topic layout (the streaming state
        machine, whose every event is a new membership on a layout it met before) derives those once.
        The claims may come as `owned_lists` instead (`owned` None), with `disjoint`, as `for_round` takes them."""
        return self._copy(member_ids, subscriptions, member_topics, owned or [], generations, racks, instance_ids,
                          weights, rack_names, partition_rack_bits, {}, None)._claimed(owned, owned_lists, disjoint)

    def release(self) -> None:
        """Drops the results assignor calls kept with this spec's members (`round_results`): they refer back to the
        spec, a cycle that only the garbage collector would free, late and at a cost. For a caller done with it."""
        members = self._members
        if members is not None and members.round_results is not None:
            members.round_results.clear()

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
        key = self.pair_key
        b = bounds.tolist()
        flat.flags.writeable = False  # its slices become the owned ids of the next call
        with gc_paused():
            arrays = CACHE.take(key, flat, b)
            lists = [a.tolist() for a in arrays]
        RESULTS.remember(key, lists, arrays, [flat[lo:hi] for lo, hi in itertools.pairwise(b)])
        return dict(zip(self.member_ids, lists, strict=True))

    def owners_result(self, owners: np.ndarray) -> dict[str, list[tuple[str, int]]]:
        """`to_result` of a small group's assignment given as its owners (member index per global id, -1: nobody):
        one walk over the ids in name order appends each partition's tuple to its owner's list, where `to_result`'s
        numpy sort and per-member slices cost more than the few dozen partitions. The same tuples, and the lists
        are remembered the same way."""
        who: list[int] = owners.tolist()
        key = self.pair_key
        tuples = self.pair_tuples()
        lists: list[list[Any]] = [[] for _ in self.member_ids]
        handed = 0
        for p in self.ids_by_name:
            m = who[p]
            if m >= 0:
                lists[m].append(tuples[p])
                handed += 1
        if handed:
            RESULTS.remember(key, lists, [tuple(items) for items in lists], None)
        result: dict[str, list[Any]] = {}
        for m, member in enumerate(self.member_ids):
            result[member] = lists[m]
        return result


INT32: Final = np.dtype(np.int32)  # a dtype instance: numpy converts a type or a keyword argument on every call
_INT32: Final[list[bytes]] = []  # `int32_codes`, grown on demand


def int32_codes(count: int) -> list[bytes]:
    """The native-order int32 bytes of 0 .. count - 1 (at least; shared: not to be modified): the small-group paths
    of Range and RoundRobin write owners as such bytes, and an `int.to_bytes` per written owner cost most of them."""
    codes = _INT32
    if len(codes) < count:
        order = sys.byteorder
        codes.extend([i.to_bytes(4, order, signed=True) for i in range(len(codes), count)])
    return codes


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while allocating millions of small tuples (they cannot form cycles; each
    allocation burst would otherwise trigger repeated young-generation collections)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
