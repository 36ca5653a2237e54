"""Kafka's `ConstrainedAssignmentBuilder`: every member subscribes to the same topics."""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from itertools import repeat

import numpy as np

from assignors.errors import KafkaAssignorError
from assignors.sticky_engine.inputs import EMPTY, RoundContext

_TREEIFY_THRESHOLD = 8  # a Java `HashMap` bucket past this many entries resizes a table below 64 buckets


class ConstrainedAssignmentBuilder:
    def __init__(self, ctx: RoundContext, phantoms: dict[int, list[tuple[int, int]]] | None = None) -> None:
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
            return out, EMPTY, EMPTY
        return out, np.concatenate(moving_ids), np.concatenate(moving_members)


class SmallConstrainedAssignmentBuilder(ConstrainedAssignmentBuilder):
    """`ConstrainedAssignmentBuilder`'s steps 1 and 3 on Python lists, for small groups without rack logic
    (`GroupTables.small`; its phantom-claim `probe` stays numpy's), where each numpy call costs more than the
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
        `RoundContext._recover_owned`, an id has one at most): no sort per member, no sort key made per claim."""
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
        """`ConstrainedAssignmentBuilder._finish` with the per-member lists left as lists (`_ListedResult`)."""
        lists: list[list[int]] = self.kept  # type: ignore[assignment]
        revoked, multi = self.revoked, self.multi
        moving: list[tuple[int, int]] = []
        for p, m in self.given:
            lists[m].append(p)
            if revoked.get(p, m) != m or p in multi:
                moving.append((p, m))
        if not moving:
            return lists, EMPTY, EMPTY
        ids, owners = np.array(moving, dtype=np.int64).T
        return lists, ids.copy(), owners.copy()
