"""Kafka's `GeneralAssignmentBuilder`: subscriptions differ."""

from __future__ import annotations

import heapq
import itertools
from typing import cast

import numpy as np

from assignors.compiled import kernel
from assignors.errors import KafkaAssignorError
from assignors.sticky_engine.balance import FIXED_PREV, Reassignment, balance_score
from assignors.sticky_engine.inputs import EMPTY, RoundContext, owner_array

_HEAP_FILL = 64  # `GeneralAssignmentBuilder._water_fill` hands out up to this many partitions one at a time
_SCAN_FILL = 32  # ... by a scan of up to this many candidates (`_heap_fill`), above by a heap
_K = kernel("assignors.reassign_kernel")  # `SmallGeneralAssignmentBuilder.build` in C (None: the Python steps run)


def _topic_runs(ids: np.ndarray, partition_topic: np.ndarray) -> list[tuple[int, int, int]]:
    """`ids` (not empty) cut where their topic changes: (topic, first position, end position) per run."""
    topic = partition_topic[ids]
    bounds = [0, *(np.flatnonzero(topic[1:] != topic[:-1]) + 1).tolist(), ids.size]
    return list(zip(topic[bounds[:-1]].tolist(), bounds, bounds[1:], strict=False))


def _heap_fill(n: int, cands: list[int], sizes: list[int], rank: list[int]) -> tuple[list[int], list[int]]:
    """`GeneralAssignmentBuilder._water_fill` one partition at a time: the receivers of n partitions, each the least
    loaded of `cands` (their `sizes`) by (size, member id `rank`), and the candidates' final sizes. (size,
    rank) is one int `size * len(rank) + rank` (ranks are distinct); up to `_SCAN_FILL` candidates a scan
    finds the least (native loops), more take a heap of `key * len(cands) + position`."""
    r, c = len(rank), len(cands)
    keys = [sizes[i] * r + rank[cands[i]] for i in range(c)]
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


class GeneralAssignmentBuilder:
    """Kafka's general assignment over numpy arrays: `owner`, `stamp` (place in the owner's list) per global
    id, `sizes` per member. `build` is the flow; the steps it calls are written for this representation
    and again for `SmallGeneralAssignmentBuilder`'s lists."""

    def __init__(self, ctx: RoundContext) -> None:
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
        """Whether `isBalanced` holds before any move, which `SmallGeneralAssignmentBuilder` tells apart cheaply; here
        `Reassignment.unbalanced` answers it (its setup is vectorised)."""
        return False

    def _fix_prev(self, prev_owner: np.ndarray, active: list[int]) -> list[int]:
        """`prev_owner` with `FIXED_PREV` for owners outside currentAssignment, kept (`scan` reads it) and
        as a list."""
        fixed = np.ones(self.ctx.num_members, dtype=bool)
        fixed[active] = False
        ids = np.flatnonzero(prev_owner >= 0)
        self.prev_owner = prev = prev_owner.copy()
        prev[ids[fixed[prev[ids]]]] = FIXED_PREV
        return prev.tolist()

    def lists(self) -> tuple[list[int], list[int], list[int]]:
        """Fresh lists of `owner` and `sizes`, and `max_size` as a list: `Reassignment` moves on copies."""
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
        return np.concatenate(left) if left else EMPTY

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
        # currentAssignment, so merely looking at such a partition throws (see `FIXED_PREV`)
        prev_owner, prev_gen = self._prev_assignment()  # KIP-341's prevAssignment: only the move loop reads it
        self.prev_member, self.prev_gen = prev_owner, prev_gen
        moves = Reassignment(self, movable_all, active, self._fix_prev(prev_owner, active))
        if not revocation_required:
            moves.perform(self._movable_of(unassigned))
        performed = moves.perform(movable_all)
        # Java's revert rule: a final round of moves that does not lower the balance score is undone
        # (with the moves of the unassigned partitions' round)
        if initializing or not performed or moves.balance_score() < balance_score(active_sizes):
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


class SmallGeneralAssignmentBuilder(GeneralAssignmentBuilder):
    """`GeneralAssignmentBuilder`'s steps on Python lists, for small groups without rack logic (`GroupTables.small`),
    where each numpy call costs more than the loop it replaces (tests/assignors/test_properties.py checks
    that both give the same results). The base class declares `owner`, `sizes` and the tables as arrays: the
    methods read them through `_ints` locals. The stamps (places in
    Java's lists) are not kept per partition: only `result` reads them, and it makes them again (`_stamps`)
    from the order of each step (the streaming state machine reads only the owners). Where the C kernel is
    built, `build` is one call of it (`assignors/reassign_kernel.pyx`) and these lists are not made."""

    def __init__(self, ctx: RoundContext) -> None:
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
        """`subscriber_tables` as lists (each member's topics: `GroupTables.topic_flags`), each partition's topic."""
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
            for i in range(len(cands)):
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
        """`Reassignment`'s initial `not unbalanced` (see there) without its holdings: no movable topic has a
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
        """`GeneralAssignmentBuilder.build` in one call of the C kernel (`assignors/reassign_kernel.pyx`) when built."""
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
        self.prev_owner = prev = [FIXED_PREV if m >= 0 and fixed[m] else m for m in prev_owner]  # type: ignore[assignment]
        return prev

    def lists(self) -> tuple[list[int], list[int], list[int]]:
        return _ints(self.owner)[:], _ints(self.sizes)[:], _ints(self.max_size)

    def scan(self, partitions: list[int]) -> tuple[list[int], list[tuple[int, int, int]], list[int]]:  # type: ignore[override]
        prev = _ints(self.prev_owner)
        return partitions, _list_runs(partitions, self.ptopic), [j for j, p in enumerate(partitions) if prev[p] != -1]

    def set_moved(self, moved: list[int], owners: list[int], stamps: list[int]) -> None:
        owner = _ints(self.owner)
        for i in range(len(moved)):
            owner[moved[i]] = owners[i]
        self.moved = moved, stamps

    def owners(self, leader_order: np.ndarray | None) -> np.ndarray:
        if self.member_codes is not None:  # the kernel's, mapped as `leader_order` maps (`GroupTables.leader_list`)
            return np.frombuffer(self.member_codes, dtype=np.int32)
        return owner_array(_ints(self.owner), self.ctx.members if leader_order is not None else None,
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
    """A `SmallGeneralAssignmentBuilder` list declared as an array by `GeneralAssignmentBuilder` (a checked cast)."""
    return cast("list[int]", values)
