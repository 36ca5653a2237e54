"""Kafka's `performReassignments` (with `isBalanced`, `PartitionMovements` and the balance-score revert rule):
the general builder's move loop, for every group size."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from assignors.sticky_engine.general import GeneralAssignmentBuilder

_INDEX_HOLDINGS = 1 << 12  # `Reassignment` indexes holdings with numpy above this many movable partitions
FIXED_PREV = -2  # prevAssignment owner that Java's move loop can no longer look up (NullPointerException)


class JavaHashSet:
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


class PartitionMovements:
    """Java's `PartitionMovements`: net (from -> to) member pairs per topic, used to move a partition
    back instead of creating a 2-cycle. Callers pass each partition's topic along (global id = topic start
    + partition number). A pair is one int `from * num_members + to` (ordered as the tuple would be): no
    tuple to make and hash per move."""

    def __init__(self, start: list[int], topic_hash: list[int], num_members: int) -> None:
        self.start = start  # `GroupTables.topic_lists`
        self.topic_hash = topic_hash
        self.k = num_members
        self.record: dict[int, int] = {}  # partition -> its pair
        self.by_topic: dict[int, dict[int, JavaHashSet]] = {}
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
            s = pairs[pair] = JavaHashSet()
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


def _extremes(
    op: np.ufunc, values: np.ndarray, topic: np.ndarray, topics: np.ndarray, n_topics: int
) -> tuple[list[int], list[int]]:
    """Per topic (lists over all `n_topics`, 0 for those not in `topics`): the largest or least (`op`) of
    `values`, grouped by their `topic` (sorted; every one of `topics` has some), and how many are at it."""
    extreme = np.zeros(n_topics, dtype=np.int64)
    extreme[topics] = op.reduceat(values, np.searchsorted(topic, topics))
    return extreme.tolist(), np.bincount(topic[values == extreme[topic]], minlength=extreme.size).tolist()


def balance_score(sizes: list[int]) -> int:
    """Java's `getBalanceScore` (sum of |a - b| over member pairs), with its int overflow (the sum modulo
    2^32 is the same however Java's int additions wrapped on the way)."""
    n = len(sizes)
    ordered = sorted(sizes)
    score = 0
    for i in range(n):  # a loop: a generator is a generic object when compiled
        score += ordered[i] * (2 * i - n + 1)
    score &= 0xFFFFFFFF
    return score - (1 << 32) if score & 0x80000000 else score


class Reassignment:
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

    Moves work on copies: `keep` writes them back, otherwise Java's revert rule undid them."""

    def __init__(
        self, builder: GeneralAssignmentBuilder, movable_all: np.ndarray | list[int], active: list[int], prev: list[int]
    ) -> None:
        ctx = builder.ctx
        spec = ctx.spec
        self.b = builder
        self.active = active  # Java's currentAssignment: members not set aside as fixed
        starts, _, topic_hash = ctx.members.topic_lists
        self.movements = PartitionMovements(starts, topic_hash, ctx.num_members)
        self.owner, self.sizes, self.max_size = builder.lists()
        self.prev = prev  # prevAssignment owner per global id (-1: none, `FIXED_PREV`)
        self.stamp: dict[int, int] = {}  # moved partition -> its place in Java's lists (appended last)
        self.next_stamp = builder.next_stamp
        n_topics = len(spec.topic_names)
        # subscribers in member id order (the least loaded by (size, id) is the first one at the least size),
        # and the movable topics each member subscribes to
        topics, self.subs, self.movable_of = ctx.members.movable_tables
        self.holders: dict[int, dict[int, int]] = {}  # topic -> holder -> partitions held
        # member -> movable topics held (None: not built yet); lists, walked in order
        self.held: list[list[int] | None] = [None] * len(self.sizes)
        if len(movable_all) > _INDEX_HOLDINGS:
            self._index_holdings(movable_all)  # type: ignore[arg-type]  # numpy's: small groups index nothing
        else:
            self._count_holdings(topics)
        self.n_full = [0] * n_topics
        sizes, max_size = self.sizes, self.max_size
        for m in range(len(sizes)):
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
            if back == FIXED_PREV:
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
        `PartitionMovements.actual_partition`); then `processPartitionMovement`."""
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
        return balance_score([self.sizes[m] for m in self.active])

    def keep(self) -> None:
        """Write the moves back to the builder."""
        if not self.stamp:
            return
        b = self.b
        moved = list(self.stamp)
        b.set_moved(moved, [self.owner[q] for q in moved], list(self.stamp.values()))
        b.sizes[:] = self.sizes
        b.next_stamp = self.next_stamp
