"""Kafka's `ConstrainedAssignmentBuilder`: every member subscribes to the same topics.

The specification, over Python lists indexed by global partition id and member index: what the tests run, and
what runs up to `GroupTables.listed_constrained`'s size (rack logic and phantom claims included). Bigger groups
take steps 1, 3 and 4 over numpy arrays (`assignors.sticky_engine.constrained_bulk`, selected by `run_engine`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque

import numpy as np

from assignors.errors import KafkaAssignorError
from assignors.sticky_engine.inputs import EMPTY, RoundContext

_TREEIFY_THRESHOLD = 8  # a Java `HashMap` bucket past this many entries resizes a table below 64 buckets


class ConstrainedAssignmentBuilder:
    """Kafka's `ConstrainedAssignmentBuilder.build`, step by step (`build`):

    1. `assignOwnedPartitions`: each member keeps its owned partitions, in (partition, topic name) order, up to
       the quotas (minQuota, or maxQuota for the first `expectedNumMembersWithOverMinQuotaPartitions`), and the
       members short of minQuota and those at it are listed (`unfilledMembersWithUnderMinQuotaPartitions`,
       `unfilledMembersWithExactlyMinQuotaPartitions`), both sorted by member id;
    2. `assignRackAwareRoundRobin` (rack logic only): the partitions nobody kept, fewest replica-rack members
       first, each to the next under-min member (wrapping) on a replica's rack, else to the first exact-min one;
    3. `assignRoundRobin`: the rest, in (topic name, partition) order, round robin over the under-min members,
       then one each to exact-min members;
    4. the result: per member its kept partitions then its new ones, and `partitionsTransferringOwnership` (a
       partition some other member owned, or one claimed by several in one generation).

    Kafka's throws where members claim partitions past their topic's partition count are `probe`'s."""

    def __init__(self, ctx: RoundContext, phantoms: dict[int, list[tuple[int, int]]] | None = None) -> None:
        self.ctx = ctx
        self.phantoms = phantoms or {}  # see `probe`
        self.first_phantom: tuple[int, int] | None = None  # smallest kept one, (topic name position, number)
        spec = ctx.spec
        sizes: list[int] = spec.topic_sizes.tolist()
        total = 0
        for t in ctx.topics_by_name:
            total += sizes[t]
        n = ctx.num_members
        self.min_quota = total // n
        self.max_quota = -(-total // n)
        self.expected_over = total % n
        self.current_over = 0
        self.under: list[int] = []
        self.exact: list[int] = []
        self.size: list[int] = []
        # per member: its kept partitions, then the new ones in the order given (`_give`)
        self.lists: list[list[int]] = []
        self.revoked: dict[int, int] = {}  # a claim not kept (rack, quota) -> its claimant
        self.multi: set[int] = set()  # claimed by several members in one generation
        self.transfers: list[int] = []  # `partitionsTransferringOwnership`: id, then new owner, per transfer
        self.tracked = False  # whether a claim was revoked or multiply claimed (else nothing transfers)
        self.partition_bits: list[int] = []  # rack logic only: per global id its replicas' rack bits
        self.member_bits: list[int] = []  # ... per member its rack's bit (0: no rack)

    def build(self) -> tuple[list, np.ndarray, np.ndarray]:
        """Steps 1 to 4: per member its partitions in Kafka's order, and the transfers (ids, new owners)."""
        unassigned = self._before_round_robin()  # steps 1 and 2
        self._assign_round_robin(unassigned)  # step 3
        return self._finish()  # step 4

    def _before_round_robin(self) -> list[int]:
        """Steps 1 and 2; returns what step 3 hands out."""
        ctx = self.ctx
        if ctx.rack_on:
            self.partition_bits = ctx.partition_bits.tolist()  # type: ignore[union-attr]
            self.member_bits = ctx.member_bits.tolist()  # type: ignore[union-attr]
        unassigned = self._unkept()
        rank = ctx.id_rank_list
        self.under.sort(key=rank.__getitem__)
        self.exact.sort(key=rank.__getitem__)
        if ctx.rack_on:
            unassigned = self._assign_rack_aware_round_robin(self._by_rack_consumers(unassigned))
        return unassigned

    def _unkept(self) -> list[int]:
        """Step 1; the partitions nobody keeps, in (topic name, partition) order."""
        kept = self._assign_owned()
        ctx = self.ctx
        start: list[int] = ctx.spec.topic_start.tolist()
        topics: list[int] = ctx.topics_by_name
        first_phantom = self.first_phantom
        name_pos: list[int] = ctx.topic_name_pos.tolist() if first_phantom is not None else []
        unkept: list[int] = []
        for t in topics:
            if first_phantom is not None and name_pos[t] > first_phantom[0]:
                # Java's getUnassignedPartitions walks the sorted kept list with one pointer, which stops at
                # a kept partition that does not exist: every partition of a later topic counts as unassigned
                unkept += range(start[t], start[t + 1])
                continue
            for p in range(start[t], start[t + 1]):
                if not kept[p]:
                    unkept.append(p)
        return unkept

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
        for _ in range(len(unassigned)):
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


    def _assign_owned(self) -> list[bool]:
        """Step 1, Java's `assignOwnedPartitions`; returns whether each global id is kept. Each member's claims
        in Java's order are dealt out of one walk over every id in that order (`GroupSpec.ids_by_number`), each
        to its claimant (`RoundContext.claimants`: one at most): no sort per member."""
        ctx = self.ctx
        n = ctx.num_partitions
        claimant, claimed = ctx.claimants()
        revoked = self.revoked
        if ctx.rack_on:  # a member with a rack keeps no partition without a replica there
            pbits, mbits = self.partition_bits, self.member_bits
            has_rack: list[bool] = ctx.has_rack.tolist()  # type: ignore[union-attr]
            for p in range(n):
                m = claimant[p]
                if m >= 0 and has_rack[m] and not pbits[p] & mbits[m]:
                    revoked[p] = m
                    claimant[p] = -1
        multi = self.multi = set(np.flatnonzero(ctx.multi).tolist()) if ctx.multi is not None else set()
        for p in multi:  # claimed twice in one generation: nobody keeps them
            claimant[p] = -1
        claims: list[list[int]] = [[] for _ in range(ctx.num_members)]
        if claimed:
            for p in ctx.spec.ids_by_number:
                m = claimant[p]
                if m >= 0:
                    claims[m].append(p)
        keeps = [len(c) for c in claims]
        most = 0
        for k in keeps:  # a loop: `max` is a generic call when compiled
            if k > most:
                most = k
        phantoms = self._sorted_phantoms()
        for m, tps in phantoms.items():
            keeps[m] += len(tps)
        self._take_quotas(keeps, most)  # `keeps` is now `size`: how many each keeps, phantom claims included
        if phantoms:
            keeps = list(keeps)
            for m, tps in phantoms.items():  # the first `keep` of the member's real and phantom claims
                keeps[m] = self._real_keeps(claims[m], tps, keeps[m])
        for m in range(len(claims)):  # claims cut to what each keeps in place: most keep all, no slice made
            c, keep = claims[m], keeps[m]
            if keep < len(c):
                for p in c[keep:]:
                    revoked[p] = m
                del c[keep:]
        self.lists = claims
        self.tracked = bool(revoked) or bool(multi)
        kept = [False] * n
        for c in claims:
            for p in c:
                kept[p] = True
        return kept

    def _real_keeps(self, real: list[int], phantoms: list[tuple[int, int, bool]], keep: int) -> int:
        """How many of a member's `real` claims it keeps when it keeps `keep` of its real and `phantoms` claims
        together, in Java's order; notes the first phantom claim kept."""
        spec, ctx = self.ctx.spec, self.ctx
        number: list[int] = spec.partition_number.tolist()
        name_pos: list[int] = ctx.topic_name_pos.tolist()
        ptopic: list[int] = ctx.partition_topic.tolist()
        prefix = sorted([(number[p], name_pos[ptopic[p]], False) for p in real] + phantoms)[:keep]
        for p_number, pos, phantom in prefix:
            if phantom and (self.first_phantom is None or (pos, p_number) < self.first_phantom):
                self.first_phantom = (pos, p_number)
        return sum(1 for *_, phantom in prefix if not phantom)

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

    def _by_rack_consumers(self, unassigned: list[int]) -> list[int]:
        """`unassigned`, stably sorted by how many members' racks hold a replica (Java's numConsumersByPartition:
        a member has one rack bit at most)."""
        on_rack: dict[int, int] = {}  # rack bit -> its members
        for bits in self.member_bits:
            if bits:
                on_rack[bits] = on_rack.get(bits, 0) + 1
        counts: dict[int, int] = {}  # replica rack bits -> members on those racks
        pbits = self.partition_bits
        key: list[int] = []
        for p in unassigned:
            bits = pbits[p]
            count = counts.get(bits)
            if count is None:
                count = 0
                for rack, members in on_rack.items():
                    if bits & rack:
                        count += members
                counts[bits] = count
            key.append(count)
        order = sorted(range(len(unassigned)), key=key.__getitem__)
        return [unassigned[i] for i in order]

    def _assign_rack_aware_round_robin(self, unassigned: list[int]) -> list[int]:
        """Step 2, Java's `assignRackAwareRoundRobin`: a cursor over the under-min members (wrapping) to the
        first whose rack holds a replica, else the first rack-matching exact-min member; unmatched partitions
        wait for step 3.

        Java's cursor is an index into a shrinking list; here it is a position in the initial list
        ("the first member still there at or after it"), and each rack keeps the sorted positions of
        its under-min members, so a lookup is a bisection per replica rack instead of a scan."""
        pbits, mbits = self.partition_bits, self.member_bits
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
        for p in unassigned:
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
                self._give(p, consumer)
            else:
                left.append(p)
        self.under = [m for pos, m in enumerate(under0) if alive[pos]]
        self.exact = [m for seq, m in exact_log if exact_seq.get(m) == seq]
        return left

    def _assign_round_robin(self, unassigned: list[int]) -> None:
        """Step 3, Java's `assignRoundRobin`: an iterator cycling over the under-min members (each leaving
        once it reaches minQuota and queueing at the end of the exact-min list), then one partition per
        polled exact-min member. Round r gives one partition to every member still short after r rounds,
        so rounds with the same set of members form one block."""
        total, used = len(unassigned), 0
        if self.under and total:
            under = self.under
            need = [self.min_quota - self.size[m] for m in under]
            prev = 0
            for level in sorted(set(need)):
                active = [under[i] for i in range(len(under)) if need[i] >= level]
                n_active = len(active)
                chunk = (level - prev) * n_active
                if used + chunk > total:
                    break  # out of partitions mid-way: `_poll` fails, as in Java
                for i in range(chunk):
                    self._give(unassigned[used + i], active[i % n_active])
                used += chunk
                prev = level
            else:
                self._all_at_min([under[i] for i in sorted(range(len(under)), key=need.__getitem__)])
        polled = self._poll(total - used)  # one member per partition left
        for i in range(len(polled)):
            self._give(unassigned[used + i], polled[i])

    def _give(self, p: int, m: int) -> None:
        """Partition p goes to member m (steps 2 and 3): a transfer if another member owned it (it was not kept
        where it was claimed) or several claimed it in one generation."""
        self.lists[m].append(p)
        if self.tracked and (self.revoked.get(p, m) != m or p in self.multi):
            self.transfers.append(p)
            self.transfers.append(m)

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

    def _finish(self) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
        """Step 4: per member its kept then its new partitions; the transfers as (ids, new owners)."""
        if not self.transfers:
            return self.lists, EMPTY, EMPTY
        pairs = np.array(self.transfers, dtype=np.int64)
        return self.lists, pairs[0::2].copy(), pairs[1::2].copy()
