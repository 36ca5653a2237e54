"""What the sticky engine reads: the tables it derives from a group's topics and members alone (`GroupTables`,
kept for every round on the same topics and members), and one round's claims after Kafka's pre-pass
(`RoundContext`: unknown topics dropped, conflicting claims resolved by generation, phantom claims)."""

from __future__ import annotations

import itertools
import sys

import numpy as np

from assignors.javaorder import java_string_hash, java_string_key
from assignors.model import GroupSpec, rack_aware_enabled, topic_blocks
from assignors.spec import INT32, int32_codes

EMPTY = np.zeros(0, dtype=np.int64)
# `GroupTables.small`: claims read as lists, and the constrained builder's list steps, up to this many partitions
# (random groups of 10-24 members: even with the numpy steps at about 250 partitions, 20-30 % slower at 500,
# 20-30 % faster at 60-120)
_SMALL_GROUP = 200
# `GroupTables.subscription_tables`: subscribers per topic, topics per member, maximum sizes, `sortedAllPartitions`,
# each partition's topic
SubscriptionTables = tuple[list[list[int]], list[list[int]], list[int], list[int], list[int]]
NOBODY = (-1).to_bytes(4, sys.byteorder, signed=True)  # the int32 owner code of nobody (`owner_array`)


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


def owner_array(owner: list[int], members: GroupTables | None, num_members: int) -> np.ndarray:
    """int32 `EngineResult.owners` from a list of member indices (-1: nobody), each mapped to its
    `members.leader_list` entry (None: kept). `np.array` of a list of ints costs more than an
    element (dtype discovery, then a conversion per item), `bytes` of one about 75: the owners' int32 codes
    (`owner_codes`) joined cost a list read and a copy of 4 bytes each, and `frombuffer` takes them as they are
    (read-only, as a result's owners are; its dtype given by position: by keyword, it costs twice as much)."""
    codes = owner_codes(members, num_members)
    return np.frombuffer(b"".join([codes[m] if m >= 0 else NOBODY for m in owner]), INT32)


def owner_codes(members: GroupTables | None, num_members: int) -> list[bytes]:
    """Per builder position, the int32 bytes of its member index: `members.leader_codes` (None: the builder's
    members are in member order, `int32_codes`; shared, longer than `num_members`)."""
    return int32_codes(num_members) if members is None else members.leader_codes


class GroupTables:
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
        # a round's claims as lists below this size (rack logic: as arrays): numpy's per-call overhead dominates
        self.small = self.num_partitions <= _SMALL_GROUP and not self.rack_on
        # the constrained builder's list steps (the spec) up to this size, rack logic included; numpy's above
        self.listed_constrained = self.num_partitions <= _SMALL_GROUP
        # the builders' tables, made on first use by the properties below (None until then; see `EngineResult`)
        self._topic_name_pos: np.ndarray | None = None
        self._name_ordered: np.ndarray | None = None
        self._subscription_tables: SubscriptionTables | None = None
        self._movable_tables: tuple[list[int], list[list[int]], list[list[int]]] | None = None
        self._topic_flags: list[list[bool]] | None = None
        self._topic_lists: tuple[list[int], list[int], list[int]] | None = None
        self._leader_codes: list[bytes] | None = None
        self._rack_lists: tuple[list[int], list[int], list[bool]] | None = None

    def in_leader_order(self, spec: GroupSpec) -> GroupSpec:
        """A round of these topics and members (`spec`, in member order) in the leader's order."""
        order = self.leader_order
        if order is None:
            return spec
        owned, lists = spec.owned_in(self.leader_list)
        return self.spec.for_round(owned, spec.generations_in(self.leader_list), lists, spec.owned_disjoint)

    @property
    def leader_codes(self) -> list[bytes]:
        """`leader_list` as int32 bytes per builder position, for `owner_array` (made on first use)."""
        if self._leader_codes is None:
            codes = int32_codes(self.num_members)
            self._leader_codes = [codes[m] for m in self.leader_list]
        return self._leader_codes

    @property
    def rack_lists(self) -> tuple[list[int], list[int], list[bool]]:
        """Rack logic's `partition_bits`, `member_bits` and `has_rack` as lists, for the general builder (empty
        without rack logic; made on first use)."""
        if self._rack_lists is None:
            pbits, mbits, has_rack = self.partition_bits, self.member_bits, self.has_rack
            if pbits is None or mbits is None or has_rack is None:
                self._rack_lists = [], [], []
            else:
                self._rack_lists = pbits.tolist(), mbits.tolist(), has_rack.tolist()
        return self._rack_lists

    @property
    def subscribed_topic(self) -> np.ndarray:
        """Per topic: does somebody subscribe to it (`subscribed_list` as an array, for the numpy steps)."""
        if self._subscribed_topic is None:
            self._subscribed_topic = np.array(self.subscribed_list, dtype=bool)
        return self._subscribed_topic

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
    def subscription_tables(self) -> SubscriptionTables:
        """The general builder's tables: per topic its subscribers in member id order (Java's
        `topic2AllPotentialConsumers`, ordered for `sortedCurrentSubscriptions`' ties), per member its topics
        (`consumer2AllPotentialTopics`), each member's maximum size (`getMaxAssignmentSize`), all subscribed
        partitions with topics by (subscriber count, name) (`sortedAllPartitions`); and each partition's topic."""
        if self._subscription_tables is None:
            self._subscription_tables = self._make_subscription_tables()
        return self._subscription_tables

    def _make_subscription_tables(self) -> SubscriptionTables:
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
        """Per member, per topic: does it subscribe? `GeneralAssignmentBuilder._assign_owned` asks it per owned
        partition, where `in` the member's topics compared them one by one. Members sharing a subscription share
        its flags."""
        if self._topic_flags is None:
            n_topics = len(self.spec.topic_names)
            shared: dict[int, list[bool]] = {}
            flags: list[list[bool]] = []
            for topics in self.subscription_tables[1]:
                row = shared.get(id(topics))
                if row is None:
                    row = shared[id(topics)] = [False] * n_topics
                    for t in topics:
                        row[t] = True
                flags.append(row)
            self._topic_flags = flags
        return self._topic_flags

    @property
    def topic_lists(self) -> tuple[list[int], list[int], list[int]]:
        """Per topic its first global id (and the end), its partition count, and its name's Java hash: what
        `Reassignment` reads as lists on every call that moves."""
        if self._topic_lists is None:
            spec = self.spec
            self._topic_lists = (spec.topic_start.tolist(), spec.topic_sizes.tolist(),
                                 [java_string_hash(n) for n in spec.topic_names])
        return self._topic_lists

    @property
    def movable_tables(self) -> tuple[list[int], list[list[int]], list[list[int]]]:
        """`Reassignment`'s tables (see there): the topics with two or more subscribers, per topic its
        subscribers in member id order, and per member its movable topics, ascending."""
        if self._movable_tables is None:
            self._movable_tables = self._make_movable_tables()
        return self._movable_tables

    def _make_movable_tables(self) -> tuple[list[int], list[list[int]], list[list[int]]]:
        tables = self.subscription_tables
        subs: list[list[int]] = [ms if len(ms) >= 2 else [] for ms in tables[0]]
        movable = [sorted([t for t in topics if subs[t]]) for topics in tables[1]]  # no generator
        return [t for t, ms in enumerate(subs) if ms], subs, movable


class RoundContext:
    """Per-call facts shared by both builders: the round's owned partitions after the pre-pass, and its
    members' `GroupTables` (whose facts it carries under the same names)."""

    def __init__(self, spec: GroupSpec, members: GroupTables, generations: list[int]) -> None:
        self.spec = spec
        self.members = members
        # the claims kept by the pre-pass: flat arrays (None: made from the lists on first use) and one list per
        # member (None: made from the arrays on first use)
        self._own_ids: np.ndarray | None = None
        self._own_members: np.ndarray | None = None
        self._own_by_member: list[list[int]] | None = None
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

    def _recover_owned(self) -> None:
        """Owned partitions after dropping unknown topics and resolving conflicting claims, as flat
        arrays in member order then claim order (`own_ids`, `own_members`), or on small groups as one list per
        member (`own_by_member`); either is made from the other if asked for."""
        spec = self.spec
        self.multi: np.ndarray | None = None
        small = self.members.small
        by_member: list[list[int]] = spec.owned_lists if small else []  # as given, or made once by the memo key
        lengths = [len(ids) for ids in by_member] if small else [ids.size for ids in spec.owned]
        if not any(lengths):
            self._own_ids, self._own_members = EMPTY, EMPTY
            self._own_by_member = [[] for _ in lengths]
            return
        if small:  # plain Python over a few dozen claims
            if not self.members.all_subscribed:
                topic, subscribed = self.partition_topic.tolist(), self.subscribed_topic.tolist()
                by_member = [[p for p in ids if subscribed[topic[p]]] for ids in by_member]
            if spec.owned_disjoint or not _any_repeated(by_member, self.num_partitions):  # no conflicting claims
                self._own_by_member = by_member
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

    @property
    def own_by_member(self) -> list[list[int]]:
        """Per member, its claims kept by the pre-pass, in claim order."""
        if self._own_by_member is None:
            ids, members = self.own_ids, self.own_members
            flat, bounds = ids.tolist(), np.searchsorted(members, np.arange(self.num_members + 1)).tolist()
            self._own_by_member = [flat[a:b] for a, b in itertools.pairwise(bounds)]
        return self._own_by_member

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

    def claimants(self) -> tuple[list[int], bool]:
        """Per global id, the member whose claim on it survived the pre-pass (-1: none; one at most), and whether
        any did."""
        claimant = [-1] * self.num_partitions
        if self._own_ids is None:  # small groups' claims, as lists
            own = self.own_by_member
            claimed = False
            for m in range(len(own)):
                for p in own[m]:
                    claimant[p] = m
                    claimed = True
            return claimant, claimed
        ids, members = self.own_ids, self.own_members
        if not ids.size:
            return claimant, False
        at = np.full(self.num_partitions, -1, dtype=np.int64)
        at[ids] = members
        return at.tolist(), True

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
