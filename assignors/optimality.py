"""The optimality gap: the fewest partition moves any assignment with the same loads could have made.

A strategy's round is judged against every assignment that gives each member exactly as many partitions
as the strategy did, hands each partition to at most one member and only to a subscriber of its topic.
Among those, `min_moves` is the least number of previously owned partitions that end up elsewhere
(with another member or with nobody). The gap `moves - min_moves` is the movement a strategy spent for
reasons other than the loads it chose (stickiness it gave up, rack placement, ordering rules).

Maximising the kept partitions is a transportation problem. Partitions of topics with the same set of
subscribers are interchangeable, so topics are merged into *topic groups*; a member takes exactly its load
from the groups it may hold, partitions it owned before ("keep", worth 1) or any others (worth 0), and a
group gives out at most its size. That is a min-cost flow — source → member (its load) → topic group
(keep arcs: cost -1, capacity the owned count; free arcs: cost 0) → sink (the group's size) — solved
exactly in integers by the primal-dual method (`_max_kept`): no LP, no solver library.

Three steps keep the common round cheap: the tables come from the round's few distinct (topic, previous owner,
new owner) triples (`round_counts`), tallied in one pass over topic groups that an event's rounds share
(`TopicGroups`); every member keeps at most ``min(load, keepable)``, so when the strategy's own assignment
reaches that bound (most sticky rounds) it is the answer without a flow; and when keeping that bound still
leaves partitions that complete every load, that is the answer too (most rounds of the non-sticky strategies).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import compress
from typing import Final

import numpy as np

from assignors.compiled import kernel

Tables = tuple[list[int], list[list[int]], list[int], list[int], int, int]
"""What the flow needs: loads per member, allowed members per topic group, group sizes,
keepable counts per (group, member) at ``group * members + member``, previously owned partitions in total,
the strategy's moves."""

Counts = list[int]
"""A round's partitions counted by (topic, previous owner, new owner) (-1: nobody), flat: four ints per distinct
triple, ``topic, previous, new, count`` (`round_counts`). A flat list of ints costs a few appends where a dict
keyed by tuples allocates, hashes and compares a tuple per triple."""


def moves(prev_owner: np.ndarray, new_owner: np.ndarray) -> int:
    """Previously owned partitions (``prev_owner >= 0``) that the new assignment gives to someone else or nobody."""
    prev = np.asarray(prev_owner)
    return int(np.count_nonzero((prev >= 0) & (np.asarray(new_owner) != prev)))


def min_moves(
    prev_owner: np.ndarray, new_owner: np.ndarray, partition_topic: np.ndarray, subscribed: np.ndarray
) -> int:
    """The exact minimum of `moves` over all assignments with `new_owner`'s per-member loads.

    `prev_owner` / `new_owner`: member index per partition (-1: nobody, or a member that left);
    `partition_topic`: topic index per partition; `subscribed`: bool[members, topics] after the round.
    A (member, topic) pair the strategy itself used counts as allowed even if `subscribed` says no
    (Kafka's lenient cases), so ``min_moves <= moves(prev_owner, new_owner)`` always holds.
    """
    prev, new, topic, sub = _shaped(prev_owner, new_owner, partition_topic, subscribed)
    return min_moves_counted(round_counts(prev, new, topic), sub)


def min_moves_counted(counts: Counts, subscribed: np.ndarray, groups: TopicGroups | None = None) -> int:
    """`min_moves` of a round from its `round_counts`, for a caller that counted them anyway
    (`streaming.core.round_metrics.build_metrics`, whose `min_moves_tallied` tally found a partition given outside
    the subscriptions). `groups`: the `TopicGroups` of `subscribed`, for a caller that keeps them over several
    rounds."""
    return _solve(_counted_tables(counts, np.asarray(subscribed, dtype=bool), groups))


def topic_subscribers(subscribed: np.ndarray) -> list[frozenset[int]]:
    """Per topic, the members subscribing to it (`subscribed`: bool[members, topics])."""
    return [frozenset(compress(range(subscribed.shape[0]), column)) for column in subscribed.T.tolist()]


def min_moves_tallied(groups: TopicGroups, tally: Tally) -> int:
    """`min_moves` of a round from its `groups.tally`, for a caller that tallied it anyway
    (`streaming.core.round_metrics.build_metrics` derives its metrics from it); the tally must have found no
    partition outside the groups (else `min_moves_counted`, which widens them)."""
    load, size, keep, total_owned, moved, _, _ = tally
    return _solve((load, groups.members_of, size, keep, total_owned, moved))


def _kept_bound(load: list[int], keepable: list[int]) -> int:
    """The sum over members of min(load, keepable)."""
    bound = 0
    for m, most in enumerate(keepable):
        bound += most if most < load[m] else load[m]
    return bound


_KEPT: Final = kernel("assignors.kept_kernel")  # `_solve_python` in C (None: run it in Python)
_TALLY: Final = kernel("assignors.tally_kernel")  # `TopicGroups.tally_python` in C (None: run it in Python)


def _solve(tables: Tables) -> int:
    """`min_moves` from its tables: the kernel's answer where it gives one (every round but a min-cost flow's,
    more topic groups than the price descent takes), else `_solve_python`'s."""
    if _KEPT is not None:
        load, members_of, size, keep, total_owned, moved = tables
        least: int = _KEPT.min_moves(load, members_of, size, keep, total_owned, moved, _FEW_GROUPS)
        if least >= 0:
            return least
    return _solve_python(tables)


def _solve_python(tables: Tables) -> int:
    """The specification the kernel (`assignors/kept_kernel.pyx`) mirrors, and the pure-Python fallback."""
    load, members_of, size, keep, total_owned, moved = tables
    # Upper bound on what stays: a member keeps at most min(load, its keepable partitions). The strategy's
    # own assignment is a candidate, so when it reaches the bound (the usual sticky round) that is the answer.
    num_members = len(load)
    keepable = [0] * num_members
    keepable_total = 0
    for i, count in enumerate(keep):
        if count:
            m = i % num_members
            keepable[m] = keepable[m] + count
            keepable_total += count
    if not keepable_total:
        return total_owned
    bound = _kept_bound(load, keepable)
    if total_owned - bound == moved:
        return moved
    if len(size) == 1:  # one topic group: every member keeps up to its load and fills up from the rest
        return total_owned - bound
    return total_owned - _max_kept(load, members_of, size, keep)


SMALL_ROUND = 256  # up to this many partitions, a round is counted in plain Python (numpy's calls cost more)


def round_counts(prev_owner: np.ndarray, new_owner: np.ndarray, partition_topic: np.ndarray) -> Counts:
    """A round's partitions counted by (topic, previous owner, new owner): the one count that `min_moves`' tables,
    every metric of a round (`TopicGroups.tally`) and the state machine's reading of who got what follow from,
    in a few distinct triples. `prev_owner` / `new_owner`: member index per partition (-1: nobody);
    `partition_topic`: topic index per partition (arrays of one length).

    A round of up to `SMALL_ROUND` partitions is counted in one pass over lists (`_counted_lists`: its triples in
    first-seen order), a larger one in numpy (`_counted_arrays`: the same triples, in (topic, previous, new)
    order); tests/assignors/test_optimality.py holds the two side by side."""
    if not len(prev_owner) == len(new_owner) == len(partition_topic):
        raise ValueError("round_counts: arrays of different lengths")
    if len(prev_owner) <= SMALL_ROUND:
        return _counted_lists(partition_topic.tolist(), prev_owner.tolist(), new_owner.tolist())
    return _counted_arrays(prev_owner, new_owner, partition_topic)


def _counted_lists(topics: list[int], prevs: list[int], news: list[int]) -> Counts:
    """`round_counts` over lists. Each triple is counted under one int, its owners shifted to 0.. and written in
    base `width` (an int key costs less than a tuple's allocation and hashing); consecutive partitions often
    share their triple (Range hands out runs), so a run is counted at once."""
    if not topics:
        return []
    low, high = _span(prevs, prevs[0], prevs[0])
    low, high = _span(news, low, high)
    width = high - low + 1
    counts: dict[int, int] = {}
    last, run = -1, 0
    for i, t in enumerate(topics):
        key = (t * width + prevs[i] - low) * width + news[i] - low
        if key == last:
            run += 1
            continue
        if run:
            counts[last] = counts.get(last, 0) + run
        last, run = key, 1
    counts[last] = counts.get(last, 0) + run
    triples: Counts = []
    for key, count in counts.items():
        rest = key // width
        triples += (rest // width, rest % width + low, key % width + low, count)
    return triples


def _span(values: list[int], low: int, high: int) -> tuple[int, int]:
    """The least and the greatest of `values`, `low` and `high`."""
    for v in values:
        if v < low:
            low = v
        elif v > high:
            high = v
    return low, high


def _counted_arrays(prev_owner: np.ndarray, new_owner: np.ndarray, partition_topic: np.ndarray) -> Counts:
    """`round_counts` in numpy: the same key as `_counted_lists`, its distinct values counted by one sort."""
    if not len(prev_owner):
        return []
    prev, new = prev_owner.astype(np.int64), new_owner.astype(np.int64)
    low = min(int(prev.min()), int(new.min()))
    width = max(int(prev.max()), int(new.max())) - low + 1
    keys, count = np.unique((partition_topic.astype(np.int64) * width + prev - low) * width + new - low,
                            return_counts=True)
    rest, news = np.divmod(keys, width)
    topics, prevs = np.divmod(rest, width)
    counts: Counts = np.column_stack((topics, prevs + low, news + low, count)).ravel().tolist()
    return counts


def _counted_tables(counts: Counts, sub: np.ndarray, groups: TopicGroups | None = None) -> Tables:
    """The flow's tables in plain Python, from a round's `Counts`: one pass over them once the topic groups are
    known (`groups`, else those of `sub`), and a second one when the strategy used a pair outside the
    subscriptions (which then counts as allowed and may change the groups)."""
    shape: tuple[int, int] = sub.shape
    num_members, num_topics = shape
    if groups is None:
        groups = TopicGroups(topic_subscribers(sub), num_members)
    load, size, keep, total_owned, moved, _, outside = groups.tally(counts, num_topics)
    if outside:  # a topic's set is replaced, not changed (the groups' sets may be shared)
        widened = list(groups.topic_members)
        for k in range(0, len(counts), 4):
            t, n = counts[k], counts[k + 2]
            if n >= 0 and n not in widened[t]:
                widened[t] = widened[t] | {n}
        groups = TopicGroups(widened, num_members)
        load, size, keep, total_owned, moved, _, outside = groups.tally(counts, num_topics)
    return load, groups.members_of, size, keep, total_owned, moved


Tally = tuple[list[int], list[int], list[int], int, int, int, bool]
"""A round's partitions counted over topic groups (`TopicGroups.tally`): loads per member, partitions per topic
group, keepable ones per ``group * members + member`` (owned before, and the group allows the owner), previously
owned ones, moved ones, unassigned ones of topics with subscribers, and whether the strategy gave a partition to
a member its topic's group does not allow."""


class TopicGroups:
    """Topics with the same allowed members merged into one topic group (their partitions are interchangeable),
    with a table of who may hold what indexed by ``group * members + member`` (a counting pass reads it, where
    membership tests would go through the topics' sets). Every round of every
    strategy of an event has the same subscriptions (only the owners differ), so the event makes them once
    (`streaming.core.layout.Relayout.topic_groups`)."""

    def __init__(self, allowed: Sequence[frozenset[int]], num_members: int) -> None:
        group_of: dict[frozenset[int], int] = {}
        self.topic_members = allowed  # per topic, the members that may hold it (read, never changed)
        self.topic_group = [group_of.setdefault(a, len(group_of)) if a else -1 for a in allowed]  # -1: nobody
        self.members_of: list[list[int]] = [list(a) for a in group_of]
        self.num_members = num_members
        self.allowed = [False] * (len(group_of) * num_members)
        for g, members in enumerate(self.members_of):
            for m in members:
                self.allowed[g * num_members + m] = True

    def tally(self, counts: Counts, num_topics: int) -> Tally:
        """A round's `Counts` tallied in one pass: by the kernel where it is built and every triple is in range,
        else by `tally_python` (which raises the error of a triple out of range)."""
        if _TALLY is not None:
            tallied: Tally | None = _TALLY.tally(counts, self.topic_group, self.allowed, self.num_members,
                                                 len(self.members_of), num_topics)
            if tallied is not None:
                return tallied
        return self.tally_python(counts, num_topics)

    def tally_python(self, counts: Counts, num_topics: int) -> Tally:
        """The specification the kernel (`assignors/tally_kernel.pyx`) mirrors, and the pure-Python fallback."""
        num_members = self.num_members
        topic_group, allowed = self.topic_group, self.allowed
        load, size, keep = [0] * num_members, [0] * len(self.members_of), [0] * len(allowed)
        total_owned = moved = unassigned = 0
        outside = False
        last = g = -1  # the topic of the previous triple and its group
        row = held = 0  # that group's row in `allowed` and `keep`, that topic's partitions counted so far
        for k in range(0, len(counts), 4):
            t, p, n, count = counts[k], counts[k + 1], counts[k + 2], counts[k + 3]
            if not (-1 <= p < num_members and -1 <= n < num_members and 0 <= t < num_topics):
                _check_counted(counts, num_members, num_topics)
            if t != last:  # a topic's triples come together: its group is read and its size added once
                if g >= 0:
                    size[g] = size[g] + held
                last, g, held = t, topic_group[t], 0
                row = g * num_members
            held += count
            if n >= 0:
                load[n] = load[n] + count
                if g < 0 or not allowed[row + n]:
                    outside = True
            elif g >= 0:
                unassigned += count
            if p >= 0:
                total_owned += count
                if n != p:
                    moved += count
                if g >= 0 and allowed[row + p]:
                    keep[row + p] = keep[row + p] + count
        if g >= 0:
            size[g] = size[g] + held
        return load, size, keep, total_owned, moved, unassigned, outside


def _check_counted(counts: Counts, num_members: int, num_topics: int) -> None:
    """Raises the error `min_moves` gives for counted triples out of range (previous owners are checked
    first, then new owners, then topics); `TopicGroups.tally` calls it only once a triple failed its
    per-triple test, which costs less than these passes on every call."""
    topics, prevs, news = counts[0::4], counts[1::4], counts[2::4]
    _check_range("prev_owner", min(prevs), max(prevs), num_members)
    _check_range("new_owner", min(news), max(news), num_members)
    _check_topics(min(topics), max(topics), num_topics)


def _max_kept(load: list[int], members_of: list[list[int]], size: list[int],
              keep: list[int]) -> int:
    """Most partitions kept by their owners: a min-cost flow that routes every member's load.

    Network: source → member (capacity its load) → topic group (keep arc: the owned count at cost -1,
    free arc: unbounded at cost 0, both only where the member is allowed) → sink (the group's size).
    A flow that saturates the source is an assignment with the strategy's loads; minus its cost is what
    it keeps. Primal-dual: start from a flow that is cheapest for its value, then repeatedly push a
    maximum flow (Dinic) through the arcs on shortest paths of the residual graph. Costs are -1/0 on
    member → group arcs only, so a simple source → sink path costs between -groups and +groups and
    there are at most ``2 * groups + 1`` phases. The strategy's own assignment saturates the source,
    so the phases always reach such a flow.

    The start: keep arcs filled greedily. Every source → sink path crosses exactly one member → group
    arc, so no flow of value v costs less than -v; a flow on keep arcs alone costs exactly -v, hence is
    cheapest for its value and its residual graph has no negative cycle (the method's invariant).

    The start keeps the upper bound ``sum(min(load, keepable))``: a group's keep counts never exceed its
    size (a partition has one previous owner), so a group's room never limits a keep arc. Hence when the
    partitions left over can complete every member's load on free arcs, that flow is optimal and no
    phase runs (`_completes`, first come, first served; most rounds of the non-sticky strategies, whose moves
    exceed the minimum; then, for a few groups, `_fills`, exactly). Otherwise up to `_FEW_GROUPS` topic groups
    the flow's dual answers (`_kept_by_prices`), else the phases run from that start (`_kept_by_flow`).
    """
    num_members, num_groups = len(load), len(size)
    left, room = list(load), list(size)  # the start flow: load not yet routed, group partitions not yet given
    took = [0] * len(keep)  # the start flow on keep arcs, indexed like `keep`
    # groups few members may hold first: a member keeps there rather than where others could take the rest
    # (a stable insertion sort of the few groups)
    order: list[int] = []
    for g in range(num_groups):
        i = len(order)
        while i and len(members_of[order[i - 1]]) > len(members_of[g]):
            i -= 1
        order.insert(i, g)
    kept = 0  # what the start flow keeps
    for g in order:
        for m in members_of[g]:
            owned = keep[g * num_members + m] if load[m] else 0
            if owned:  # the least of owned, left and room
                amount = owned if owned < left[m] else left[m]
                if room[g] < amount:
                    amount = room[g]
                took[g * num_members + m] = amount
                left[m] = left[m] - amount
                room[g] = room[g] - amount
                kept += amount
    if _completes(members_of, order, list(left), list(room)) or (
            num_groups <= _FEW_GROUPS and _fills(members_of, left, room)):
        return kept
    if num_groups <= _FEW_GROUPS:
        return _kept_by_prices(load, members_of, size, keep)
    return _kept_by_flow(load, members_of, size, keep, took, left, room)


_FEW_GROUPS = 3  # up to this many topic groups, the price descent costs less than the flow (small groups' rounds: 2-3)


def _kept_by_prices(load: list[int], members_of: list[list[int]], size: list[int],
                    keep: list[int]) -> int:
    """`_max_kept` for a few topic groups, as the least value of the flow's linear-programming dual.

    The dual: a price ``p[g] >= 0`` per group (its size is the room it gives), a value ``u[m]`` per member (its
    load) and ``w[g, m] >= 0`` per keep arc, with ``u[m] + p[g] >= 0`` where m may hold g and
    ``u[m] + p[g] + w[g, m] >= 1`` on keep arcs; minimise ``sum(load * u) + sum(size * p) + sum(keep * w)``.
    Its least value is the most kept (LP duality; the strategy's own assignment makes the flow feasible), and
    it has an integer optimum (each row couples one member and one group: totally unimodular). For fixed
    prices the best ``w`` and ``u`` follow per member (`_dual_value`), which leaves a function of the prices
    that is L-natural convex: every term is convex in a difference ``p[g] - (-u[m])`` or in one variable, and
    minimising some variables out keeps that. Such a function's minimum is where no step ``p ± 1`` on one
    set of groups lowers it (steepest descent from ``p = 0``, whose value is the bound ``sum(min(load,
    keepable))``); each step lowers an integer value bounded below by the most kept, so the descent ends.
    """
    num_members, num_groups = len(load), len(size)
    allowed_of: list[list[int]] = [[] for _ in range(num_members)]  # per member, the groups it may hold
    for g, members in enumerate(members_of):
        for m in members:
            allowed_of[m].append(g)
    # A member that may hold one group g only adds ``min(load, keep) - load * p[g]`` (its `_dual_value` term), so
    # those terms are a constant (`fixed`) and a lower price per partition of their group (`room`): each value
    # then sums the terms of the members that may hold several groups (`active`) only.
    fixed, room = 0, list(size)
    active: list[int] = []
    kept_of: list[list[int]] = [[] for _ in range(num_members)]  # per active member, (group, owned count) pairs
    for m, n in enumerate(load):
        if not n:
            continue
        held = allowed_of[m]
        if len(held) == 1:
            owned = keep[held[0] * num_members + m]
            fixed += owned if owned < n else n
            room[held[0]] = room[held[0]] - n
            continue
        active.append(m)
        for g in held:
            owned = keep[g * num_members + m]
            if owned:
                kept_of[m].append(g)
                kept_of[m].append(owned)
    price = [0] * num_groups
    best = fixed + _dual_value(price, room, load, allowed_of, kept_of, active)
    # the values seen (neighbouring points share most neighbours), by prices written in a base above any trial
    # price: each step moves a price by at most 1 and lowers the value, an integer from `best` down to at least 0
    base = best + 2
    seen = {0: best}
    while True:
        step: list[int] | None = None
        step_value = best
        for groups in range(1, 1 << num_groups):
            for sign in (1, -1):
                trial, feasible = list(price), True
                key = 0
                for g in range(num_groups):
                    if groups >> g & 1:
                        trial[g] = trial[g] + sign
                        if trial[g] < 0:  # prices are >= 0
                            feasible = False
                    key = key * base + trial[g]
                if not feasible:
                    continue
                value = seen.get(key, -1)  # a dual value is at least the most kept, so never negative
                if value < 0:
                    value = seen[key] = fixed + _dual_value(trial, room, load, allowed_of, kept_of, active)
                if value < step_value:
                    step, step_value = trial, value
        if step is None:
            return best
        price, best = step, step_value


def _dual_value(price: list[int], size: list[int], load: list[int], allowed_of: list[list[int]],
                kept_of: list[list[int]], active: list[int]) -> int:
    """The dual's least value for fixed group prices, over the `active` members' terms and ``size * p``
    (`_kept_by_prices` adds the others): ``w = max(0, 1 - u - p)``, and each member's ``u`` starts at its least
    allowed value ``-min(p over its groups)`` and rises while that lowers its term
    ``load * u + sum(keep * max(0, 1 - u - p))``, convex with slope ``load - sum(keep where p <= -u)`` (integer
    breakpoints, so integer steps reach its minimum)."""
    total = 0
    for g, p in enumerate(price):
        total += size[g] * p
    for m in active:
        allowed = allowed_of[m]
        least = price[allowed[0]]
        for g in allowed:
            if price[g] < least:
                least = price[g]
        u = -least
        kept = kept_of[m]
        n = load[m]
        value = n * u
        for i in range(0, len(kept), 2):
            short = 1 - u - price[kept[i]]
            if short > 0:
                value += kept[i + 1] * short
        while u < 1:
            slope = n
            for i in range(0, len(kept), 2):
                if price[kept[i]] <= -u:
                    slope -= kept[i + 1]
            if slope >= 0:
                break
            value += slope
            u += 1
        total += value
    return total


def _kept_by_flow(load: list[int], members_of: list[list[int]], size: list[int],
                  keep: list[int], took: list[int], left: list[int],
                  room: list[int]) -> int:
    """`_max_kept` by the primal-dual phases from the greedy start flow (`took`, `left`, `room`)."""
    num_members, num_groups = len(load), len(size)
    source, sink = num_members + num_groups, num_members + num_groups + 1
    net = _Network(num_members + num_groups + 2)
    for g, members in enumerate(members_of):
        for m in members:
            if load[m]:
                owned = keep[g * num_members + m]
                if owned:
                    net.arc(m, num_members + g, owned, -1, took[g * num_members + m])
                net.arc(m, num_members + g, _UNBOUNDED, 0, 0)
        net.arc(num_members + g, sink, size[g], 0, size[g] - room[g])
    for m, demand in enumerate(load):
        if demand:
            net.arc(source, m, demand, 0, demand - left[m])
    net.min_cost_flow(source, sink, sum(left))
    return -net.cost()


def _fills(members_of: list[list[int]], left: list[int], room: list[int]) -> bool:
    """Whether the groups' `room` can complete every member's `left` load, exactly, by Hall's condition for
    a transportation problem with unbounded arcs: for every set of groups, the loads left of the members that
    may only hold groups of the set fit in the set's room. Over all ``2 ** groups`` sets, so for a few groups;
    it accepts a quarter of what the first come, first served `_completes` misses (rounds that would go on to
    the price descent, only to confirm the bound)."""
    num_groups = len(room)
    may_hold = [0] * len(left)  # per member, its groups as bits
    for g, members in enumerate(members_of):
        for m in members:
            may_hold[m] = may_hold[m] | 1 << g
    need = [0] * (1 << num_groups)  # loads left, by the set of groups their members may hold
    for m, rest in enumerate(left):
        if rest:
            need[may_hold[m]] = need[may_hold[m]] + rest
    for groups in range(1, 1 << num_groups):
        wanted = have = 0
        for held in range(1, groups + 1):
            if held & groups == held:
                wanted += need[held]
        for g in range(num_groups):
            if groups >> g & 1:
                have += room[g]
        if wanted > have:
            return False
    return True


def _completes(members_of: list[list[int]], order: list[int], left: list[int], room: list[int]) -> bool:
    """Whether handing out the groups' `room` (groups in `order`) first come, first served fills every
    member's `left` load (a sufficient test: False may still have a completion, which the flow then finds).
    Updates both."""
    for g in order:
        for m in members_of[g]:
            if left[m] and room[g]:
                amount = left[m] if left[m] < room[g] else room[g]
                left[m] = left[m] - amount
                room[g] = room[g] - amount
    return not any(left)


_UNBOUNDED = 1 << 62


class _Network:
    """A residual graph for a min-cost flow: arcs in pairs (arc ``e`` and its reverse ``e ^ 1``)."""

    def __init__(self, num_nodes: int) -> None:
        self.out: list[list[int]] = [[] for _ in range(num_nodes)]
        self.head: list[int] = []
        self.residual: list[int] = []
        self.unit_cost: list[int] = []

    def arc(self, tail: int, head: int, capacity: int, cost: int, flow: int) -> None:
        self.out[tail].append(len(self.head))
        self.head += (head, tail)
        self.residual += (capacity - flow, flow)
        self.unit_cost += (cost, -cost)
        self.out[head].append(len(self.head) - 1)

    def cost(self) -> int:
        return sum(self.residual[e ^ 1] * self.unit_cost[e] for e in range(0, len(self.head), 2))

    def min_cost_flow(self, source: int, sink: int, more: int) -> None:
        """Push `more` units from `source` to `sink` along cheapest paths (primal-dual phases)."""
        while more > 0:
            dist = self._distances(source)
            if dist[sink] is None:
                raise RuntimeError("min_moves: no assignment has the strategy's loads (inconsistent input)")
            more -= self._max_flow_on_shortest_paths(source, sink, dist, more)

    def _distances(self, source: int) -> list[int | None]:
        """Cheapest path cost from `source` to each node over arcs with residual capacity (no negative
        cycles: queue-based Bellman-Ford)."""
        dist: list[int | None] = [None] * len(self.out)
        dist[source] = 0
        queue, queued = deque([source]), [False] * len(self.out)
        queued[source] = True
        head, residual, unit_cost = self.head, self.residual, self.unit_cost
        while queue:
            u = queue.popleft()
            queued[u] = False
            du = dist[u]
            for e in self.out[u]:
                if residual[e]:
                    v, dv = head[e], du + unit_cost[e]  # type: ignore[operator]
                    if dist[v] is None or dv < dist[v]:  # type: ignore[operator]
                        dist[v] = dv
                        if not queued[v]:
                            queued[v] = True
                            queue.append(v)
        return dist

    def _max_flow_on_shortest_paths(self, source: int, sink: int, dist: list[int | None], limit: int) -> int:
        """Dinic's max flow (up to `limit`) over the arcs on cheapest paths (``dist[v] == dist[u] + cost``);
        the reverse of an arc that carries pushed flow satisfies the same equation, so the subgraph stays
        closed under pushing."""
        head, residual, unit_cost, out = self.head, self.residual, self.unit_cost, self.out

        def usable(e: int, level: list[int], u: int) -> bool:
            v = head[e]
            return bool(residual[e]) and level[v] == level[u] + 1 and dist[v] == dist[u] + unit_cost[e]  # type: ignore[operator]

        pushed = 0
        while pushed < limit:
            level = [-2] * len(out)  # BFS depth over usable arcs (-2: unreached)
            level[source] = 0
            queue = deque([source])
            while queue:
                u = queue.popleft()
                for e in out[u]:
                    v = head[e]
                    if level[v] == -2 and residual[e] and dist[v] == dist[u] + unit_cost[e]:  # type: ignore[operator]
                        level[v] = level[u] + 1
                        queue.append(v)
            if level[sink] < 0:
                return pushed
            next_arc = [0] * len(out)
            path: list[int] = []  # arcs from the source to u
            u = source
            while pushed < limit:
                if u == sink:
                    amount = min(limit - pushed, *(residual[e] for e in path))
                    for e in path:
                        residual[e] = residual[e] - amount
                        residual[e ^ 1] = residual[e ^ 1] + amount
                    pushed += amount
                    path.clear()
                    u = source
                    continue
                arcs = out[u]
                while next_arc[u] < len(arcs) and not usable(arcs[next_arc[u]], level, u):
                    next_arc[u] = next_arc[u] + 1
                if next_arc[u] < len(arcs):
                    e = arcs[next_arc[u]]
                    path.append(e)
                    u = head[e]
                elif u == source:
                    break  # blocking flow found: new levels
                else:  # dead end: retreat and skip the arc that led here
                    level[u] = -1
                    u = head[path.pop() ^ 1]
                    next_arc[u] = next_arc[u] + 1
        return pushed


def _shaped(
    prev_owner: np.ndarray, new_owner: np.ndarray, partition_topic: np.ndarray, subscribed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The inputs as arrays of the documented shapes (value ranges are checked where they are counted)."""
    prev, new, topic = np.asarray(prev_owner), np.asarray(new_owner), np.asarray(partition_topic)
    sub = np.asarray(subscribed, dtype=bool)
    if sub.ndim != 2:
        raise ValueError(f"subscribed: expected a 2-D bool array [members, topics], got shape {sub.shape}")
    for name, arr in (("prev_owner", prev), ("new_owner", new), ("partition_topic", topic)):
        if arr.ndim != 1 or len(arr) != len(prev):
            raise ValueError(f"{name}: expected a 1-D array of {len(prev)} partitions, got shape {arr.shape}")
    return prev, new, topic, sub


def _check_range(name: str, smallest: int, largest: int, num_members: int) -> None:
    if smallest < -1 or largest >= num_members:
        raise ValueError(f"{name}: member indices must be in [-1, {num_members})")


def _check_topics(smallest: int, largest: int, num_topics: int) -> None:
    if smallest < 0 or largest >= num_topics:
        raise ValueError(f"partition_topic: topic indices must be in [0, {num_topics})")
