"""Kafka's `GeneralAssignmentBuilder`: subscriptions differ.

The specification, over Python lists indexed by global partition id and member index: what the pure-Python run
runs, and what runs wherever the C kernel (`assignors/reassign_kernel.pyx`, the same steps over C arrays) is not
built or does not apply (rack logic). `run_engine` selects between them; tests/assignors/test_general_kernel.py runs
both side by side. The move loop of step 6 is `assignors.sticky_engine.balance`.
"""

from __future__ import annotations

import heapq
from types import ModuleType

import numpy as np

from assignors.spec import INT32
from assignors.sticky_engine.balance import Reassignment, balance_score, fixed_prev_error, topic_runs
from assignors.sticky_engine.inputs import RoundContext, owner_array

_SCAN_FILL = 32  # `_heap_fill` finds the least of up to this many candidates by a scan, of more by a heap


class GeneralOutcome:
    """A general build's result: per global id its owner (int32, -1: nobody) with the members in the builder's
    order and in member order, and its place in its owner's list (`stamp`: Kafka's lists are in stamp order)."""

    def __init__(self, owner: np.ndarray, member_owner: np.ndarray, stamp: np.ndarray) -> None:
        self.owner = owner
        self.member_owner = member_owner
        self.stamp = stamp

    def lists(self, num_members: int) -> list[np.ndarray]:
        """Per member (in the builder's order): its partitions in Kafka's list order."""
        ids = np.flatnonzero(self.owner >= 0)
        owners = self.owner[ids]
        ids = ids[np.lexsort((self.stamp[ids], owners))]
        bounds = np.cumsum(np.bincount(owners, minlength=num_members)).tolist()
        return [ids[a:b] for a, b in zip([0, *bounds[:-1]], bounds, strict=True)]


class GeneralAssignmentBuilder:
    """Kafka's `GeneralAssignmentBuilder.build`, step by step (`build`), each partition's owner (`owner`, -1:
    none) and place in its owner's list (`stamp`, in the order Java appends) and each member's size (`sizes`):

    1. `prepopulateCurrentAssignments`: KIP-341's prevAssignment, per partition the claimant of the newest
       generation older than the group's newest (`prev_assignment`; only step 6 reads it);
    2. `assignOwnedPartitions`: each member keeps its claims, in claim order, unless it no longer subscribes
       to the topic or (rack logic, `racksMismatch`) has a rack no replica is on; either makes
       `revocationRequired`;
    3. `getUnassignedPartitions`: the rest of `sortedAllPartitions` (topics by (subscriber count, name));
    4. `balance`, its `maybeAssign` with rack matching (rack logic only): each partition to the least loaded
       subscriber by (size, member id) with no rack or a rack one of its replicas is on, if any
       (`_assign_rack_matching`);
    5. ... then `maybeAssign` without: each partition left to the least loaded subscriber, if the topic has
       one (`_assign_plain`);
    6. ... then `canTopicParticipateInReassignment` (two or more subscribers) and
       `canConsumerParticipateInReassignment` (below its maximum, or holding a movable partition) narrow the
       scope (`_movable`), `performReassignments` runs over the unassigned partitions (unless revocation is
       required) then over all movable ones (`Reassignment`), and the revert rule: a round of moves that does
       not lower `getBalanceScore` is undone (`_balance`)."""

    def __init__(self, ctx: RoundContext) -> None:
        self.ctx = ctx
        (self.topic_subs, self.topics_of, self.max_size, self.sorted_all,
         self.ptopic) = ctx.members.subscription_tables
        self.owner = [-1] * ctx.num_partitions
        self.stamp = [0] * ctx.num_partitions
        self.next_stamp = 0
        self.sizes = [0] * ctx.num_members

    def build(self) -> GeneralOutcome:
        """Steps 1 to 6; the result."""
        revocation_required = self._assign_owned()  # step 2
        initializing = not self.next_stamp  # nothing kept: every size is still 0
        owner = self.owner
        unassigned = [p for p in self.sorted_all if owner[p] < 0]  # step 3
        left = self._assign_rack_matching(unassigned) if self.ctx.rack_on else unassigned  # step 4
        self._assign_plain(left)  # step 5
        self._balance(unassigned, revocation_required, initializing)  # step 6
        return self._outcome()

    def _give(self, p: int, m: int) -> None:
        """Java's `currentAssignment.get(m).add(p)`: p goes to the end of m's list."""
        self.owner[p] = m
        self.stamp[p] = self.next_stamp
        self.next_stamp += 1
        self.sizes[m] += 1

    # -- steps 1 to 5 --------------------------------------------------------------------------------

    def _assign_owned(self) -> bool:
        """Step 2; whether revocation is required."""
        ctx = self.ctx
        ptopic, topic_flags = self.ptopic, ctx.members.topic_flags
        rack_on = ctx.rack_on
        pbits, mbits, has_rack = ctx.members.rack_lists
        owner, stamp, sizes = self.owner, self.stamp, self.sizes
        revocation_required = False
        kept = 0
        own = ctx.own_by_member
        for m in range(len(own)):
            subscribes = topic_flags[m]
            rack = mbits[m] if rack_on and has_rack[m] else -1  # its rack's bit (-1: no rack to match)
            for p in own[m]:
                if subscribes[ptopic[p]] and (rack < 0 or pbits[p] & rack):
                    owner[p] = m  # `_give`, in a loop of its own: a call per claim costs
                    stamp[p] = kept
                    kept += 1
                    sizes[m] += 1
                else:
                    revocation_required = True
        self.next_stamp = kept
        return revocation_required

    def _assign_rack_matching(self, unassigned: list[int]) -> list[int]:
        """Step 4; the partitions left for step 5, in order. The least loaded eligible subscriber of each
        partition is the top of a heap per distinct replica-rack set of its topic (entries (size, member id
        rank, member), refreshed lazily: a member's entries go stale when its size grows)."""
        ctx = self.ctx
        rank = ctx.id_rank_list
        pbits, mbits, has_rack = ctx.members.rack_lists
        sizes = self.sizes
        left: list[int] = []
        for t, first, end in topic_runs(unassigned, self.ptopic):
            run = unassigned[first:end]
            cands = self.topic_subs[t]
            heaps: dict[int, list[tuple[int, int, int]]] = {}  # replica-rack set -> its eligible subscribers
            classes_of: dict[int, list[int]] = {}  # member -> the replica-rack sets it is eligible for
            for p in run:
                bits = pbits[p]
                if bits in heaps:
                    continue
                heap = [(sizes[m], rank[m], m) for m in cands if not has_rack[m] or mbits[m] & bits]
                heapq.heapify(heap)
                heaps[bits] = heap
                for _, _, m in heap:
                    classes_of.setdefault(m, []).append(bits)
            for p in run:
                heap = heaps[pbits[p]]
                while heap and heap[0][0] != sizes[heap[0][2]]:
                    heapq.heappop(heap)
                if not heap:
                    left.append(p)
                    continue
                m = heap[0][2]
                self._give(p, m)
                for bits in classes_of[m]:
                    heapq.heappush(heaps[bits], (sizes[m], rank[m], m))
        return left

    def _assign_plain(self, unassigned: list[int]) -> None:
        """Step 5, a topic run at a time (`_heap_fill`)."""
        sizes, rank = self.sizes, self.ctx.id_rank_list
        for t, first, end in topic_runs(unassigned, self.ptopic):
            cands = self.topic_subs[t]
            if not cands:  # Java skips partitions of topics nobody can take
                continue
            got = _heap_fill(end - first, cands, [sizes[m] for m in cands], rank)
            for i in range(len(got)):
                self._give(unassigned[first + i], got[i])

    # -- step 6 --------------------------------------------------------------------------------------

    def _movable(self) -> tuple[list[int], list[int]]:
        """The partitions of topics with two or more subscribers (in `sorted_all` order), and Java's
        currentAssignment once the fixed members are set aside (those at their maximum that hold nothing
        movable)."""
        movable_topic = [len(ms) >= 2 for ms in self.topic_subs]
        ptopic, owner, sizes, max_size = self.ptopic, self.owner, self.sizes, self.max_size
        movable_all = [p for p in self.sorted_all if movable_topic[ptopic[p]]]
        holds_movable = [False] * len(sizes)
        for p in movable_all:
            m = owner[p]
            if m >= 0:
                holds_movable[m] = True
        active = [m for m in range(len(sizes)) if sizes[m] < max_size[m] or holds_movable[m]]
        return movable_all, active

    def _balance(self, unassigned: list[int], revocation_required: bool, initializing: bool) -> None:
        """Step 6 after the `maybeAssign`s. Java hands a partition back to its prevAssignment owner without
        asking whether that member still subscribes to the topic (kept: Kafka's literal result); a "fixed"
        owner is no longer in currentAssignment, so merely looking at such a partition throws
        (`fixed_prev_error`)."""
        movable_all, active = self._movable()
        sizes = self.sizes
        active_sizes = [sizes[m] for m in active]
        if not movable_all or max(active_sizes) - min(active_sizes) <= 1:
            return  # `isBalanced`'s first test holds, and only a move could change that
        prev_owner, prev_gen = prev_assignment(self.ctx)  # step 1
        moves = Reassignment(self.ctx, self.owner, sizes, self.max_size, self.next_stamp, active, prev_owner,
                             prev_gen)
        if not revocation_required:
            movable_topic = [len(ms) >= 2 for ms in self.topic_subs]
            moves.perform([p for p in unassigned if movable_topic[self.ptopic[p]]])
        performed = moves.perform(movable_all)
        # the revert rule (with the moves of the unassigned partitions' round)
        if initializing or not performed or moves.balance_score() < balance_score(active_sizes):
            for q, stamp in moves.stamp.items():
                self.owner[q] = moves.owner[q]
                self.stamp[q] = stamp
            self.sizes = moves.sizes
            self.next_stamp = moves.next_stamp

    def _outcome(self) -> GeneralOutcome:
        members = self.ctx.members
        owner = owner_array(self.owner, None, members.num_members)
        order = members.leader_order
        by_member = owner if order is None else np.where(owner >= 0, order[owner], -1).astype(INT32)
        return GeneralOutcome(owner, by_member, np.array(self.stamp, dtype=np.int64))


def prev_assignment(ctx: RoundContext) -> tuple[list[int], list[int]]:
    """Step 1: per global id, its prevAssignment owner (-1: none) and that owner's generation."""
    gens = ctx.generations
    max_gen = max(gens)
    prev_owner = [-1] * ctx.num_partitions
    prev_gen = [-2] * ctx.num_partitions
    claims = ctx.spec.owned_lists
    for m in range(len(claims)):
        g = gens[m]
        if g < max_gen:
            for p in claims[m]:
                if prev_owner[p] < 0 or g > prev_gen[p]:
                    prev_owner[p], prev_gen[p] = m, g
    return prev_owner, prev_gen


def _heap_fill(n: int, cands: list[int], sizes: list[int], rank: list[int]) -> list[int]:
    """The receivers of n partitions handed out one at a time, each to the least loaded of `cands` (their
    `sizes`) by (size, member id `rank`). (size, rank) is one int `size * len(rank) + rank` (ranks are
    distinct); up to `_SCAN_FILL` candidates a scan finds the least (native loops), more take a heap of
    `key * len(cands) + position`."""
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
            got.append(cands[heap[0] % c])
            heapq.heapreplace(heap, heap[0] + r * c)
    return got


def build_in_kernel(kernel: ModuleType, ctx: RoundContext) -> GeneralOutcome:
    """`GeneralAssignmentBuilder(ctx).build()` in one call of the C kernel (no rack logic)."""
    members = ctx.members
    starts, _, topic_hash = members.topic_lists
    codes, member_codes, stamps, thrown, owner_then = kernel.general_build(
        ctx.own_by_member, members.spec.member_topics, members.topics_by_name, ctx.id_rank_list, starts,
        topic_hash, ctx.generations, ctx.spec.owned_lists,
        None if members.leader_order is None else members.leader_list)
    if thrown >= 0:
        prev_owner, prev_gen = prev_assignment(ctx)
        raise fixed_prev_error(ctx.spec, thrown, owner_then, prev_owner[thrown], prev_gen[thrown])
    return GeneralOutcome(np.frombuffer(codes, INT32), np.frombuffer(member_codes, INT32), np.frombuffer(stamps, INT32))
