"""`ConstrainedAssignmentBuilder`'s steps 1, 3 and 4 over numpy arrays, for groups past
`GroupTables.listed_constrained`'s size: there a Python list step per partition (a Python int and a list slot
each) costs more than the whole numpy build (docs/performance.md, "The sticky engine's two representations").
The spec is `assignors.sticky_engine.constrained`; step 2 (rack logic), the quotas and the polls are its own
methods; the property tests run both side by side (tests/assignors/test_properties.py). Phantom claims never get
here: `run_engine` probes them with the spec builder first."""

from __future__ import annotations

import numpy as np

from assignors.sticky_engine.constrained import ConstrainedAssignmentBuilder
from assignors.sticky_engine.inputs import EMPTY, RoundContext


class BulkConstrainedAssignmentBuilder(ConstrainedAssignmentBuilder):
    """The steps of `ConstrainedAssignmentBuilder.build` where the new partitions are kept as (members, ids,
    rounds) chunks, in the order Kafka gives them: id k goes to members[k % len(members)] (`rounds` round-robin
    rounds one after the other; 0: one id each), made per-member arrays at the end."""

    def __init__(self, ctx: RoundContext) -> None:
        super().__init__(ctx)
        self.kept: list[np.ndarray] = []
        self.maybe_revoked = np.full(ctx.num_partitions, -1, dtype=np.int64)
        self.chunks: list[tuple[np.ndarray, np.ndarray, int]] = []
        self.got_members: list[int] = []  # step 2's receivers and partitions (`_give`)
        self.got_ids: list[int] = []

    def build(self) -> tuple[list, np.ndarray, np.ndarray]:
        ctx = self.ctx
        if ctx.rack_on:
            self.partition_bits = ctx.partition_bits.tolist()  # type: ignore[union-attr]
            self.member_bits = ctx.member_bits.tolist()  # type: ignore[union-attr]
        unassigned = self._unkept_ids()  # step 1
        rank = ctx.id_rank_list
        self.under.sort(key=rank.__getitem__)
        self.exact.sort(key=rank.__getitem__)
        if ctx.rack_on:  # step 2
            left = self._assign_rack_aware_round_robin(self._by_rack_consumers(unassigned.tolist()))
            if self.got_ids:
                self.chunks.append((np.array(self.got_members, dtype=np.int64),
                                    np.array(self.got_ids, dtype=np.int64), 0))
            unassigned = np.array(left, dtype=np.int64)
        self._round_robin_chunks(unassigned)  # step 3
        return self._finish_chunks()  # step 4

    def _give(self, p: int, m: int) -> None:
        self.got_members.append(m)
        self.got_ids.append(p)

    def _unkept_ids(self) -> np.ndarray:
        """Step 1; the partitions nobody keeps, in (topic name, partition) order."""
        assigned = self._kept_mask()
        ordered = self.ctx.members.name_ordered
        return ordered[~assigned[ordered]]

    def _kept_mask(self) -> np.ndarray:
        """Step 1, Java's `assignOwnedPartitions`: keep owned partitions, sorted by (partition, topic name),
        up to the quotas."""
        ctx = self.ctx
        spec = ctx.spec
        ids, members = ctx.own_ids, ctx.own_members
        maybe_revoked = self.maybe_revoked
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
        claimed = counts.tolist()
        self._take_quotas(list(claimed), int(counts.max(initial=0)))
        keeps = self.size
        self.kept = [ids[a : a + k] for a, k in zip(starts.tolist(), keeps, strict=True)]
        assigned = np.zeros(ctx.num_partitions, dtype=bool)
        if ids.size and keeps != claimed:
            over = np.arange(ids.size) - starts[members] >= np.asarray(keeps, dtype=np.int64)[members]
            maybe_revoked[ids[over]] = members[over]
            ids = ids[~over]
        assigned[ids] = True
        return assigned

    def _round_robin_chunks(self, unassigned: np.ndarray) -> None:
        """Step 3, Java's `assignRoundRobin` (see `ConstrainedAssignmentBuilder._assign_round_robin`), a block of
        identical rounds per chunk."""
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
                    break  # out of partitions mid-way: `_poll` fails, as in Java
                self.chunks.append((active, unassigned[used : used + chunk], rounds))
                used += chunk
                prev = level
            else:
                self._all_at_min(under[np.argsort(need, kind="stable")].tolist())
        rest = self._poll(total - used)
        if rest:
            self.chunks.append((np.array(rest, dtype=np.int64), unassigned[used:], 1))

    def _finish_chunks(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """Step 4: per member kept partitions, then the new ones in the order given; and the transfers
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
