"""Kafka's `AbstractStickyAssignor` (the engine under `sticky` and `cooperative-sticky`), exact and fast.

The Java engine works on `TopicPartition` objects, hash maps and a `TreeSet` of members; here members
and partitions are indices (global partition ids, see `assignors.model`) in flat numpy arrays, so that
1M partitions x 2000 members takes well under a second; groups of up to `_SMALL_GROUP` partitions without
rack logic (a replay's usual group) take the same steps on Python lists (`_SmallConstrainedBuilder`,
`_SmallGeneralBuilder`), where numpy's per-call overhead would dominate (where built, a C kernel,
`assignors/reassign_kernel.pyx`, runs `_SmallGeneralBuilder`'s steps in one call). Every rule, tie-break and
iteration order that shows in Kafka's result is reproduced (what is and is not modelled: docs/assignors.md):

* pre-pass: path decision (an empty subscription before the first non-empty one does not break "all
  equal"), owned-partition recovery and generation conflicts (equal generations: nobody keeps the
  partition, which is then "claimed by multiple owners");
* constrained builder (identical subscriptions): owned partitions sorted by (partition, topic) kept up
  to the quotas in member order, the rack-aware round robin, then Java's iterator-driven round robin,
  computed a block of identical rounds at a time; `partitionsTransferringOwnership` as Kafka fills it;
* general builder: prevAssignment (KIP-341), "least loaded subscriber by (size, member id)" computed
  per topic as water-filling, fixed topics/members, `performReassignments` with the post KAFKA-15106
  `isBalanced` (re-evaluated only after a move, the only time its answer can change), Java's
  partition-movement bookkeeping (including which element a Java `HashSet<TopicPartition>` yields
  first) and the balance-score revert rule (with Java's int overflow). One move loop for every group
  size, over Python lists (a move changes two members' sizes: no numpy call pays back), with Java's
  `isBalanced` kept move by move (`_Reassignment`).

Members are taken in the leader's Java `HashMap` iteration order of the subscriptions
(`GroupSpec.leader_order`, computed from `spec.member_ids`, the order the leader received them): the
order of the pre-pass, of KIP-341's prevAssignment and of the constrained builder's owned-partition step.
`prefer_rack_aware` is Kafka's test-only `preferRackAwareLogic`.

Kafka's quirks are kept: `performReassignments` hands a partition back to its prevAssignment owner even
when that member no longer subscribes to the topic (Kafka's literal, invalid assignment; `isBalanced`'s
"skip members at their maximum" then matters, and is kept literally), and looking at a partition whose
prevAssignment owner is "fixed" throws Java's NullPointerException (`KafkaAssignorError`).
One deviation: Java's `performReassignments` can loop forever. Moving partition p from X to Y may move
instead a partition that earlier went Y -> X' (X' = p's original owner, not X), so X keeps its load and
the next partition of the pass undoes that move; every pass then changes something and `isBalanced` never
holds (seen on a real 10-member group with mixed subscriptions). A pass decides deterministically from
the ownership and the movement sets it starts from, so when a pass ends in a state some earlier pass of
the same call started from, Java can only repeat those passes: we stop there instead (then the revert
rule applies as usual). Every terminating Java run is unaffected.
Not modelled: treeified `HashSet` buckets (9+ colliding moved partitions of one topic between the same
two members, in a set of capacity >= 64). The rack-aware passes go one partition at a time (a bisection
per replica rack in the constrained builder, a heap step in the general one), so they are the slow part.
"""

from __future__ import annotations

import heapq
import itertools
import sys
from bisect import bisect_left
from collections import deque
from itertools import repeat
from typing import cast

import numpy as np

from assignors.compiled import kernel
from assignors.errors import KafkaAssignorError
from assignors.javaorder import java_string_hash, java_string_key
from assignors.model import GroupSpec, owner_of, rack_aware_enabled, topic_blocks
from assignors.spec import INT32, int32_codes

_EMPTY = np.zeros(0, dtype=np.int64)
_MEMO_PARTITIONS = 1 << 16  # run_engine reuses results up to this many partitions
_HEAP_FILL = 64  # `_GeneralBuilder._water_fill` hands out up to this many partitions one at a time
_SCAN_FILL = 32  # ... by a scan of up to this many candidates (`_heap_fill`), above by a heap
_INDEX_HOLDINGS = 1 << 12  # `_Reassignment` indexes holdings with numpy above this many movable partitions
# `_Members.small`: plain-Python steps up to this many partitions (random groups of 10-24 members: even with
# the numpy steps at about 250 partitions, 20-30 % slower at 500, 20-30 % faster at 60-120)
_SMALL_GROUP = 200
_TREEIFY_THRESHOLD = 8  # a Java `HashMap` bucket past this many entries resizes a table below 64 buckets
_FIXED_PREV = -2  # prevAssignment owner that Java's move loop can no longer look up (NullPointerException)
_NOBODY = (-1).to_bytes(4, sys.byteorder, signed=True)  # the int32 owner code of nobody (`_owner_array`)
_K = kernel("assignors.reassign_kernel")  # `_SmallGeneralBuilder.build` in C (None: the Python steps run)


class EngineResult:
    """The engine's result: Kafka's per-member lists (`assignment`, in Kafka's list order) and its
    `partitionsTransferringOwnership` as parallel arrays (global id, new owner index), None on the general
    path (Kafka's null map); read-only arrays. What a result derives on first use is kept in a slot (None until
    then) rather than a `functools.cached_property`, which would keep the class a Python class for mypyc."""

    general = False

    def __init__(
        self, spec: GroupSpec, assignment: list[np.ndarray] | None, transfer_ids: np.ndarray | None,
        transfer_owners: np.ndarray | None,
    ) -> None:
        self.num_partitions = spec.num_partitions
        self._assignment = assignment  # None: made on first use (`_make_assignment`)
        self.transfer_ids = transfer_ids
        self.transfer_owners = transfer_owners
        self._owners: np.ndarray | None = None

    @property
    def assignment(self) -> list[np.ndarray]:
        """The per-member lists, in member order: given, or made on first use by a subclass."""
        if self._assignment is None:
            self._assignment = self._make_assignment()
        return self._assignment

    @property
    def owners(self) -> np.ndarray:
        """int32 owner (member index, -1: nobody) per global id, read-only: what `assign_owners` hands the
        streaming state machine. Computed on first use and kept with the result, so a repeated call (see
        `run_engine`) and the cooperative assignor on top read it without going over the lists again."""
        if self._owners is None:
            owners = self._make_owners()
            if owners.flags.writeable:  # `_owner_array`'s are read-only: a read of the flag costs a tenth of the set
                owners.setflags(write=False)  # cheaper than through `flags`, which makes a flags object
            self._owners = owners
        return self._owners

    def _make_assignment(self) -> list[np.ndarray]:
        """The lists of a result built without them (the subclasses); a plain result is given its lists."""
        raise NotImplementedError

    def _make_owners(self) -> np.ndarray:
        return owner_of(self.assignment, self.num_partitions)


class _ListedResult(EngineResult):
    """The constrained path's result on small groups (`_SmallConstrainedBuilder`): its per-member Python
    lists (members in the builder's order), made arrays on first use: the streaming state machine reads only
    the owners, which the lists give directly."""

    def __init__(
        self, spec: GroupSpec, lists: list[list[int]], transfer_ids: np.ndarray, transfer_owners: np.ndarray,
        members: _Members,
    ) -> None:
        super().__init__(spec, None, transfer_ids, transfer_owners)
        self._lists = lists
        self._members = members
        self._leader_order = members.leader_order  # None: the builder's members are in member order

    def _make_assignment(self) -> list[np.ndarray]:
        arrays = [np.array(ids, dtype=np.int64) for ids in self._lists]
        return _read_only(_in_member_order(arrays, self._leader_order))

    def _make_owners(self) -> np.ndarray:
        """`EngineResult.owners` from the lists (each partition is in one list at most), written as the owners'
        int32 codes (`_owner_codes`) straight from the lists, with no owner list in between."""
        lists = self._lists
        codes = _owner_codes(None if self._leader_order is None else self._members, len(lists))
        out = [_NOBODY] * self.num_partitions
        for m in range(len(lists)):  # builder positions (a `zip` runs generically)
            code = codes[m]
            for p in lists[m]:
                out[p] = code
        return np.frombuffer(b"".join(out), INT32)


class _GeneralResult(EngineResult):
    """The general path's result, read from its builder on first use: `assign` wants the per-member lists
    (sorted by owner and stamp), the streaming state machine only the owners, which the builder holds."""

    general = True

    def __init__(self, spec: GroupSpec, builder: _GeneralBuilder, leader_order: np.ndarray | None) -> None:
        super().__init__(spec, None, None, None)
        self._builder = builder
        self._leader_order = leader_order  # None: the builder's members are in member order

    def _make_assignment(self) -> list[np.ndarray]:
        return _read_only(_in_member_order(self._builder.result(), self._leader_order))

    def _make_owners(self) -> np.ndarray:
        """`EngineResult.owners` straight from the builder's owner per global id."""
        return self._builder.owners(self._leader_order)


def run_engine(spec: GroupSpec, *, prefer_rack_aware: bool = False) -> EngineResult:
    """The engine over the members in the leader's `HashMap` order (`GroupSpec.leader_order`); the result
    is in `spec.member_ids` order again. `prefer_rack_aware` is Kafka's test-only `preferRackAwareLogic`:
    rack logic even when every partition is on every rack.

    A call that repeats an earlier one on the same topics and members (`GroupSpec.round_results`) gets
    that call's result (read-only arrays). Besides the topics and members, the engine reads only the owned
    partitions and how the generations compare (equal, older, newer: conflicts and prevAssignment; an
    exact value shows only in an error message, and failed calls are not kept), so the key holds those:
    each generation's rank among the distinct ones (None: all equal, the usual case, which skips the ranking),
    and the owned ids as bytes: on small groups of up to 256 partitions one byte per id of
    `GroupSpec.owned_lists` (which their plain-Python path reads anyway; hashing a tuple of ints costs far more),
    else those of `GroupSpec.owned` (int64 arrays; an `asarray` per member would cost as much as the rest of the
    key); a round whose caller names its claims (`GroupSpec.claims_key`: the streaming state machine names them by
    the owners they come from, whose bytes it has at hand) is keyed by that name instead.
    Past `_MEMO_PARTITIONS` the key (a copy and a hash of every owned id) would cost a few percent of a
    call that repeats nothing, so big groups always run the engine. The same dict keeps the call's
    `_Members` (what it derives from the topics and members alone) for the next call that runs."""
    if spec.num_members == 0:
        return EngineResult(spec, [], _EMPTY, _EMPTY)
    if spec.num_partitions > _MEMO_PARTITIONS:
        return _run_engine(spec, _Members(spec, prefer_rack_aware), _clamped_generations(spec))
    gens = _clamped_generations(spec)
    ranks: tuple[int, ...] | None = None
    first = gens[0]
    for g in gens:  # typed: compiled, native comparisons (min and max are generic calls)
        if g != first:
            rank = {x: r for r, x in enumerate(sorted(set(gens)))}
            ranks = tuple([rank[x] for x in gens])
            break
    memo = spec.round_results
    members = memo.get(("sticky members", prefer_rack_aware))
    if members is None:
        members = memo["sticky members", prefer_rack_aware] = _Members(spec, prefer_rack_aware)
    claims = spec.claims_key
    if claims is not None:  # the caller's name for the claims (`GroupSpec.for_round`), not the claims themselves
        key: tuple = ("sticky claims", prefer_rack_aware, ranks, claims)
    elif members.small and members.num_partitions <= 256:
        key = ("sticky", prefer_rack_aware, ranks, tuple([bytes(ids) for ids in spec.owned_lists]))
    else:
        key = ("sticky", prefer_rack_aware, ranks, tuple(map(np.ndarray.tobytes, spec.owned)))
    result = memo.get(key)
    if result is None:
        result = memo[key] = _run_engine(spec, members, gens)
    return result


def _java_string_ranks(strings: list[str]) -> list[int]:
    """Each of these distinct strings' rank in Java's `String.compareTo` order (`java_string_key`). ASCII
    strings (member ids mostly) sort the same as Python's: sorted as they are (a comparison of plain strings,
    no key function call per string) and ranked through a dict."""
    if not "".join(strings).isascii():  # one call, not one per string
        keys = [java_string_key(x) for x in strings]  # compiled: direct calls, which map() would not make
        rank = [0] * len(strings)
        for r, i in enumerate(sorted(range(len(strings)), key=keys.__getitem__)):
            rank[i] = r
        return rank
    place = {x: r for r, x in enumerate(sorted(strings))}
    return [place[x] for x in strings]


def _clamped_generations(spec: GroupSpec) -> list[int]:
    """Each member's generation as the engine reads it: below -1 (none reported) counts as -1."""
    gens = spec.generation_list  # typed: compiled, the comparisons are native
    return [g if g > -1 else -1 for g in gens]


def _run_engine(spec: GroupSpec, members: _Members, generations: list[int]) -> EngineResult:
    """The engine on `spec` (member order) with its `_clamped_generations`, which the memo key has read."""
    order = members.leader_order
    if order is not None:
        generations = [generations[m] for m in members.leader_list]
    ctx = _Context(members.in_leader_order(spec), members, generations)
    if ctx.all_equal and ctx.phantom_claims:
        _ConstrainedBuilder(ctx, ctx.phantom_claims).probe()
    if not ctx.all_equal:
        builder = _SmallGeneralBuilder(ctx) if members.small else _GeneralBuilder(ctx)
        builder.build()
        return _GeneralResult(spec, builder, order)
    assignment, ids, owners = (_SmallConstrainedBuilder if members.small else _ConstrainedBuilder)(ctx).build()
    if order is not None:
        owners = order[owners]
    ids.setflags(write=False)
    owners.setflags(write=False)
    if members.small:
        return _ListedResult(spec, assignment, ids, owners, members)  # type: ignore[arg-type]
    return EngineResult(spec, _read_only(_in_member_order(assignment, order)), ids, owners)


def _owner_array(owner: list[int], members: _Members | None, num_members: int) -> np.ndarray:
    """int32 `EngineResult.owners` from a list of member indices (-1: nobody), each mapped to its
    `members.leader_list` entry (None: kept). `np.array` of a list of ints costs more than an
    element (dtype discovery, then a conversion per item), `bytes` of one about 75: the owners' int32 codes
    (`_owner_codes`) joined cost a list read and a copy of 4 bytes each, and `frombuffer` takes them as they are
    (read-only, as a result's owners are; its dtype given by position: by keyword, it costs twice as much)."""
    codes = _owner_codes(members, num_members)
    return np.frombuffer(b"".join([codes[m] if m >= 0 else _NOBODY for m in owner]), INT32)


def _owner_codes(members: _Members | None, num_members: int) -> list[bytes]:
    """Per builder position, the int32 bytes of its member index: `members.leader_codes` (None: the builder's
    members are in member order, `int32_codes`; shared, longer than `num_members`)."""
    return int32_codes(num_members) if members is None else members.leader_codes


def _in_member_order(assignment: list[np.ndarray], leader_order: np.ndarray | None) -> list[np.ndarray]:
    """Per-member lists computed over the members in `leader_order` (None: in member order already),
    in member order."""
    if leader_order is None:
        return assignment
    back = [_EMPTY] * len(assignment)
    for pos, m in enumerate(leader_order.tolist()):
        back[m] = assignment[pos]
    return back


def _read_only(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """`arrays`, each made read-only: results are shared by repeated calls."""
    for array in arrays:
        array.flags.writeable = False
    return arrays


class _Members:
    """What a call derives from its topics and members alone (members in the leader's order; a round's
    `owned` and `generations` are not read): the rack information, the members' id order, which path
    applies, and the tables the builders compute from it on first use. It is the same for every round of
    a streaming event (eager and cooperative sticky, a cooperative follow-up: 37 % of the engine runs on the
    bench log come after another one on the same topics and members), so `run_engine` keeps it with the
    event's spec."""

    def __init__(self, spec: GroupSpec, prefer_rack_aware: bool) -> None:
        at = spec.leader_list  # a permutation: member order unless some member is out of place
        in_order = True
        for i in range(len(at)):
            if at[i] != i:
                in_order = False
                break
        self.leader_order: np.ndarray | None = None if in_order else spec.leader_order  # None: member order
        self.leader_list = at  # the order as a list, which the compiled steps index natively
        if not in_order:  # the reordered copy shares the topic layout's tables
            spec = spec.reordered(at)
        self.spec = spec  # the first round's, in leader order: only its topics and members are read
        self.prefer_rack_aware = prefer_rack_aware
        self.num_members = spec.num_members
        self.num_partitions = spec.num_partitions
        self.partition_topic = spec.partition_topic
        # Java's partitionsPerTopic: only topics somebody subscribes to (and that have metadata).
        is_subscribed = [False] * len(spec.topic_names)
        seen: list[np.ndarray] = []  # members mostly share a few arrays: a scan by identity, cheaper than a dict
        for topics in spec.member_topics:
            for other in seen:
                if other is topics:
                    break
            else:
                seen.append(topics)
                ts: list[int] = topics.tolist()
                for t in ts:
                    is_subscribed[t] = True
        self.subscribed_list = is_subscribed
        self._subscribed_topic: np.ndarray | None = None  # made on first use (`subscribed_topic`)
        self.all_subscribed = all(is_subscribed)
        by_name: list[int] = spec.topics_by_name.tolist()
        self.topics_by_name = [t for t in by_name if is_subscribed[t]]
        self.id_rank_list = _java_string_ranks(spec.member_ids)  # member -> its rank by member id
        self._rack_info()
        self.all_equal = self._all_subscriptions_equal()
        # plain-Python steps below this size (rack logic keeps numpy's): numpy's per-call overhead dominates
        self.small = self.num_partitions <= _SMALL_GROUP and not self.rack_on
        # the builders' tables, made on first use by the properties below (None until then; see `EngineResult`)
        self._id_rank: np.ndarray | None = None
        self._topic_name_pos: np.ndarray | None = None
        self._name_ordered: np.ndarray | None = None
        self._subscriber_tables: tuple | None = None
        self._small_tables: tuple[list[list[int]], list[list[int]], list[int], list[int], list[int]] | None = None
        self._movable_tables: tuple[list[int], list[list[int]], list[list[int]]] | None = None
        self._topic_flags: list[list[bool]] | None = None
        self._small_movable: tuple[list[bool], list[int], list[bool]] | None = None
        self._topic_lists: tuple[list[int], list[int], list[int]] | None = None
        self._leader_codes: list[bytes] | None = None

    def in_leader_order(self, spec: GroupSpec) -> GroupSpec:
        """A round of these topics and members (`spec`, in member order) in the leader's order."""
        order = self.leader_order
        if order is None:
            return spec
        owned, lists = spec.owned_in(self.leader_list)
        return self.spec.for_round(owned, spec.generations_in(self.leader_list), lists, spec.owned_disjoint)

    @property
    def leader_codes(self) -> list[bytes]:
        """`leader_list` as int32 bytes per builder position, for `_owner_array` (made on first use)."""
        if self._leader_codes is None:
            codes = int32_codes(self.num_members)
            self._leader_codes = [codes[m] for m in self.leader_list]
        return self._leader_codes

    @property
    def subscribed_topic(self) -> np.ndarray:
        """Per topic: does somebody subscribe to it (`subscribed_list` as an array, for the numpy steps)."""
        if self._subscribed_topic is None:
            self._subscribed_topic = np.array(self.subscribed_list, dtype=bool)
        return self._subscribed_topic

    @property
    def id_rank(self) -> np.ndarray:
        """`id_rank_list` as an array, for the numpy steps (small groups never ask)."""
        if self._id_rank is None:
            self._id_rank = np.array(self.id_rank_list, dtype=np.int64)
        return self._id_rank

    @property
    def topic_name_pos(self) -> np.ndarray:
        """Each topic's position in topic name order (the constrained builder's sort key)."""
        if self._topic_name_pos is None:
            self._topic_name_pos = np.argsort(self.spec.topics_by_name).astype(np.int64)
        return self._topic_name_pos

    def _rack_info(self) -> None:
        """Whether rack logic applies (`rack_on`), and then the members' and partitions' rack bits, which
        only rack logic reads (None otherwise)."""
        spec = self.spec
        pbits = spec.partition_rack_bits
        self.rack_on = False
        self.has_rack: np.ndarray | None = None
        self.partition_bits: np.ndarray | None = None
        self.member_bits: np.ndarray | None = None
        if pbits is None or all(r is None for r in spec.racks):
            return
        self.has_rack = np.array([r is not None for r in spec.racks], dtype=bool)
        in_subscribed = self.subscribed_topic[self.partition_topic]
        sub_bits = pbits[in_subscribed]
        every = np.bitwise_or.reduce(sub_bits) if sub_bits.size else np.uint64(0)
        member_bits = spec.member_rack_bit & every
        if rack_aware_enabled(member_bits, sub_bits, prefer=self.prefer_rack_aware):
            self.rack_on = True
            self.partition_bits = np.where(in_subscribed, pbits, np.uint64(0))
            self.member_bits = member_bits
        else:
            self.has_rack = None

    def _all_subscriptions_equal(self) -> bool:
        reference: set[str] = set()
        same: tuple[str, ...] = ()
        for topics in self.spec.subscriptions:
            if not reference:
                reference = set(topics)
                same = topics
            elif topics is same or topics == same:  # members mostly share one subscription tuple
                continue
            elif len(topics) != len(reference) or not reference.issuperset(topics):
                return False
        return True

    @property
    def name_ordered(self) -> np.ndarray:
        """All partitions of subscribed topics in (topic name, partition) order."""
        if self._name_ordered is None:
            self._name_ordered = topic_blocks(self.spec, self.topics_by_name)
        return self._name_ordered

    @property
    def subscriber_tables(self) -> tuple:
        """`_GeneralBuilder`'s tables (see there)."""
        if self._subscriber_tables is None:
            self._subscriber_tables = self._make_subscriber_tables()
        return self._subscriber_tables

    def _make_subscriber_tables(self) -> tuple:
        spec = self.spec
        m = self.num_members
        n_topics = len(spec.topic_names)
        sub_topic = np.concatenate(spec.member_topics).astype(np.int64)
        sub_member = np.repeat(np.arange(m, dtype=np.int64), [t.size for t in spec.member_topics])
        by_topic = np.lexsort((self.id_rank[sub_member], sub_topic))  # then by member id, for `_Reassignment`
        num_subs = np.bincount(sub_topic, minlength=n_topics)
        sub_by_topic = sub_member[by_topic]
        bounds = [0, *np.cumsum(num_subs).tolist()]
        topic_subs = [sub_by_topic[a:b] for a, b in itertools.pairwise(bounds)]
        sub_codes = np.sort(sub_member * n_topics + sub_topic)
        max_size = np.bincount(sub_member, weights=spec.topic_sizes[sub_topic], minlength=m).astype(np.int64)
        counts = num_subs.tolist()
        keys = {t: (counts[t], java_string_key(spec.topic_names[t])) for t in self.topics_by_name}
        sorted_all = topic_blocks(spec, sorted(self.topics_by_name, key=keys.__getitem__))
        return num_subs, sub_by_topic, topic_subs, sub_codes, max_size, sorted_all

    @property
    def small_tables(self) -> tuple[list[list[int]], list[list[int]], list[int], list[int], list[int]]:
        """`subscriber_tables` as lists, for `_SmallGeneralBuilder`: per topic its subscribers in member id
        order, per member its topics, each member's maximum size, all subscribed partitions (topics by
        (subscriber count, name)); and each partition's topic."""
        if self._small_tables is None:
            self._small_tables = self._make_small_tables()
        return self._small_tables

    def _make_small_tables(self) -> tuple[list[list[int]], list[list[int]], list[int], list[int], list[int]]:
        spec = self.spec
        subs: list[list[int]] = [[] for _ in spec.topic_names]
        sizes: list[int] = spec.topic_sizes.tolist()  # typed lists: native loops and indexing when compiled
        lists: dict[int, list[int]] = {}  # members share subscription arrays
        topics_of: list[list[int]] = []
        for topics in spec.member_topics:
            ts = lists.get(id(topics))
            if ts is None:
                ts = lists[id(topics)] = topics.tolist()
            topics_of.append(ts)
        by_id = [0] * self.num_members  # the members in member id order: `id_rank_list` inverted, no sort
        rank = self.id_rank_list
        for m in range(len(rank)):
            by_id[rank[m]] = m
        for m in by_id:
            for t in topics_of[m]:
                subs[t].append(m)
        max_size: list[int] = []
        for ts in topics_of:
            total = 0
            for t in ts:
                total += sizes[t]
            max_size.append(total)
        keys = {t: (len(subs[t]), java_string_key(spec.topic_names[t])) for t in self.topics_by_name}
        start: list[int] = spec.topic_start.tolist()
        sorted_all: list[int] = []
        for t in sorted(self.topics_by_name, key=keys.__getitem__):
            sorted_all += range(start[t], start[t + 1])
        return subs, topics_of, max_size, sorted_all, self.partition_topic.tolist()

    @property
    def topic_flags(self) -> list[list[bool]]:
        """Per member (`small_tables`' order), per topic: does it subscribe? `_SmallGeneralBuilder._keep_owned`
        asks it per owned partition, where `in` the member's topics compared them one by one. Members
        sharing a subscription share its flags."""
        if self._topic_flags is None:
            n_topics = len(self.spec.topic_names)
            shared: dict[int, list[bool]] = {}
            flags: list[list[bool]] = []
            for topics in self.small_tables[1]:
                row = shared.get(id(topics))
                if row is None:
                    row = shared[id(topics)] = [False] * n_topics
                    for t in topics:
                        row[t] = True
                flags.append(row)
            self._topic_flags = flags
        return self._topic_flags

    @property
    def small_movable(self) -> tuple[list[bool], list[int], list[bool]]:
        """For `_SmallGeneralBuilder._movable`: per topic, has it two or more subscribers; the partitions of
        those topics in `small_tables`' order (read-only: shared by the event's rounds); and per member, does
        it subscribe to such a topic with partitions, i.e. hold a movable partition when at its maximum."""
        if self._small_movable is None:
            subs, topics_of, _, sorted_all, ptopic = self.small_tables
            movable = [len(ms) >= 2 for ms in subs]
            sizes: list[int] = self.spec.topic_sizes.tolist()
            reaching: list[bool] = []
            for ts in topics_of:
                flag = False
                for t in ts:
                    if movable[t] and sizes[t]:
                        flag = True
                reaching.append(flag)
            self._small_movable = movable, [p for p in sorted_all if movable[ptopic[p]]], reaching
        return self._small_movable

    @property
    def topic_lists(self) -> tuple[list[int], list[int], list[int]]:
        """Per topic its first global id (and the end), its partition count, and its name's Java hash: what
        `_Reassignment` reads as lists on every call that moves."""
        if self._topic_lists is None:
            spec = self.spec
            self._topic_lists = (spec.topic_start.tolist(), spec.topic_sizes.tolist(),
                                 [java_string_hash(n) for n in spec.topic_names])
        return self._topic_lists

    @property
    def movable_tables(self) -> tuple[list[int], list[list[int]], list[list[int]]]:
        """`_Reassignment`'s tables (see there): the topics with two or more subscribers, per topic its
        subscribers in member id order, and per member its movable topics, ascending."""
        if self._movable_tables is None:
            self._movable_tables = self._make_movable_tables()
        return self._movable_tables

    def _make_movable_tables(self) -> tuple[list[int], list[list[int]], list[list[int]]]:
        if self.small:
            subs: list[list[int]] = [ms if len(ms) >= 2 else [] for ms in self.small_tables[0]]
            movable = [sorted([t for t in topics if subs[t]]) for topics in self.small_tables[1]]  # no generator
            return [t for t, ms in enumerate(subs) if ms], subs, movable
        num_subs, sub_by_topic, _, sub_codes, _, _ = self.subscriber_tables
        n_topics = len(self.spec.topic_names)
        movable_topic = num_subs >= 2
        topics = np.flatnonzero(movable_topic).tolist()
        flat = sub_by_topic.tolist()
        bounds = [0, *np.cumsum(num_subs).tolist()]
        subs = [[] for _ in range(n_topics)]
        for t in topics:
            subs[t] = flat[bounds[t] : bounds[t + 1]]
        codes = sub_codes[movable_topic[sub_codes % n_topics]]  # member * n_topics + topic, sorted
        topics_at = np.searchsorted(codes // n_topics, np.arange(self.num_members + 1)).tolist()
        flat = (codes % n_topics).tolist()
        return topics, subs, [flat[a:b] for a, b in itertools.pairwise(topics_at)]


class _Context:
    """Per-call facts shared by both builders: the round's owned partitions after the pre-pass, and its
    members' `_Members` (whose facts it carries under the same names)."""

    def __init__(self, spec: GroupSpec, members: _Members, generations: list[int]) -> None:
        self.spec = spec
        self.members = members
        self._own_ids: np.ndarray | None = None  # None: made from `own_by_member` on first use
        self._own_members: np.ndarray | None = None
        self.prefer_rack_aware = members.prefer_rack_aware
        self.num_members, self.num_partitions = members.num_members, members.num_partitions
        self.partition_topic = members.partition_topic
        self.topics_by_name = members.topics_by_name
        self.id_rank_list = members.id_rank_list
        self.has_rack, self.rack_on = members.has_rack, members.rack_on
        self.partition_bits, self.member_bits = members.partition_bits, members.member_bits
        self.all_equal = members.all_equal
        self.generations = generations  # `_clamped_generations(spec)`, which `run_engine` has made
        self._recover_owned()
        self.phantom_claims = self._recover_phantoms() if spec.phantoms else {}

    @property
    def topic_name_pos(self) -> np.ndarray:
        return self.members.topic_name_pos

    @property
    def subscribed_topic(self) -> np.ndarray:
        return self.members.subscribed_topic

    @property
    def id_rank(self) -> np.ndarray:
        return self.members.id_rank

    def _recover_owned(self) -> None:
        """Owned partitions after dropping unknown topics and resolving conflicting claims, as flat
        arrays in member order then claim order (`own_ids`, `own_members`); on small groups as one list per
        member (`own_by_member`), what their builders read per member, the arrays made only if asked for."""
        spec = self.spec
        self.multi: np.ndarray | None = None
        self.owned_lists: list[list[int]] = []  # small groups: `spec.owned_lists` (none: nothing owned)
        small = self.members.small
        by_member: list[list[int]] = spec.owned_lists if small else []  # as given, or made once by the memo key
        lengths = [len(ids) for ids in by_member] if small else [ids.size for ids in spec.owned]
        if not any(lengths):
            self._own_ids, self._own_members = _EMPTY, _EMPTY
            self.own_by_member: list[list[int]] = [[] for _ in lengths]
            return
        if small:  # plain Python over a few dozen claims
            self.owned_lists = by_member
            if not self.members.all_subscribed:
                topic, subscribed = self.partition_topic.tolist(), self.subscribed_topic.tolist()
                by_member = [[p for p in ids if subscribed[topic[p]]] for ids in by_member]
            if spec.owned_disjoint or not _any_repeated(by_member, self.num_partitions):  # no conflicting claims
                self.own_by_member = by_member
                return
            listed = list(itertools.chain.from_iterable(by_member))
            ids = np.array(listed, dtype=np.int64)
            members = np.repeat(np.arange(self.num_members, dtype=np.int64), [len(c) for c in by_member])
        else:
            ids = np.concatenate(spec.owned).astype(np.int64, copy=False)
            members = np.repeat(np.arange(self.num_members, dtype=np.int64), lengths)
            if not self.members.all_subscribed:
                keep = self.subscribed_topic[self.partition_topic[ids]]
                ids, members = ids[keep], members[keep]
        if ids.size and not spec.owned_disjoint:
            dup = np.bincount(ids, minlength=self.num_partitions) > 1
            if dup.any():
                keep = self._resolve_conflicts(ids, members, dup)
                ids, members = ids[keep], members[keep]
        self._own_ids, self._own_members = ids, members
        if small:
            flat, bounds = ids.tolist(), np.searchsorted(members, np.arange(self.num_members + 1)).tolist()
            self.own_by_member = [flat[a:b] for a, b in itertools.pairwise(bounds)]

    @property
    def own_ids(self) -> np.ndarray:
        if self._own_ids is None:
            self._own_ids = np.array(list(itertools.chain.from_iterable(self.own_by_member)), dtype=np.int64)
        return self._own_ids

    @property
    def own_members(self) -> np.ndarray:
        if self._own_members is None:
            lengths = [len(ids) for ids in self.own_by_member]
            self._own_members = np.repeat(np.arange(self.num_members, dtype=np.int64), lengths)
        return self._own_members

    def _resolve_conflicts(self, ids: np.ndarray, members: np.ndarray, dup: np.ndarray) -> np.ndarray:
        """Claims of the same partition, in member order: equal generations invalidate it (nobody keeps
        it, it is "claimed by multiple owners"), a higher generation takes it over. The earlier claimant's
        generation is its protocol generation, which our single `generation` stands for."""
        gens = self.generations
        last: dict[int, int] = {}
        holder: dict[int, int] = {}
        multi: set[int] = set()
        at = np.flatnonzero(dup[ids])
        for p, m in zip(ids[at].tolist(), members[at].tolist(), strict=True):
            other = last.get(p)
            if other is None:
                last[p] = holder[p] = m
                continue
            g, g_other = gens[m], gens[other]
            if g == g_other:
                multi.add(p)
                holder[p] = -1
                last[p] = m
            elif g > g_other:
                holder[p] = last[p] = m
        kept_by = np.full(self.num_partitions, -1, dtype=np.int64)
        kept_by[list(holder)] = list(holder.values())
        if multi:
            self.multi = np.zeros(self.num_partitions, dtype=bool)
            self.multi[list(multi)] = True
        return ~dup[ids] | (kept_by[ids] == members)

    def _recover_phantoms(self) -> dict[int, list[tuple[int, int]]]:
        """Owned partitions past their topic's partition count that Java keeps (its pre-pass only asks
        whether the topic is among the subscribed ones with metadata), after the same conflict rules as
        real claims: member -> [(topic index, partition)]."""
        gens = self.generations
        last: dict[tuple[int, int], int] = {}
        kept: dict[int, list[tuple[int, int]]] = {}
        multi: set[tuple[int, int]] = set()
        for m in range(self.num_members):
            for tp in dict.fromkeys(self.spec.phantoms.get(m, ())):
                if not self.subscribed_topic[tp[0]]:
                    continue
                other = last.get(tp)
                if other is not None and gens[m] < gens[other]:
                    continue
                if other is not None and tp in kept.get(other, ()):
                    kept[other].remove(tp)
                last[tp] = m
                if other is None or gens[m] > gens[other]:
                    kept.setdefault(m, []).append(tp)
                else:
                    multi.add(tp)
        # the constrained path drops partitions once claimed twice in one generation from every list
        kept = {m: [tp for tp in claims if tp not in multi] for m, claims in kept.items()}
        return {m: claims for m, claims in kept.items() if claims}


def _any_repeated(lists: list[list[int]], n: int) -> bool:
    """Whether an id (below `n`) is in two of `lists` or twice in one: a flag per id, cheaper than a set."""
    seen = [False] * n
    for ids in lists:
        for p in ids:
            if seen[p]:
                return True
            seen[p] = True
    return False


# --------------------------------------------------------------------------------------------------
# Constrained builder: Kafka's `ConstrainedAssignmentBuilder` (every member subscribes to the same topics)


class _ConstrainedBuilder:
    def __init__(self, ctx: _Context, phantoms: dict[int, list[tuple[int, int]]] | None = None) -> None:
        self.ctx = ctx
        self.phantoms = phantoms or {}  # see `probe`
        self.first_phantom: tuple[int, int] | None = None  # smallest kept one, (topic name position, number)
        spec = ctx.spec
        sizes = spec.topic_sizes.tolist()
        self.total = sum(sizes[t] for t in ctx.topics_by_name)
        n = ctx.num_members
        self.min_quota = self.total // n
        self.max_quota = -(-self.total // n)
        self.expected_over = self.total % n
        self.current_over = 0
        self.under: list[int] = []
        self.exact: list[int] = []
        self.kept: list[np.ndarray] = []
        self.size: list[int] = []
        # new partitions, in the order Kafka gives them: (members, ids, rounds) chunks where id k goes to
        # members[k % len(members)] (`rounds` round-robin rounds one after the other; 0: one id each)
        self.chunks: list[tuple[np.ndarray, np.ndarray, int]] = []

    def build(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        self._assign_round_robin(self._before_round_robin())
        return self._finish()

    def _before_round_robin(self) -> np.ndarray:
        """Steps 1 and 2; returns what step 3 hands out."""
        ctx = self.ctx
        unassigned = self._unkept()
        rank = ctx.id_rank_list
        self.under.sort(key=rank.__getitem__)
        self.exact.sort(key=rank.__getitem__)
        if ctx.rack_on:
            unassigned = unassigned[np.argsort(self._rack_consumer_counts()[unassigned], kind="stable")]
            unassigned = self._assign_rack_aware_round_robin(unassigned)
        return unassigned

    def _unkept(self) -> np.ndarray:
        """Step 1; the partitions nobody keeps, in (topic name, partition) order."""
        ctx = self.ctx
        assigned = self._assign_owned()
        ordered = ctx.members.name_ordered
        unlisted = ~assigned[ordered]
        if self.first_phantom is not None:
            # Java's getUnassignedPartitions walks the sorted kept list with one pointer, which stops at
            # a kept partition that does not exist: every partition of a later topic counts as unassigned
            unlisted |= ctx.topic_name_pos[ctx.partition_topic[ordered]] > self.first_phantom[0]
        return ordered[unlisted]

    def probe(self) -> None:
        """Kafka's constrained path where members claim partitions past their topic's partition count
        (`phantoms`): Java keeps them towards the quotas, so the real partitions can outnumber the places
        left, and its round robin throws. Raises `KafkaAssignorError` exactly when Java throws; when it
        does not, Java's result lists partitions that do not exist (not modelled: the caller then runs
        the engine without them)."""
        unassigned = self._before_round_robin()
        under, exact, size = list(self.under), deque(self.exact), self.size
        min_q, max_q = self.min_quota, self.max_quota
        pos = 0  # Java's iterator over `under`
        for _ in range(unassigned.size):
            if pos < len(under):
                m = under[pos]
                pos += 1
            elif not under and not exact:
                self._throw("No more unfilled consumers to be assigned.")
            elif not under:
                m = exact.popleft()
            else:
                m, pos = under[0], 1
            size[m] += 1
            if size[m] == min_q:
                pos -= 1
                del under[pos]
                exact.append(m)
            elif size[m] == max_q:
                self.current_over += 1
        if under:
            if self.current_over != self.expected_over:
                self._throw(
                    "We haven't reached the expected number of members with more than the minQuota partitions, "
                    "but no more partitions to be assigned"
                )
            short = next(m for m in under if size[m] != min_q)
            self._throw(
                f"Consumer: [{self.ctx.spec.member_ids[short]}] doesn't reach minQuota partitions, "
                "and no more partitions to be assigned"
            )

    def _throw(self, message: str) -> None:
        spec = self.ctx.spec
        claims = ", ".join(
            f"{spec.member_ids[m]!r} claims {spec.topic_names[t]}-{p}"
            for m, tps in self.phantoms.items()
            for t, p in tps
        )
        raise KafkaAssignorError(
            "java.lang.IllegalStateException",
            message,
            f"owned partitions past their topic's partition count ({claims}): Kafka's constrained assignment keeps "
            "them towards the members' quotas, which leaves more real partitions than places",
        )

    def _assign_owned(self) -> np.ndarray:
        """Step 1, Java's `assignOwnedPartitions`: keep owned partitions, sorted by (partition, topic name),
        up to the quotas."""
        ctx = self.ctx
        spec = ctx.spec
        ids, members = ctx.own_ids, ctx.own_members
        maybe_revoked = self.maybe_revoked = np.full(ctx.num_partitions, -1, dtype=np.int64)
        if ids.size and ctx.rack_on:
            bad = ctx.has_rack[members] & ((ctx.partition_bits[ids] & ctx.member_bits[members]) == 0)  # type: ignore[index]
            if bad.any():
                maybe_revoked[ids[bad]] = members[bad]
                ids, members = ids[~bad], members[~bad]
        if ids.size:
            # one sort of (member, partition number, topic name) packed into int64 bit fields
            tbits = max(1, (len(spec.topic_names) - 1).bit_length())
            kbits = tbits + max(1, (int(spec.topic_sizes.max()) - 1).bit_length())
            key = (spec.partition_number[ids] << tbits) | ctx.topic_name_pos[ctx.partition_topic[ids]]
            key = np.sort((members << kbits) | key)
            members = key >> kbits
            topic = spec.topics_by_name.astype(np.int64)[key & ((1 << tbits) - 1)]
            ids = spec.topic_start[topic] + ((key & ((1 << kbits) - 1)) >> tbits)
            if ctx.multi is not None:
                keep = ~ctx.multi[ids]
                ids, members = ids[keep], members[keep]
        counts = np.bincount(members, minlength=ctx.num_members)
        starts = np.cumsum(counts) - counts
        keeps = counts.tolist()
        phantoms = self._sorted_phantoms()
        for m, claims in phantoms.items():
            keeps[m] += len(claims)
        self._take_quotas(keeps, int(counts.max(initial=0)))
        real_keeps = list(keeps)
        for m, claims in phantoms.items():  # the first `keep` of the member's real and phantom claims
            real = ids[starts[m] : starts[m] + counts[m]]
            numbers = spec.partition_number[real].tolist()
            positions = ctx.topic_name_pos[ctx.partition_topic[real]].tolist()
            prefix = sorted([*zip(numbers, positions, repeat(False)), *claims])[: keeps[m]]
            real_keeps[m] = sum(1 for *_, phantom in prefix if not phantom)
            for number, pos, phantom in prefix:
                if phantom and (self.first_phantom is None or (pos, number) < self.first_phantom):
                    self.first_phantom = (pos, number)
        self.kept = [ids[a : a + k] for a, k in zip(starts.tolist(), real_keeps, strict=True)]
        assigned = np.zeros(ctx.num_partitions, dtype=bool)
        if ids.size and real_keeps != counts.tolist():
            over = np.arange(ids.size) - starts[members] >= np.asarray(real_keeps, dtype=np.int64)[members]
            maybe_revoked[ids[over]] = members[over]
            ids = ids[~over]
        assigned[ids] = True
        return assigned

    def _take_quotas(self, keeps: list[int], most: int) -> None:
        """Java's walk over the members' owned partitions: `keeps`, each member's number of claims (`most`:
        the largest number of real ones), becomes how many it keeps (`size`), filling the under-min and
        exact-min lists."""
        spec = self.ctx.spec
        min_q, max_q, expected = self.min_quota, self.max_quota, self.expected_over
        order: list[int] | None = None  # None: member order (typed, for native loops when compiled)
        if expected and most >= max_q and len(keeps) > _TREEIFY_THRESHOLD:
            # Java walks `consumerToOwnedPartitions`, a default-capacity HashMap filled while iterating
            # the subscriptions: the iteration order again, up to a rare capacity difference (a bucket
            # reaching 9 entries at a different moment), so it is recomputed from that order; with 8 members
            # or fewer no bucket gets there, and the order is the members' (the leader's) as they are
            order = spec.leader_list  # `hashmap_positions(spec.member_ids)`, kept for the event
        for i in range(len(keeps)):
            m = i if order is None else order[i]
            k = keeps[m]
            if k < min_q:
                self.under.append(m)
                keep = k
            elif k >= max_q and self.current_over < expected:
                self.current_over += 1
                if self.current_over == expected:
                    self.exact.clear()
                keep = max_q
            else:
                keep = min_q
                if self.current_over < expected:
                    self.exact.append(m)
            keeps[m] = keep
        self.size = keeps

    def _sorted_phantoms(self) -> dict[int, list[tuple[int, int, bool]]]:
        """Per member, its kept phantom claims as (partition number, topic name position, True), the
        key Java sorts owned partitions by; with rack logic on, a member with a rack drops them (no
        replica is on its rack)."""
        ctx = self.ctx
        out = {}
        for m, claims in self.phantoms.items():
            if not (ctx.rack_on and ctx.has_rack[m]):  # type: ignore[index]
                out[m] = sorted((p, int(ctx.topic_name_pos[t]), True) for t, p in claims)
        return out

    def _rack_consumer_counts(self) -> np.ndarray:
        """Per partition: how many members' racks hold a replica of it (Java's numConsumersByPartition)."""
        ctx = self.ctx
        counts = np.zeros(ctx.num_partitions, dtype=np.int64)
        for r in range(64):
            bit = np.uint64(1) << np.uint64(r)
            members = int(np.count_nonzero(ctx.member_bits & bit))  # type: ignore[operator]
            if members:
                counts += ((ctx.partition_bits & bit) != 0) * members  # type: ignore[operator]
        return counts

    def _assign_rack_aware_round_robin(self, unassigned: np.ndarray) -> np.ndarray:
        """Step 2, Java's `assignRackAwareRoundRobin`: a cursor over the under-min members (wrapping) to the
        first whose rack holds a replica, else the first rack-matching exact-min member; unmatched partitions
        wait for step 3.

        Java's cursor is an index into a shrinking list; here it is a position in the initial list
        ("the first member still there at or after it"), and each rack keeps the sorted positions of
        its under-min members, so a lookup is a bisection per replica rack instead of a scan."""
        ctx = self.ctx
        pbits = ctx.partition_bits.tolist()  # type: ignore[union-attr]
        mbits = ctx.member_bits.tolist()  # type: ignore[union-attr]
        size = self.size
        min_q, max_q = self.min_quota, self.max_quota
        under0 = list(self.under)
        n0 = len(under0)
        alive = [True] * n0
        rack_of = [m.bit_length() - 1 for m in mbits]  # one rack bit per member (-1: none)
        by_rack: dict[int, list[int]] = {}
        for pos, m in enumerate(under0):
            if rack_of[m] >= 0:
                by_rack.setdefault(rack_of[m], []).append(pos)
        # the exact-min list: entries (seq, member) in list order, valid while `exact_seq` says so
        exact_log: list[tuple[int, int]] = []
        exact_seq: dict[int, int] = {}
        exact_by_rack: dict[int, deque[tuple[int, int]]] = {}

        def exact_add(m: int) -> None:
            entry = (len(exact_log), m)
            exact_log.append(entry)
            exact_seq[m] = entry[0]
            if rack_of[m] >= 0:
                exact_by_rack.setdefault(rack_of[m], deque()).append(entry)

        for m in self.exact:
            exact_add(m)
        racks_of_bits: dict[int, list[int]] = {}
        cursor = 0
        n_alive = n0
        left: list[int] = []
        got_members: list[int] = []
        got_ids: list[int] = []
        for p in unassigned.tolist():
            pb = pbits[p]
            consumer = -1
            if pb:
                racks = racks_of_bits.get(pb)
                if racks is None:
                    racks = racks_of_bits[pb] = [r for r in range(pb.bit_length()) if pb >> r & 1]
                best = -1
                best_d = n0
                best_rack = -1
                best_i = -1
                for r in racks:
                    positions = by_rack.get(r)
                    if not positions:
                        continue
                    i = bisect_left(positions, cursor)
                    if i == len(positions):
                        i = 0
                    d = (positions[i] - cursor) % n0
                    if d < best_d:
                        best, best_d, best_rack, best_i = positions[i], d, r, i
                if best >= 0:
                    consumer = under0[best]
                    count = size[consumer] + 1
                    if count >= min_q:
                        alive[best] = False
                        n_alive -= 1
                        del by_rack[best_rack][best_i]
                        if count < max_q and self.current_over < self.expected_over:
                            exact_add(consumer)
                    cursor = (best + 1) % n0 if n_alive else 0
                elif exact_seq:
                    first = None
                    for r in racks:
                        queue = exact_by_rack.get(r)
                        while queue and exact_seq.get(queue[0][1]) != queue[0][0]:
                            queue.popleft()
                        if queue and (first is None or queue[0][0] < first[0]):
                            first = queue[0]
                    if first is not None:
                        consumer = first[1]
                        if size[consumer] + 1 == max_q:
                            del exact_seq[consumer]
                            self.current_over += 1
                            if self.current_over == self.expected_over:
                                exact_seq.clear()
            if consumer >= 0:
                size[consumer] += 1
                got_members.append(consumer)
                got_ids.append(p)
            else:
                left.append(p)
        self.under = [m for pos, m in enumerate(under0) if alive[pos]]
        self.exact = [m for seq, m in exact_log if exact_seq.get(m) == seq]
        if got_ids:
            self.chunks.append((np.array(got_members, dtype=np.int64), np.array(got_ids, dtype=np.int64), 0))
        return np.array(left, dtype=np.int64)

    def _assign_round_robin(self, unassigned: np.ndarray) -> None:
        """Step 3, Java's `assignRoundRobin`: an iterator cycling over the under-min members (each leaving
        once it reaches minQuota and queueing at the end of the exact-min list), then one partition per
        polled exact-min member. Round r gives one partition to every member still short after r rounds,
        so rounds with the same set of members form one block."""
        total = unassigned.size
        used = 0
        if self.under and total:
            under = np.array(self.under, dtype=np.int64)
            size = np.array(self.size, dtype=np.int64)
            need = self.min_quota - size[under]
            prev = 0
            for level in sorted(set(need.tolist())):
                active = under[need >= level]
                rounds = level - prev
                chunk = rounds * active.size
                if used + chunk > total:
                    break  # out of partitions mid-way: the verification below fails, as in Java
                self.chunks.append((active, unassigned[used : used + chunk], rounds))
                used += chunk
                prev = level
            else:
                self._all_at_min(under[np.argsort(need, kind="stable")].tolist())
        rest = self._poll(total - used)
        if rest:
            self.chunks.append((np.array(rest, dtype=np.int64), unassigned[used:], 1))

    def _all_at_min(self, by_need: list[int]) -> None:
        """The under-min members (`by_need`: by partitions still needed, stably) have reached minQuota and
        queue at the end of the exact-min list in that order."""
        self.exact.extend(by_need)
        for m in self.under:
            self.size[m] = self.min_quota
        self.under = []

    def _poll(self, rest: int) -> list[int]:
        """The exact-min members that take the `rest` partitions left after the under-min rounds, one each."""
        if self.under:
            raise RuntimeError(
                "IllegalStateException: We haven't reached the expected number of members with more than the "
                "minQuota partitions, but no more partitions to be assigned"
            )
        if rest > len(self.exact):
            raise RuntimeError("IllegalStateException: No more unfilled consumers to be assigned.")
        polled = self.exact[:rest]
        del self.exact[:rest]
        for m in polled:
            self.size[m] += 1
        return polled

    def _finish(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """Per member: kept partitions, then the new ones in the order given; and the transfers
        (a partition maybe-revoked from another member, or claimed by several)."""
        ctx = self.ctx
        pieces: list[list[np.ndarray]] = [[k] for k in self.kept]
        moving_ids: list[np.ndarray] = []
        moving_members: list[np.ndarray] = []
        for members, ids, rounds in self.chunks:
            if rounds == 0:  # ids[i] went to members[i]
                order = np.argsort(members, kind="stable")
                grouped, counts = ids[order], np.bincount(members, minlength=ctx.num_members)
                ends = np.cumsum(counts)
                for m in np.flatnonzero(counts).tolist():
                    pieces[m].append(grouped[ends[m] - counts[m] : ends[m]])
            elif members.size == 1:
                pieces[int(members[0])].append(ids)
            else:
                rows = ids.reshape(rounds, members.size).T if rounds > 1 else ids[:, None]
                for m, row in zip(members.tolist(), rows, strict=True):
                    pieces[m].append(row)
            prior = self.maybe_revoked[ids]
            if (prior >= 0).any() or ctx.multi is not None:
                receivers = np.tile(members, max(rounds, 1))
                moving = (prior >= 0) & (prior != receivers)
                if ctx.multi is not None:
                    moving |= ctx.multi[ids]
                moving_ids.append(ids[moving])
                moving_members.append(receivers[moving])
        out = [np.concatenate(p) if len(p) > 1 else p[0] for p in pieces]
        if not moving_ids:
            return out, _EMPTY, _EMPTY
        return out, np.concatenate(moving_ids), np.concatenate(moving_members)


class _SmallConstrainedBuilder(_ConstrainedBuilder):
    """`_ConstrainedBuilder`'s steps 1 and 3 on Python lists, for small groups without rack logic
    (`_Members.small`; its phantom-claim `probe` stays numpy's), where each numpy call costs more than the
    loop it replaces (tests/assignors/test_properties.py checks that both give the same results). Step 3
    hands out `given`, (partition, member) pairs in Java's order, instead of chunks."""

    def _unkept(self) -> list[int]:  # type: ignore[override]
        """`name_ordered` made here as a list (its array would be made from a list and listed again); the
        topics read as `list[int]`, so that mypyc loops over the ranges natively."""
        kept = self._assign_owned()
        ctx = self.ctx
        start: list[int] = ctx.spec.topic_start.tolist()
        topics: list[int] = ctx.topics_by_name
        unkept: list[int] = []
        for t in topics:
            for p in range(start[t], start[t + 1]):
                if not kept[p]:
                    unkept.append(p)
        return unkept

    def _assign_owned(self) -> list[bool]:  # type: ignore[override]
        """Step 1 on lists; returns whether each global id is kept. Each member's claims in Java's order are
        dealt out of one walk over every id in that order (`GroupSpec.ids_by_number`), each to its claimant (after
        `_Context._recover_owned`, an id has one at most): no sort per member, no sort key made per claim."""
        ctx = self.ctx
        n = ctx.num_partitions
        multi = set(np.flatnonzero(ctx.multi).tolist()) if ctx.multi is not None else set()
        own = ctx.own_by_member
        claimant = [-1] * n
        for m in range(len(own)):
            for p in own[m]:
                claimant[p] = m
        for p in multi:  # claimed twice in one generation: nobody keeps them
            claimant[p] = -1
        claims: list[list[int]] = [[] for _ in own]
        for p in ctx.spec.ids_by_number:
            m = claimant[p]
            if m >= 0:
                claims[m].append(p)
        keeps = [len(c) for c in claims]
        self._take_quotas(keeps, max(keeps) if keeps else 0)  # `max(default=)`, a generic call when compiled
        revoked: dict[int, int] = {}  # maybe revoked: -> claimant
        for m in range(len(claims)):  # claims cut to what each keeps in place: most keep all, no slice made
            c, keep = claims[m], keeps[m]
            if keep < len(c):
                for p in c[keep:]:
                    revoked[p] = m
                del c[keep:]
        self.kept = claims  # type: ignore[assignment]
        self.revoked = revoked
        self.multi = multi
        kept = [False] * n
        for c in claims:
            for p in c:
                kept[p] = True
        return kept

    def _assign_round_robin(self, unassigned: list[int]) -> None:  # type: ignore[override]
        given: list[tuple[int, int]] = []
        self.given = given
        total, used = len(unassigned), 0
        if self.under and total:
            under = self.under
            need = [self.min_quota - self.size[m] for m in under]
            prev = 0
            for level in sorted(set(need)):
                # index loops: mypyc runs `zip(strict=)` and `itertools.cycle` generically
                active = [under[i] for i in range(len(under)) if need[i] >= level]
                n_active = len(active)
                chunk = (level - prev) * n_active
                if used + chunk > total:
                    break  # out of partitions mid-way: `_poll` fails, as in Java
                for i in range(chunk):
                    given.append((unassigned[used + i], active[i % n_active]))
                used += chunk
                prev = level
            else:
                self._all_at_min([under[i] for i in sorted(range(len(under)), key=need.__getitem__)])
        polled = self._poll(total - used)  # one member per partition left
        for i in range(len(polled)):
            given.append((unassigned[used + i], polled[i]))

    def _finish(self) -> tuple[list[list[int]], np.ndarray, np.ndarray]:  # type: ignore[override]
        """`_ConstrainedBuilder._finish` with the per-member lists left as lists (`_ListedResult`)."""
        lists: list[list[int]] = self.kept  # type: ignore[assignment]
        revoked, multi = self.revoked, self.multi
        moving: list[tuple[int, int]] = []
        for p, m in self.given:
            lists[m].append(p)
            if revoked.get(p, m) != m or p in multi:
                moving.append((p, m))
        if not moving:
            return lists, _EMPTY, _EMPTY
        ids, owners = np.array(moving, dtype=np.int64).T
        return lists, ids.copy(), owners.copy()


# --------------------------------------------------------------------------------------------------
# General builder: Kafka's `GeneralAssignmentBuilder` (subscriptions differ)


class _JavaHashSet:
    """Iteration order of a `java.util.HashSet<TopicPartition>`: buckets by spread hash, insertion order
    within a bucket, capacity doubling past 0.75 load and on a 9-long bucket below capacity 64. A bucket's
    length is counted only when that check can apply (9+ elements): most sets hold a few."""

    __slots__ = ("cap", "items")

    def __init__(self) -> None:
        self.cap = 16
        self.items: dict[int, tuple[int, int]] = {}

    def add(self, pid: int, spread: int, seq: int) -> None:
        items = self.items
        items[pid] = (spread, seq)
        if len(items) > 8 and self.cap < 64:
            mask = self.cap - 1
            bucket = spread & mask
            n = 0
            for s, _ in items.values():  # counted in a loop: no list made
                if s & mask == bucket:
                    n += 1
            if n >= 9:
                self.cap *= 2
        if len(items) > self.cap * 3 // 4:
            self.cap *= 2

    def remove(self, pid: int) -> None:
        del self.items[pid]

    def first(self) -> int:
        mask = self.cap - 1
        return min(self.items, key=lambda p: (self.items[p][0] & mask, self.items[p][1]))


class _PartitionMovements:
    """Java's `PartitionMovements`: net (from -> to) member pairs per topic, used to move a partition
    back instead of creating a 2-cycle. Callers pass each partition's topic along (global id = topic start
    + partition number). A pair is one int `from * num_members + to` (ordered as the tuple would be): no
    tuple to make and hash per move."""

    def __init__(self, start: list[int], topic_hash: list[int], num_members: int) -> None:
        self.start = start  # `_Members.topic_lists`
        self.topic_hash = topic_hash
        self.k = num_members
        self.record: dict[int, int] = {}  # partition -> its pair
        self.by_topic: dict[int, dict[int, _JavaHashSet]] = {}
        self.seq = 0

    def _remove(self, pid: int, t: int, pair: int) -> None:
        del self.record[pid]
        pairs = self.by_topic[t]
        s = pairs[pair]
        s.remove(pid)
        if not s.items:
            del pairs[pair]
            if not pairs:
                del self.by_topic[t]

    def _add(self, pid: int, t: int, pair: int) -> None:
        """Record pid under `pair`, with its `TopicPartition` hash as a `HashMap` spreads it."""
        self.record[pid] = pair
        pairs = self.by_topic.get(t)
        if pairs is None:
            pairs = self.by_topic[t] = {}
        s = pairs.get(pair)
        if s is None:
            s = pairs[pair] = _JavaHashSet()
        self.seq += 1
        h = (31 * (31 + pid - self.start[t]) + self.topic_hash[t]) & 0xFFFFFFFF
        s.add(pid, h ^ (h >> 16), self.seq)

    def actual_partition(self, pid: int, t: int, old: int, new: int) -> int:
        """Java's `getTheActualPartitionToBeMoved`: moving pid from old to new, where the reverse pair (new
        -> pid's first owner) is on record for this topic, moves the first partition of that set back
        instead (which is with pid's first owner, not necessarily with old)."""
        pairs = self.by_topic.get(t)
        if pairs is None:
            return pid
        rec = self.record.get(pid)
        if rec is not None:
            old = rec // self.k
        s = pairs.get(new * self.k + old)
        return pid if s is None else s.first()

    def order_key(self) -> tuple[tuple[int, int, int, tuple[int, ...]], ...]:
        """Each set's capacity and element order: the records (hence the owners, given the ones before
        any move) and the order in which a `HashSet` yields them (a tuple: hashed and compared as it is)."""
        parts = []
        n, span = self.start[-1], self.seq + 1  # ids are below n, sequence numbers below span
        for t in sorted(self.by_topic):
            for pair, s in sorted(self.by_topic[t].items()):
                mask = s.cap - 1
                # (bucket, seq) order (seq: unique) as one int with the id below it: no tuple per element
                keys = [((spread & mask) * span + seq) * n + p for p, (spread, seq) in s.items.items()]
                keys.sort()
                parts.append((t, pair, s.cap, tuple([k % n for k in keys])))
        return tuple(parts)

    def move(self, pid: int, t: int, old: int, new: int) -> None:
        rec = self.record.get(pid)
        if rec is None:
            self._add(pid, t, old * self.k + new)
        else:
            self._remove(pid, t, rec)
            first = rec // self.k
            if first != new:
                self._add(pid, t, first * self.k + new)


def _topic_runs(ids: np.ndarray, partition_topic: np.ndarray) -> list[tuple[int, int, int]]:
    """`ids` (not empty) cut where their topic changes: (topic, first position, end position) per run."""
    topic = partition_topic[ids]
    bounds = [0, *(np.flatnonzero(topic[1:] != topic[:-1]) + 1).tolist(), ids.size]
    return list(zip(topic[bounds[:-1]].tolist(), bounds, bounds[1:], strict=False))


def _extremes(
    op: np.ufunc, values: np.ndarray, topic: np.ndarray, topics: np.ndarray, n_topics: int
) -> tuple[list[int], list[int]]:
    """Per topic (lists over all `n_topics`, 0 for those not in `topics`): the largest or least (`op`) of
    `values`, grouped by their `topic` (sorted; every one of `topics` has some), and how many are at it."""
    extreme = np.zeros(n_topics, dtype=np.int64)
    extreme[topics] = op.reduceat(values, np.searchsorted(topic, topics))
    return extreme.tolist(), np.bincount(topic[values == extreme[topic]], minlength=extreme.size).tolist()


def _heap_fill(n: int, cands: list[int], sizes: list[int], rank: list[int]) -> tuple[list[int], list[int]]:
    """`_GeneralBuilder._water_fill` one partition at a time: the receivers of n partitions, each the least
    loaded of `cands` (their `sizes`) by (size, member id `rank`), and the candidates' final sizes. (size,
    rank) is one int `size * len(rank) + rank` (ranks are distinct); up to `_SCAN_FILL` candidates a scan
    finds the least (native loops), more take a heap of `key * len(cands) + position`."""
    r, c = len(rank), len(cands)
    keys = [sizes[i] * r + rank[cands[i]] for i in range(c)]  # index loops: mypyc runs a `zip(strict=)` generically
    got: list[int] = []
    if c <= _SCAN_FILL:
        for _ in range(n):
            best, low = 0, keys[0]
            for i in range(1, c):
                key = keys[i]
                if key < low:
                    best, low = i, key
            got.append(cands[best])
            keys[best] = low + r
    else:
        heap = [key * c + i for i, key in enumerate(keys)]
        heapq.heapify(heap)
        for _ in range(n):
            i = heap[0] % c
            got.append(cands[i])
            heapq.heapreplace(heap, heap[0] + r * c)
        for e in heap:
            keys[e % c] = e // c
    return got, [key // r for key in keys]


def _spread(sizes: list[int]) -> int:
    """The largest of `sizes` (not empty) less the least, in one native loop (`max` and `min` are generic calls
    when compiled)."""
    high = low = sizes[0]
    for size in sizes:
        if size > high:
            high = size
        elif size < low:
            low = size
    return high - low


def _balance_score(sizes: list[int]) -> int:
    """Java's `getBalanceScore` (sum of |a - b| over member pairs), with its int overflow (the sum modulo
    2^32 is the same however Java's int additions wrapped on the way)."""
    n = len(sizes)
    ordered = sorted(sizes)
    score = 0
    for i in range(n):  # a loop: a generator is a generic object when compiled
        score += ordered[i] * (2 * i - n + 1)
    score &= 0xFFFFFFFF
    return score - (1 << 32) if score & 0x80000000 else score


class _GeneralBuilder:
    """Kafka's general assignment over numpy arrays: `owner`, `stamp` (place in the owner's list) per global
    id, `sizes` per member. `build` is the flow; the steps it calls are written for this representation
    and again for `_SmallGeneralBuilder`'s lists."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.owner = np.full(ctx.num_partitions, -1, dtype=np.int64)
        self.stamp = np.zeros(ctx.num_partitions, dtype=np.int64)
        self.next_stamp = 0
        # subscribers per topic (`num_subs`, `sub_by_topic` in member id order, `topic_subs` its slices),
        # (member, topic) codes `member * n_topics + topic` sorted, each member's maximum size, and all
        # subscribed partitions, topics sorted by (subscriber count, name)
        (self.num_subs, self.sub_by_topic, self.topic_subs, self.sub_codes, self.max_size,
         self.sorted_all) = ctx.members.subscriber_tables
        self.sizes = np.zeros(ctx.num_members, dtype=np.int64)

    # -- setup ---------------------------------------------------------------------------------------

    def _prev_assignment(self) -> tuple[np.ndarray, np.ndarray]:
        ctx = self.ctx
        gens = ctx.generations
        max_gen = max(gens)
        prev_owner = np.full(ctx.num_partitions, -1, dtype=np.int64)
        prev_gen = np.full(ctx.num_partitions, -2, dtype=np.int64)
        for m, ids in enumerate(ctx.spec.owned):
            g = gens[m]
            if ids.size and g < max_gen:
                update = (prev_owner[ids] < 0) | (g > prev_gen[ids])
                prev_owner[ids[update]] = m
                prev_gen[ids[update]] = g
        return prev_owner, prev_gen

    def subscribes(self, members: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """Elementwise: does member i subscribe to topic i (with metadata)?"""
        codes = members * len(self.ctx.spec.topic_names) + topics
        at = np.minimum(np.searchsorted(self.sub_codes, codes), max(self.sub_codes.size - 1, 0))
        return self.sub_codes[at] == codes if self.sub_codes.size else np.zeros(codes.size, dtype=bool)

    def _keep_owned(self) -> bool:
        """Owned partitions stay where they are unless the member dropped the topic or (rack logic)
        holds no replica of it; either of those makes `revocationRequired`."""
        ctx = self.ctx
        ids, members = ctx.own_ids, ctx.own_members
        if not ids.size:
            return False
        ok = self.subscribes(members, ctx.partition_topic[ids])
        if ctx.rack_on:
            ok &= ~(ctx.has_rack[members] & ((ctx.partition_bits[ids] & ctx.member_bits[members]) == 0))  # type: ignore[index]
        revocation_required = not ok.all()
        ids, members = ids[ok], members[ok]
        self.owner[ids] = members
        self.stamp[ids] = np.arange(ids.size)
        self.next_stamp = ids.size
        self.sizes += np.bincount(members, minlength=ctx.num_members)
        return revocation_required

    def _unassigned(self) -> np.ndarray:
        """The subscribed partitions nobody keeps, topics by (subscriber count, name)."""
        return self.sorted_all[self.owner[self.sorted_all] < 0]

    def _assign_unassigned(self, unassigned: np.ndarray) -> None:
        if self.ctx.rack_on and unassigned.size:
            unassigned = self._assign_rack_matching(unassigned)
        self._assign_plain(unassigned)

    def _movable(self) -> tuple[np.ndarray, list[int], list[int]]:
        """The partitions of topics with two or more subscribers (in `sorted_all` order), and Java's
        currentAssignment once `balance` has set the fixed members aside (those at their maximum that hold
        nothing movable) with their sizes."""
        ptopic = self.ctx.partition_topic
        self.movable_topic = movable_topic = self.num_subs >= 2
        movable_all = self.sorted_all[movable_topic[ptopic[self.sorted_all]]]
        holds_movable = np.zeros(self.ctx.num_members, dtype=bool)
        owners = self.owner[movable_all]
        holds_movable[owners[owners >= 0]] = True
        active = np.flatnonzero((self.sizes < self.max_size) | holds_movable)
        return movable_all, active.tolist(), self.sizes[active].tolist()

    def _movable_of(self, partitions: np.ndarray) -> np.ndarray:
        return partitions[self.movable_topic[self.ctx.partition_topic[partitions]]]

    def _balanced(self) -> bool:
        """Whether `isBalanced` holds before any move, which `_SmallGeneralBuilder` tells apart cheaply; here
        `_Reassignment.unbalanced` answers it (its setup is vectorised)."""
        return False

    def _fix_prev(self, prev_owner: np.ndarray, active: list[int]) -> list[int]:
        """`prev_owner` with `_FIXED_PREV` for owners outside currentAssignment, kept (`scan` reads it) and
        as a list."""
        fixed = np.ones(self.ctx.num_members, dtype=bool)
        fixed[active] = False
        ids = np.flatnonzero(prev_owner >= 0)
        self.prev_owner = prev = prev_owner.copy()
        prev[ids[fixed[prev[ids]]]] = _FIXED_PREV
        return prev.tolist()

    def lists(self) -> tuple[list[int], list[int], list[int]]:
        """Fresh lists of `owner` and `sizes`, and `max_size` as a list: `_Reassignment` moves on copies."""
        return self.owner.tolist(), self.sizes.tolist(), self.max_size.tolist()

    def scan(self, partitions: np.ndarray) -> tuple[list[int], list[tuple[int, int, int]], list[int]]:
        """A pass's `partitions` (not empty) as a list, their topic runs (`_topic_runs`) and the positions of
        those with a prevAssignment entry."""
        return (partitions.tolist(), _topic_runs(partitions, self.ctx.partition_topic),
                np.flatnonzero(self.prev_owner[partitions] != -1).tolist())

    def set_moved(self, moved: list[int], owners: list[int], stamps: list[int]) -> None:
        self.owner[moved] = owners
        self.stamp[moved] = stamps

    def owners(self, leader_order: np.ndarray | None) -> np.ndarray:
        """int32 owner per global id, members in member order (`leader_order`: the builder's members by
        member index, None: the same)."""
        owner = self.owner
        if leader_order is not None:
            owner = np.where(owner >= 0, leader_order[owner], -1)
        return owner.astype(np.int32)

    # -- assigning the unassigned --------------------------------------------------------------------

    def _assign_rack_matching(self, unassigned: np.ndarray) -> np.ndarray:
        """Java's rack pass: each partition to the least loaded (size, member id) subscriber of its topic
        that has no rack or a rack holding a replica; the others are left for the plain pass. One topic
        run at a time: when each eligible member serves one replica-rack set only (no rack-less members,
        one replica per partition) the sets are independent water-fills, else a lazily refreshed heap per
        distinct replica-rack set."""
        ctx = self.ctx
        left: list[np.ndarray] = []
        rank = ctx.id_rank_list
        for t, first, end in _topic_runs(unassigned, ctx.partition_topic):
            run = unassigned[first:end]
            cands = self.topic_subs[t]
            if not cands.size:
                left.append(run)
                continue
            pbits = ctx.partition_bits[run]  # type: ignore[index]
            classes = np.unique(pbits).tolist()
            no_rack = ~ctx.has_rack[cands]  # type: ignore[index]
            eligible = [cands[no_rack | ((ctx.member_bits[cands] & np.uint64(b)) != 0)] for b in classes]  # type: ignore[index]
            if sum(e.size for e in eligible) == np.unique(np.concatenate(eligible)).size:
                stamps = np.arange(self.next_stamp, self.next_stamp + run.size)
                self.next_stamp += run.size
                unplaced = np.zeros(run.size, dtype=bool)
                for b, members in zip(classes, eligible, strict=True):
                    at = pbits == np.uint64(b)
                    if members.size:
                        self._water_fill(run[at], members, stamps[at])
                    else:
                        unplaced |= at
                left.append(run[unplaced])
                continue
            sizes = self.sizes.tolist()
            heaps: dict[int, list[tuple[int, int, int]]] = {}
            member_classes: dict[int, list[int]] = {}
            for b, eligible_b in zip(classes, eligible, strict=True):
                members = eligible_b.tolist()
                heaps[b] = [(sizes[m], rank[m], m) for m in members]
                heapq.heapify(heaps[b])
                for m in members:
                    member_classes.setdefault(m, []).append(b)
            got = np.full(run.size, -1, dtype=np.int64)
            for i, b in enumerate(pbits.tolist()):
                heap = heaps[b]
                while heap and heap[0][0] != sizes[heap[0][2]]:
                    heapq.heappop(heap)
                if not heap:
                    continue
                m = heap[0][2]
                got[i] = m
                sizes[m] += 1
                for c in member_classes[m]:
                    heapq.heappush(heaps[c], (sizes[m], rank[m], m))
            placed = got >= 0
            ids = run[placed]
            self.owner[ids] = got[placed]
            self.stamp[ids] = np.arange(self.next_stamp, self.next_stamp + ids.size)
            self.next_stamp += ids.size
            np.add.at(self.sizes, got[placed], 1)
            left.append(run[~placed])
        return np.concatenate(left) if left else _EMPTY

    def _water_fill(self, pids: np.ndarray, cands: np.ndarray, stamps: np.ndarray | None = None) -> None:
        """Give each partition of `pids`, one after the other, to the least loaded of `cands` by (size,
        member id): member m's k-th new partition comes at "level" size_m + k, and the partitions go
        out in (level, id) order. `stamps`: their places in the members' lists (default: next ones).
        Up to `_HEAP_FILL` partitions (most calls: a departed member's share) a heap hands them out one by
        one, cheaper than the two dozen numpy calls that compute the levels at once."""
        ctx = self.ctx
        n = pids.size
        if n <= _HEAP_FILL:
            got, sizes = _heap_fill(n, cands.tolist(), self.sizes[cands].tolist(), ctx.id_rank_list)
            self.owner[pids] = got
            self.sizes[cands] = sizes
        else:
            s = self.sizes[cands]
            rank = ctx.id_rank[cands]
            # the largest level L with sum(max(0, L - s)) <= n: with the j smallest sizes below it (sorted
            # sizes ss), L is at most (n + ss[0] + ... + ss[j-1]) // j and lies in [ss[j-1], ss[j]]
            ss = np.sort(s)
            cap = np.concatenate((ss[1:], ss[:1] + n))
            level = np.minimum((n + np.cumsum(ss)) // np.arange(1, ss.size + 1), cap)
            lo = int(level[level >= ss].max())
            take = np.maximum(lo - s, 0)
            extra = n - int(take.sum())
            if extra:
                at_level = np.flatnonzero(s <= lo)
                chosen = at_level[np.argsort(rank[at_level])[:extra]]
                take[chosen] += 1
            members = np.repeat(np.arange(cands.size), take)
            first = np.repeat(np.cumsum(take) - take, take)
            levels = s[members] + np.arange(n) - first
            order = np.argsort(levels * ctx.num_members + rank[members], kind="stable")
            self.owner[pids] = cands[members[order]]
            self.sizes[cands] += take
        if stamps is None:
            stamps = np.arange(self.next_stamp, self.next_stamp + n)
            self.next_stamp += n
        self.stamp[pids] = stamps

    def _assign_plain(self, pids: np.ndarray) -> None:
        if not pids.size:
            return
        for t, first, end in _topic_runs(pids, self.ctx.partition_topic):
            cands = self.topic_subs[t]
            if cands.size:  # Java skips partitions of topics nobody can take
                self._water_fill(pids[first:end], cands)

    # -- balancing -----------------------------------------------------------------------------------

    def build(self) -> None:
        revocation_required = self._keep_owned()
        initializing = not self.next_stamp  # nothing kept: every size is still 0
        unassigned = self._unassigned()
        self._assign_unassigned(unassigned)
        movable_all, active, active_sizes = self._movable()
        if not len(movable_all) or _spread(active_sizes) <= 1 or self._balanced():
            return  # `isBalanced` holds, and only a move could change that

        # Java hands a partition back to its prevAssignment owner without asking whether that member still
        # subscribes to the topic (kept: Kafka's literal result); a "fixed" owner is no longer in
        # currentAssignment, so merely looking at such a partition throws (see `_FIXED_PREV`)
        prev_owner, prev_gen = self._prev_assignment()  # KIP-341's prevAssignment: only the move loop reads it
        self.prev_member, self.prev_gen = prev_owner, prev_gen
        moves = _Reassignment(self, movable_all, active, self._fix_prev(prev_owner, active))
        if not revocation_required:
            moves.perform(self._movable_of(unassigned))
        performed = moves.perform(movable_all)
        # Java's revert rule: a final round of moves that does not lower the balance score is undone
        # (with the moves of the unassigned partitions' round)
        if initializing or not performed or moves.balance_score() < _balance_score(active_sizes):
            moves.keep()

    def _throw_fixed_prev(self, pid: int, owner: int) -> None:
        """Java's `performReassignments` reads `currentAssignment.get(prev).size()` for a partition with a
        prevAssignment entry; a prev owner that cannot take part in the reassignment (it has all it can get
        and nothing movable) was taken out of currentAssignment, hence a NullPointerException."""
        spec = self.ctx.spec
        prev = int(self.prev_member[pid])
        topic = spec.topic_names[int(spec.partition_topic[pid])]
        raise KafkaAssignorError(
            "java.lang.NullPointerException",
            None,
            f"partition {topic}-{int(spec.partition_number[pid])} (now with {spec.member_ids[owner]!r}) "
            f"was owned by {spec.member_ids[prev]!r} in generation {int(self.prev_gen[pid])}, an older one than the "
            f"group's newest; {spec.member_ids[prev]!r} holds all the partitions it can get and none that can move, "
            "so Kafka's sticky engine has taken it out of its current assignment before looking it up there",
        )

    def result(self) -> list[np.ndarray]:
        """Per member (in the builder's order): its partitions in Kafka's list order."""
        ids = np.flatnonzero(self.owner >= 0)
        owners = self.owner[ids]
        order = np.lexsort((self.stamp[ids], owners))
        ids = ids[order]
        bounds = [0, *np.cumsum(np.bincount(owners, minlength=self.ctx.num_members)).tolist()]
        return [ids[a:b] for a, b in itertools.pairwise(bounds)]


class _SmallGeneralBuilder(_GeneralBuilder):
    """`_GeneralBuilder`'s steps on Python lists, for small groups without rack logic (`_Members.small`),
    where each numpy call costs more than the loop it replaces (tests/assignors/test_properties.py checks
    that both give the same results). The base class declares `owner`, `sizes` and the tables as arrays: the
    methods read them through `_ints` locals, on which mypyc indexes lists natively. The stamps (places in
    Java's lists) are not kept per partition: only `result` reads them, and it makes them again (`_stamps`)
    from the order of each step (the streaming state machine reads only the owners). Where the C kernel is
    built, `build` is one call of it (`assignors/reassign_kernel.pyx`) and these lists are not made."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.next_stamp = 0
        self.moved: tuple[list[int], list[int]] = ([], [])  # `set_moved`'s partitions and stamps
        # the C kernel's owners (int32 bytes; None: the Python steps ran): in the builder's member indices, and
        # mapped to member order (the same object when that is the builder's order)
        self.codes: bytes | None = None
        self.member_codes: bytes | None = None
        if _K is None:  # the Python steps' lists and tables (the kernel makes what it needs from its inputs)
            self.owner = [-1] * ctx.num_partitions  # type: ignore[assignment]
            self.sizes = [0] * ctx.num_members  # type: ignore[assignment]
            self._read_tables()

    def _read_tables(self) -> None:
        """`subscriber_tables` as lists (each member's topics: `_Members.topic_flags`), each partition's topic."""
        self.topic_subs, _, self.max_size, self.sorted_all, self.ptopic = self.ctx.members.small_tables

    def _prev_assignment(self) -> tuple[list[int], list[int]]:  # type: ignore[override]
        ctx = self.ctx
        gens = ctx.generations
        max_gen = max(gens)
        prev_owner = [-1] * ctx.num_partitions
        prev_gen = [-2] * ctx.num_partitions
        for m, claimed in enumerate(ctx.owned_lists):
            g = gens[m]
            if g < max_gen:
                for p in claimed:
                    if prev_owner[p] < 0 or g > prev_gen[p]:
                        prev_owner[p], prev_gen[p] = m, g
        return prev_owner, prev_gen

    def _keep_owned(self) -> bool:
        owner, sizes = _ints(self.owner), _ints(self.sizes)
        ptopic, topic_flags = self.ptopic, self.ctx.members.topic_flags
        revocation_required = False
        kept = 0
        for m, ids in enumerate(self.ctx.own_by_member):
            subscribes, first = topic_flags[m], kept
            for p in ids:
                if subscribes[ptopic[p]]:
                    owner[p] = m
                    kept += 1
                else:
                    revocation_required = True
            sizes[m] = sizes[m] + kept - first
        self.next_stamp = kept
        return revocation_required

    def _unassigned(self) -> list[int]:  # type: ignore[override]
        owner = _ints(self.owner)
        return [p for p in _ints(self.sorted_all) if owner[p] < 0]

    def _assign_unassigned(self, unassigned: list[int]) -> None:  # type: ignore[override]
        """`_assign_plain` (no rack logic here), one partition at a time."""
        owner, sizes, rank = _ints(self.owner), _ints(self.sizes), self.ctx.id_rank_list
        topic_subs = cast("list[list[int]]", self.topic_subs)
        for t, first, end in _list_runs(unassigned, self.ptopic):
            cands = topic_subs[t]
            if not cands:  # Java skips partitions of topics nobody can take
                continue
            pids = unassigned[first:end]
            got, filled = _heap_fill(len(pids), cands, [sizes[m] for m in cands], rank)
            for i in range(len(cands)):  # index loops: mypyc runs a `zip(strict=)` generically
                sizes[cands[i]] = filled[i]
            for i in range(len(pids)):
                owner[pids[i]] = got[i]
            self.next_stamp += len(pids)

    def _movable(self) -> tuple[list[int], list[int], list[int]]:  # type: ignore[override]
        """Holders hold only partitions of their topics, so a member at its maximum holds all of them, and a
        movable one if it subscribes to a movable topic with partitions (`small_movable`: no look at the
        owners)."""
        sizes, max_size = _ints(self.sizes), _ints(self.max_size)
        movable, movable_all, reaching = self.ctx.members.small_movable
        self.movable_topic = movable  # type: ignore[assignment]
        active = [m for m in range(len(sizes)) if sizes[m] < max_size[m] or reaching[m]]
        return movable_all, active, [sizes[m] for m in active]

    def _movable_of(self, partitions: list[int]) -> list[int]:  # type: ignore[override]
        movable, ptopic = cast("list[bool]", self.movable_topic), self.ptopic
        return [p for p in partitions if movable[ptopic[p]]]

    def _balanced(self) -> bool:
        """`_Reassignment`'s initial `not unbalanced` (see there) without its holdings: no movable topic has a
        holder with 2+ more than its least subscriber not at its maximum. A quarter of the groups that get this
        far are balanced, and then nothing moves. Holders subscribe (nothing else has been handed out), so
        only a topic whose largest subscriber has 2+ more than that one needs its holders looked at."""
        owner, sizes, max_size = _ints(self.owner), _ints(self.sizes), _ints(self.max_size)
        topics, subs, _ = self.ctx.members.movable_tables
        starts = self.ctx.members.topic_lists[0]
        for t in topics:
            high, low = -1, -1  # the largest subscriber, the least one not at its maximum (-1: none)
            for m in subs[t]:
                size = sizes[m]
                if size > high:
                    high = size
                if size != max_size[m] and (low < 0 or size < low):
                    low = size
            if low >= 0 and high > low + 1:
                for p in range(starts[t], starts[t + 1]):
                    if sizes[owner[p]] > low + 1:
                        return False
        return True

    def build(self) -> None:
        """`_GeneralBuilder.build` in one call of the C kernel (`assignors/reassign_kernel.pyx`) when built."""
        if _K is None:
            super().build()
            return
        ctx = self.ctx
        members = ctx.members
        starts, _, topic_hash = members.topic_lists
        self.codes, self.member_codes, moved, stamps, thrown, owner_then = _K.general_build(
            ctx.own_by_member, members.spec.member_topics, members.topics_by_name, ctx.id_rank_list, starts,
            topic_hash, ctx.generations, ctx.owned_lists, None if members.leader_order is None else members.leader_list)
        self.moved = moved, stamps
        if thrown >= 0:
            self.prev_member, self.prev_gen = self._prev_assignment()  # type: ignore[assignment]
            self._throw_fixed_prev(thrown, owner_then)

    def _fix_prev(self, prev_owner: list[int], active: list[int]) -> list[int]:  # type: ignore[override]
        fixed = [True] * self.ctx.num_members  # flags: cheaper than a set of the members in currentAssignment
        for m in active:
            fixed[m] = False
        self.prev_owner = prev = [_FIXED_PREV if m >= 0 and fixed[m] else m for m in prev_owner]  # type: ignore[assignment]
        return prev

    def lists(self) -> tuple[list[int], list[int], list[int]]:
        return _ints(self.owner)[:], _ints(self.sizes)[:], _ints(self.max_size)

    def scan(self, partitions: list[int]) -> tuple[list[int], list[tuple[int, int, int]], list[int]]:  # type: ignore[override]
        prev = _ints(self.prev_owner)
        return partitions, _list_runs(partitions, self.ptopic), [j for j, p in enumerate(partitions) if prev[p] != -1]

    def set_moved(self, moved: list[int], owners: list[int], stamps: list[int]) -> None:
        owner = _ints(self.owner)
        for i in range(len(moved)):  # an index loop: mypyc runs a `zip(strict=)` generically
            owner[moved[i]] = owners[i]
        self.moved = moved, stamps

    def owners(self, leader_order: np.ndarray | None) -> np.ndarray:
        if self.member_codes is not None:  # the kernel's, mapped as `leader_order` maps (`_Members.leader_list`)
            return np.frombuffer(self.member_codes, dtype=np.int32)
        return _owner_array(_ints(self.owner), self.ctx.members if leader_order is not None else None,
                            self.ctx.num_members)

    def _stamps(self) -> list[int]:
        """Each partition's stamp as the steps gave them: the kept ones in claim order (`_keep_owned`), then
        the unassigned ones handed out (`_assign_unassigned`: the others), then the moved ones (`set_moved`)."""
        ptopic, topic_flags = self.ptopic, self.ctx.members.topic_flags
        stamp = [0] * self.ctx.num_partitions
        kept = [False] * self.ctx.num_partitions
        at = 0
        for m, ids in enumerate(self.ctx.own_by_member):
            subscribes = topic_flags[m]
            for p in ids:
                if subscribes[ptopic[p]]:
                    stamp[p] = at
                    kept[p] = True
                    at += 1
        handed = [p for p in _ints(self.sorted_all) if not kept[p]]
        topic_subs = cast("list[list[int]]", self.topic_subs)
        for t, first, end in _list_runs(handed, ptopic):
            if topic_subs[t]:
                for p in handed[first:end]:
                    stamp[p] = at
                    at += 1
        moved, stamps = self.moved
        for i in range(len(moved)):
            stamp[moved[i]] = stamps[i]
        return stamp

    def result(self) -> list[np.ndarray]:
        if self.codes is None:
            owner = _ints(self.owner)
        else:
            owner = np.frombuffer(self.codes, dtype=np.int32).tolist()
            self._read_tables()  # for `_stamps`
        stamp = self._stamps()
        lists: list[list[int]] = [[] for _ in range(self.ctx.num_members)]
        for p in sorted((p for p, m in enumerate(owner) if m >= 0), key=stamp.__getitem__):
            lists[owner[p]].append(p)
        return [np.array(ids, dtype=np.int64) for ids in lists]


def _list_runs(ids: list[int], partition_topic: list[int]) -> list[tuple[int, int, int]]:
    """`_topic_runs` of a list: `ids` cut where their topic changes, (topic, first position, end position)."""
    runs: list[tuple[int, int, int]] = []
    if not ids:
        return runs
    first, t = 0, partition_topic[ids[0]]
    for j, p in enumerate(ids):
        if partition_topic[p] != t:
            runs.append((t, first, j))
            first, t = j, partition_topic[p]
    runs.append((t, first, len(ids)))
    return runs


def _ints(values: np.ndarray | list[int]) -> list[int]:
    """A `_SmallGeneralBuilder` list declared as an array by `_GeneralBuilder` (a checked cast for mypyc)."""
    return cast("list[int]", values)


class _Reassignment:
    """Java's `performReassignments` (its passes and moves, `reassignPartition`, `processPartitionMovement`)
    and the `isBalanced` it asks before each partition, on Python lists for every group size: a move
    changes two members' sizes, which no numpy call would pay back, and the steps that scale with the
    group are vectorised setup. A move costs in proportion to the topics of the two members involved;
    a pass looks only at the partitions that can move (see `_pass`).

    `isBalanced` (post KAFKA-15106) is false iff some member of `currentAssignment` whose size is not
    its maximum (`getMaxAssignmentSize`) subscribes to a topic a partition of which is held by a member
    with 2+ more. Only topics with two or more subscribers can break it (a topic's only subscriber holds
    all of it and no move touches it), and every subscriber of those is in `currentAssignment` (it lacks a
    partition of the topic or holds one that can move); so per movable topic it compares the largest
    holder (`most`) with the least subscriber not at its maximum. This is kept move by move: per topic,
    the least subscriber size and how many subscribers are at it (`least`, `n_least`), the largest holder
    size and how many holders are at it (`most`, `n_most`), how many subscribers are at their maximum
    (`n_full`, usually 0: then the least subscriber is the one to compare), and the set of topics that
    break balance (`unbalanced`). A move shifts each topic of the two members by one size step, which
    mostly leaves these alone (a comparison per topic). When the only member at a topic's extreme moves
    off it, the new extreme is that member's new size, shared by an unknown number: the count is then
    -1 until a later move needs it; `most` counts it again from the topic's holders, `least` does without
    it and looks whether a subscriber is still at the old size (`at_size` counts members per size, which
    `_most_count` reads). The maximum test is
    Java's own: a member handed back a partition of a topic it no longer subscribes to can sit at its
    maximum without holding all it could get, or go above it.

    `least` (per topic, the least size over all its subscribers) also answers the move loop's own
    "is there a better-suited consumer": one with 2+ less than the partition's owner.

    Holdings are kept both ways: per topic its holders with the partitions each holds (`holders`), per
    member the topics it holds (`held`, walked for `most`). A small group counts them all up front; a big
    one indexes them with numpy and builds only those of the topics and members moves touch.

    Moves work on copies: `keep` writes them back, otherwise Java's revert rule undid them. Counters in
    lists are updated as `x[i] = x[i] + 1`: mypyc compiles `x[i] += 1` to a generic `PyNumber` call."""

    def __init__(
        self, builder: _GeneralBuilder, movable_all: np.ndarray | list[int], active: list[int], prev: list[int]
    ) -> None:
        ctx = builder.ctx
        spec = ctx.spec
        self.b = builder
        self.active = active  # Java's currentAssignment: members not set aside as fixed
        starts, _, topic_hash = ctx.members.topic_lists
        self.movements = _PartitionMovements(starts, topic_hash, ctx.num_members)
        self.owner, self.sizes, self.max_size = builder.lists()
        self.prev = prev  # prevAssignment owner per global id (-1: none, `_FIXED_PREV`)
        self.stamp: dict[int, int] = {}  # moved partition -> its place in Java's lists (appended last)
        self.next_stamp = builder.next_stamp
        n_topics = len(spec.topic_names)
        # subscribers in member id order (the least loaded by (size, id) is the first one at the least size),
        # and the movable topics each member subscribes to
        topics, self.subs, self.movable_of = ctx.members.movable_tables
        self.holders: dict[int, dict[int, int]] = {}  # topic -> holder -> partitions held
        # member -> movable topics held (None: not built yet); lists, which mypyc iterates natively (a set
        # goes through Python's iterator protocol)
        self.held: list[list[int] | None] = [None] * len(self.sizes)
        if len(movable_all) > _INDEX_HOLDINGS:
            self._index_holdings(movable_all)  # type: ignore[arg-type]  # numpy's: small groups index nothing
        else:
            self._count_holdings(topics)
        self.n_full = [0] * n_topics
        sizes, max_size = self.sizes, self.max_size
        for m in range(len(sizes)):  # an index loop: mypyc runs a `zip(strict=)` generically
            if sizes[m] == max_size[m]:
                for t in self.movable_of[m]:
                    self.n_full[t] = self.n_full[t] + 1
        self.unbalanced = {t for t in topics if self._breaks(t)}
        # how many members are at each size: a move never raises the largest size (its target has 2+ less
        # than some member), so the list never grows; that size found by a loop (`max` is a generic call)
        top = 0
        for size in sizes:
            if size > top:
                top = size
        self.at_size = [0] * (top + 1)
        for size in sizes:
            self.at_size[size] = self.at_size[size] + 1

    def _count_holdings(self, topics: list[int]) -> None:
        """Holders, largest holders and least subscribers of every movable topic, and every member's held
        topics, counted over Python lists (a small group: cheaper than numpy's calls)."""
        starts, counts, _ = self.b.ctx.members.topic_lists
        owner, sizes, subs = self.owner, self.sizes, self.subs
        n_topics = len(counts)
        self.most, self.n_most = [0] * n_topics, [0] * n_topics
        self.least, self.n_least = [0] * n_topics, [0] * n_topics
        held: list[list[int]] = [[] for _ in sizes]
        self.held = held  # type: ignore[assignment]  # all built
        count = [0] * len(sizes)  # counted in a list, then moved to the dict in first-holding order
        # extremes kept in the loops (no list per topic for `max`/`min` and `count`)
        for t in topics:
            first = starts[t]
            order: list[int] = []  # the topic's holders in first-holding order: one pass over its partitions
            for p in range(first, first + counts[t]):  # all assigned: the topic has subscribers
                m = owner[p]
                n = count[m]
                if not n:
                    order.append(m)
                count[m] = n + 1
            holders: dict[int, int] = {}
            high, n_high = -1, 0
            for m in order:
                holders[m] = count[m]
                count[m] = 0
                held[m].append(t)
                size = sizes[m]
                if size > high:
                    high, n_high = size, 1
                elif size == high:
                    n_high += 1
            self.holders[t] = holders
            self.most[t], self.n_most[t] = high, n_high
            ms = subs[t]
            low = sizes[ms[0]]
            n_low = 0
            for m in ms:
                size = sizes[m]
                if size < low:
                    low, n_low = size, 1
                elif size == low:
                    n_low += 1
            self.least[t], self.n_least[t] = low, n_low

    def _index_holdings(self, movable_all: np.ndarray) -> None:
        """Largest holders of every movable topic with numpy, and the (topic, holder) pairs of the movable
        partitions (all assigned) with the partitions each holds, in topic then member order and as each
        member's topics: `_holders` and `_held` build from them only the topics and members moves touch
        (a big group's move touches two members of hundreds of topics each, which a dict per topic looked up
        per member would cost more than all the moves)."""
        b = self.b
        n_topics, n_members = len(b.ctx.spec.topic_names), b.ctx.num_members
        codes = np.sort(b.ctx.partition_topic[movable_all].astype(np.int64) * n_members + b.owner[movable_all])
        first = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        pair_topic, pair_member = np.divmod(codes[first], n_members)
        self.pair_member, self.pair_count = pair_member, np.diff(first, append=codes.size)
        pair_at = np.searchsorted(pair_topic, np.arange(n_topics + 1))
        self.pair_at: list[int] = pair_at.tolist()
        by_member = np.sort(pair_member * n_topics + pair_topic)
        self.held_flat: list[int] = (by_member % n_topics).tolist()
        self.held_at: list[int] = np.searchsorted(by_member, np.arange(n_members + 1) * n_topics).tolist()
        movable = b.num_subs >= 2
        topics = np.flatnonzero(movable)
        self.most, self.n_most = _extremes(np.maximum, b.sizes[pair_member], pair_topic, topics, n_topics)
        movable_sub = np.repeat(movable, b.num_subs)
        sub_topic = np.repeat(np.arange(n_topics), b.num_subs)[movable_sub]
        sub_sizes = b.sizes[b.sub_by_topic[movable_sub]]
        self.least, self.n_least = _extremes(np.minimum, sub_sizes, sub_topic, topics, n_topics)

    def _breaks(self, t: int) -> bool:
        """Does topic t break `isBalanced`: a holder with 2+ more than a subscriber not at its maximum?"""
        most = self.most[t]
        if most <= self.least[t] + 1:
            return False
        if not self.n_full[t]:
            return True
        sizes, top = self.sizes, self.max_size
        low = most  # the least subscriber size not at its maximum (a loop: `min` would make a generator)
        for m in self.subs[t]:
            size = sizes[m]
            if size < low and size != top[m]:
                low = size
        return most > low + 1

    def _holders(self, t: int) -> dict[int, int]:
        holders = self.holders.get(t)
        if holders is None:  # no partition of t has moved so far: its holders are the ones before any move
            a, b = self.pair_at[t], self.pair_at[t + 1]
            members, counts = self.pair_member[a:b].tolist(), self.pair_count[a:b].tolist()
            holders = self.holders[t] = dict(zip(members, counts, strict=True))
        return holders

    def _held(self, m: int) -> list[int]:
        held = self.held[m]
        if held is None:  # untouched so far: its holdings are the ones before any move
            held = self.held[m] = self.held_flat[self.held_at[m] : self.held_at[m + 1]]
        return held

    def perform(self, partitions: np.ndarray | list[int]) -> bool:
        """Java's `performReassignments`: passes over `partitions` until balanced or a pass moves nothing,
        cut short when a pass would start from a state an earlier pass started from (Java would repeat
        those passes forever, see the module docstring). The movement records and their `HashSet` orders
        are that state: owners are the ones before the first pass plus the recorded net moves. Balanced
        already, the first pass stops at its first partition (most calls: the second `perform` of a build
        usually starts where the first one balanced the group), so nothing needs setting up."""
        if not len(partitions) or not self.unbalanced:
            return False
        parts, runs, with_prev = self.b.scan(partitions)  # type: ignore[arg-type]
        performed = False
        seen = {self._state()}
        while self._pass(parts, runs, with_prev):
            performed = True
            if not self.unbalanced:
                break  # the next pass would stop at its first partition
            state = self._state()
            if state in seen:
                break
            seen.add(state)
        return performed

    def _state(self) -> tuple[tuple[int, int, int, tuple[int, ...]], ...]:
        return self.movements.order_key()

    def _pass(self, parts: list[int], runs: list[tuple[int, int, int]], with_prev: list[int]) -> bool:
        """One pass of Java's loop: before each partition `isBalanced`, then back to its prevAssignment
        owner if that one has 2+ less, else to the least loaded subscriber if some subscriber has 2+ less.
        While no holder of a topic has 2+ more than its least subscriber, only partitions with a
        prevAssignment entry (`with_prev`, positions in `parts`) can move: the others are not looked at."""
        least, most, unbalanced = self.least, self.most, self.unbalanced
        modified = False
        for t, i, end in runs:
            while i < end and unbalanced:
                limit = least[t] + 1
                target = -1
                # index loops (not one loop over an `Iterable`): mypyc compiles them to native C loops
                if most[t] > limit:
                    for j in range(i, end):
                        target = self._target(parts[j], t, limit)
                        if target >= 0:
                            break
                elif with_prev:
                    for w in range(bisect_left(with_prev, i), bisect_left(with_prev, end)):
                        j = with_prev[w]
                        target = self._target(parts[j], t, limit)
                        if target >= 0:
                            break
                if target < 0:
                    break
                self._reassign(parts[j], t, target)
                modified = True
                i = j + 1
            if not unbalanced:
                break
        return modified

    def _target(self, p: int, t: int, limit: int) -> int:
        """Where the pass moves partition p of topic t (-1: nowhere): back to its prevAssignment owner if that
        one has 2+ less, else to the first subscriber at the least size `limit - 1` if p's owner has more
        than `limit`."""
        sizes, owner = self.sizes, self.owner
        size = sizes[owner[p]]
        back = self.prev[p]
        if back != -1:
            if back == _FIXED_PREV:
                self.b._throw_fixed_prev(p, owner[p])
            if size > sizes[back] + 1:
                return back
        if size > limit:
            for target in self.subs[t]:  # the first at the least size (`least[t]`) in member id order
                if sizes[target] == limit - 1:
                    return target
        return -1

    def _reassign(self, p: int, t: int, target: int) -> None:
        """Java's `reassignPartition`: the partition actually moved can be another one of the topic (see
        `_PartitionMovements.actual_partition`); then `processPartitionMovement`."""
        owner = self.owner
        q = self.movements.actual_partition(p, t, owner[p], target)
        old = owner[q]
        self.movements.move(q, t, old, target)
        owner[q] = target
        self.stamp[q] = self.next_stamp
        self.next_stamp += 1
        self._moved(old, target, t)

    def _moved(self, old: int, new: int, t: int) -> None:
        """Bring the `isBalanced` state up to date: a partition of topic t went from `old` to `new` (sizes
        not yet changed). Sizes can be in any order (the partition moved need not be the one looked at).
        `least` and `most` stay exact; a count is exact or unknown (-1), which a count that drops to 0
        leaves (the moved member is then the new extreme) until a later move needs it (for `n_least`:
        whether a subscriber is still at the least size). Only topics whose least subscriber, largest
        holder or at-maximum subscribers changed, or with a subscriber at its maximum, are judged again."""
        sizes = self.sizes
        so, sn = sizes[old], sizes[new]
        down, up = so - 1, sn + 1
        held = self.held
        held_old = held[old]
        if held_old is None:
            held_old = self._held(old)
        held_new = held[new]
        if held_new is None:
            held_new = self._held(new)
        most, n_most = self.most, self.n_most
        changed = [t]  # may repeat a topic: judging one is idempotent, cheaper than a set
        holders = self.holders.get(t)
        if holders is None:
            holders = self._holders(t)
        recount = False
        n = holders[old]
        if n == 1:  # old leaves the topic's holders
            held_old.remove(t)
            if so == most[t]:
                recount = self._most_count(t, so) == 1
                n_most[t] = n_most[t] - 1
            del holders[old]
        else:
            holders[old] = n - 1
        joined = holders.get(new)
        if joined:
            holders[new] = joined + 1
        else:  # new joins them at its size, and moves up with its other topics below
            holders[new] = 1
            held_new.append(t)
            if sn > most[t]:
                most[t], n_most[t] = sn, 1
            elif sn == most[t] and n_most[t] >= 0:
                n_most[t] = n_most[t] + 1
        if recount:
            most[t], n_most[t] = max(map(sizes.__getitem__, holders)), -1
        for k in held_old:
            if so == most[k]:
                n = n_most[k]
                if n < 0:
                    n = self._most_count(k, so)
                if n == 1:
                    most[k], n_most[k] = down, -1
                    changed.append(k)
                else:
                    n_most[k] = n - 1
        sizes[old] = down
        for k in held_new:
            if sn == most[k]:
                most[k], n_most[k] = up, 1
                changed.append(k)
            elif up == most[k] and n_most[k] > 0:
                n_most[k] = n_most[k] + 1
        sizes[new] = up
        at_size = self.at_size
        at_size[so] = at_size[so] - 1
        at_size[sn] = at_size[sn] - 1
        at_size[down] = at_size[down] + 1
        at_size[up] = at_size[up] + 1
        least, n_least, n_full, subs = self.least, self.n_least, self.n_full, self.subs
        old_topics, new_topics = self.movable_of[old], self.movable_of[new]
        for k in old_topics:
            if so == least[k]:
                least[k], n_least[k] = down, 1
                changed.append(k)
            elif down == least[k] and n_least[k] > 0:
                n_least[k] = n_least[k] + 1
            if n_full[k]:  # the least subscriber not at its maximum may have changed
                changed.append(k)
        for k in new_topics:
            if sn == least[k]:
                n = n_least[k]
                if n > 1:
                    n_least[k] = n - 1
                elif n == 1 or not any(sizes[m] == sn for m in subs[k]):  # new was the last there
                    least[k], n_least[k] = up, -1
                    changed.append(k)
            if n_full[k]:
                changed.append(k)
        top = self.max_size[old]
        if so == top or down == top:  # old leaves or reaches its maximum
            step = -1 if so == top else 1
            for k in old_topics:
                n_full[k] = n_full[k] + step
            changed.extend(old_topics)
        top = self.max_size[new]
        if sn == top or up == top:
            step = -1 if sn == top else 1
            for k in new_topics:
                n_full[k] = n_full[k] + step
            changed.extend(new_topics)
        unbalanced = self.unbalanced
        for k in changed:  # each topic judged once, on the final state
            if most[k] > least[k] + 1 and (not n_full[k] or self._breaks(k)):  # `_breaks`, its first tests inline
                unbalanced.add(k)
            else:
                unbalanced.discard(k)

    def _most_count(self, t: int, size: int) -> int:
        """How many holders of t are at its largest size `size`, a holder's size before the move (counted if
        unknown, unless that holder is the only member at it: so on 93 % of the counts on the bench log)."""
        n = self.n_most[t]
        if n < 0:
            if self.at_size[size] == 1:
                n = self.n_most[t] = 1
            else:
                n = self.n_most[t] = list(map(self.sizes.__getitem__, self._holders(t))).count(size)
        return n

    def balance_score(self) -> int:
        return _balance_score([self.sizes[m] for m in self.active])

    def keep(self) -> None:
        """Write the moves back to the builder."""
        if not self.stamp:
            return
        b = self.b
        moved = list(self.stamp)
        b.set_moved(moved, [self.owner[q] for q in moved], list(self.stamp.values()))
        b.sizes[:] = self.sizes
        b.next_stamp = self.next_stamp
