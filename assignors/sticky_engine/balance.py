"""Kafka's `performReassignments` (with `isBalanced`, `reassignPartition`, `PartitionMovements` and
`getBalanceScore`): the general builder's move loop (`assignors.sticky_engine.general`), over Python lists."""

from __future__ import annotations

from bisect import bisect_left

from assignors.errors import KafkaAssignorError
from assignors.model import GroupSpec
from assignors.sticky_engine.inputs import RoundContext

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


def topic_runs(ids: list[int], partition_topic: list[int]) -> list[tuple[int, int, int]]:
    """`ids` cut where their topic changes: (topic, first position, end position) per run."""
    runs: list[tuple[int, int, int]] = []
    if not ids:
        return runs
    first, t = 0, partition_topic[ids[0]]
    for j in range(len(ids)):
        u = partition_topic[ids[j]]
        if u != t:
            runs.append((t, first, j))
            first, t = j, u
    runs.append((t, first, len(ids)))
    return runs


def fixed_prev_error(spec: GroupSpec, pid: int, owner: int, prev: int, prev_gen: int) -> KafkaAssignorError:
    """Java's `performReassignments` reads `currentAssignment.get(prev).size()` for a partition with a
    prevAssignment entry; a prev owner that cannot take part in the reassignment (it has all it can get and
    nothing movable) was taken out of currentAssignment, hence a NullPointerException."""
    topic = spec.topic_names[int(spec.partition_topic[pid])]
    return KafkaAssignorError(
        "java.lang.NullPointerException",
        None,
        f"partition {topic}-{int(spec.partition_number[pid])} (now with {spec.member_ids[owner]!r}) "
        f"was owned by {spec.member_ids[prev]!r} in generation {prev_gen}, an older one than the "
        f"group's newest; {spec.member_ids[prev]!r} holds all the partitions it can get and none that can move, "
        "so Kafka's sticky engine has taken it out of its current assignment before looking it up there",
    )


class Reassignment:
    """Java's `performReassignments` (its passes and moves, `reassignPartition`, `processPartitionMovement`)
    and the `isBalanced` it asks before each partition, over Python lists. A move costs in proportion to the
    topics of the two members involved; a pass looks only at the partitions that can move (see `_pass`).

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
    member the topics it holds (`held`, walked for `most`).

    Moves work on copies of the builder's `owner` and `sizes`; `stamp` holds each moved partition's place in
    Java's lists (appended last). The builder keeps them, or Java's revert rule drops them."""

    def __init__(
        self, ctx: RoundContext, owner: list[int], sizes: list[int], max_size: list[int], next_stamp: int,
        active: list[int], prev_owner: list[int], prev_gen: list[int],
    ) -> None:
        self.ctx = ctx
        self.active = active  # Java's currentAssignment: members not set aside as fixed
        starts, _, topic_hash = ctx.members.topic_lists
        self.movements = PartitionMovements(starts, topic_hash, ctx.num_members)
        self.owner, self.sizes, self.max_size = owner[:], sizes[:], max_size
        self.ptopic = ctx.members.subscription_tables[4]
        # KIP-341's prevAssignment per global id: its owner (-1: none) and generation; `prev` has `FIXED_PREV` for
        # an owner outside currentAssignment (flags: cheaper than a set of the members in it)
        self.prev_owner, self.prev_gen = prev_owner, prev_gen
        current = [False] * ctx.num_members
        for m in active:
            current[m] = True
        self.prev = [m if m < 0 or current[m] else FIXED_PREV for m in prev_owner]
        self.stamp: dict[int, int] = {}  # moved partition -> its place in Java's lists (appended last)
        self.next_stamp = next_stamp
        n_topics = len(ctx.spec.topic_names)
        # subscribers in member id order (the least loaded by (size, id) is the first one at the least size),
        # and the movable topics each member subscribes to
        topics, self.subs, self.movable_of = ctx.members.movable_tables
        self.holders: dict[int, dict[int, int]] = {}  # topic -> holder -> partitions held
        self.held: list[list[int]] = [[] for _ in sizes]  # member -> movable topics held, walked in order
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
        topics."""
        starts, counts, _ = self.ctx.members.topic_lists
        owner, sizes, subs, held = self.owner, self.sizes, self.subs, self.held
        n_topics = len(counts)
        self.most, self.n_most = [0] * n_topics, [0] * n_topics
        self.least, self.n_least = [0] * n_topics, [0] * n_topics
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

    def perform(self, partitions: list[int]) -> bool:
        """Java's `performReassignments`: passes over `partitions` until balanced or a pass moves nothing,
        cut short when a pass would start from a state an earlier pass started from (Java would repeat
        those passes forever, see the module docstring). The movement records and their `HashSet` orders
        are that state: owners are the ones before the first pass plus the recorded net moves. Balanced
        already, the first pass stops at its first partition (most calls: the second `perform` of a build
        usually starts where the first one balanced the group), so nothing needs setting up."""
        if not len(partitions) or not self.unbalanced:
            return False
        prev = self.prev
        runs = topic_runs(partitions, self.ptopic)
        with_prev = [j for j in range(len(partitions)) if prev[partitions[j]] != -1]
        performed = False
        seen = {self._state()}
        while self._pass(partitions, runs, with_prev):
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
                raise fixed_prev_error(self.ctx.spec, p, owner[p], self.prev_owner[p], self.prev_gen[p])
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
        held_old, held_new = held[old], held[new]
        most, n_most = self.most, self.n_most
        changed = [t]  # may repeat a topic: judging one is idempotent, cheaper than a set
        holders = self.holders[t]
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
                n = self.n_most[t] = list(map(self.sizes.__getitem__, self.holders[t])).count(size)
        return n

    def balance_score(self) -> int:
        return balance_score([self.sizes[m] for m in self.active])
