"""Kafka's `AbstractStickyAssignor` (the engine under `sticky` and `cooperative-sticky`), exact and fast.

The Java engine works on `TopicPartition` objects, hash maps and a `TreeSet` of members; here members
and partitions are indices (global partition ids, see `assignors.model`). The constrained builder's
specification works on Python lists (`ConstrainedAssignmentBuilder`), and groups past `_SMALL_GROUP` partitions
take its bulk steps over numpy arrays (`BulkConstrainedAssignmentBuilder`), so that 1M partitions x 2000 members
takes well under a second. The general builder's specification works on Python lists too
(`GeneralAssignmentBuilder`); where built, its C mirror (`assignors/reassign_kernel.pyx`) runs the same steps in
one call for every group without rack logic. `_run_engine` is the one place that picks a representation.
Every rule, tie-break and iteration order that shows in Kafka's result is reproduced (what is and is not
modelled: docs/assignors.md):

* pre-pass: path decision (an empty subscription before the first non-empty one does not break "all
  equal"), owned-partition recovery and generation conflicts (equal generations: nobody keeps the
  partition, which is then "claimed by multiple owners");
* constrained builder (identical subscriptions): owned partitions sorted by (partition, topic) kept up
  to the quotas in member order, the rack-aware round robin, then Java's iterator-driven round robin,
  computed a block of identical rounds at a time; `partitionsTransferringOwnership` as Kafka fills it;
* general builder: prevAssignment (KIP-341), "least loaded subscriber by (size, member id)" found by a
  heap per topic, fixed topics/members, `performReassignments` with the post KAFKA-15106
  `isBalanced` (re-evaluated only after a move, the only time its answer can change), Java's
  partition-movement bookkeeping (including which element a Java `HashSet<TopicPartition>` yields
  first) and the balance-score revert rule (with Java's int overflow), with Java's `isBalanced` kept
  move by move (`Reassignment`).

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

import numpy as np

from assignors.compiled import kernel
from assignors.model import GroupSpec, owner_of
from assignors.spec import INT32
from assignors.sticky_engine.constrained import ConstrainedAssignmentBuilder
from assignors.sticky_engine.constrained_bulk import BulkConstrainedAssignmentBuilder
from assignors.sticky_engine.general import GeneralAssignmentBuilder, GeneralOutcome, build_in_kernel
from assignors.sticky_engine.inputs import EMPTY, NOBODY, GroupTables, RoundContext, owner_codes

_MEMO_PARTITIONS = 1 << 16  # run_engine reuses results up to this many partitions
# the general builder in C (`assignors/reassign_kernel.pyx`; None: not built, or the pure-Python run), for groups
# whose topic x member tables (5 bytes a cell) stay within this many cells
_GENERAL_KERNEL = kernel("assignors.reassign_kernel")
_KERNEL_TABLE_CELLS = 1 << 25


class EngineResult:
    """The engine's result: Kafka's per-member lists (`assignment`, in Kafka's list order) and its
    `partitionsTransferringOwnership` as parallel arrays (global id, new owner index), None on the general
    path (Kafka's null map); read-only arrays. What a result derives on first use is kept in a slot (None until
    then)."""

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
            if owners.flags.writeable:  # `owner_array`'s are read-only: a read of the flag costs a tenth of the set
                owners.setflags(write=False)  # cheaper than through `flags`, which makes a flags object
            self._owners = owners
        return self._owners

    def _make_assignment(self) -> list[np.ndarray]:
        """The lists of a result built without them (the subclasses); a plain result is given its lists."""
        raise NotImplementedError

    def _make_owners(self) -> np.ndarray:
        return owner_of(self.assignment, self.num_partitions)


class _ListedResult(EngineResult):
    """The constrained path's result from its list steps (`ConstrainedAssignmentBuilder`): its per-member Python
    lists (members in the builder's order), made arrays on first use: the streaming state machine reads only
    the owners, which the lists give directly."""

    def __init__(
        self, spec: GroupSpec, lists: list[list[int]], transfer_ids: np.ndarray, transfer_owners: np.ndarray,
        members: GroupTables,
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
        int32 codes (`owner_codes`) straight from the lists, with no owner list in between."""
        lists = self._lists
        codes = owner_codes(None if self._leader_order is None else self._members, len(lists))
        out = [NOBODY] * self.num_partitions
        for m in range(len(lists)):  # builder positions (a `zip` runs generically)
            code = codes[m]
            for p in lists[m]:
                out[p] = code
        return np.frombuffer(b"".join(out), INT32)


class _GeneralResult(EngineResult):
    """The general path's result, read from its build's outcome on first use: `assign` wants the per-member lists
    (sorted by owner and stamp), the streaming state machine only the owners, which the outcome holds."""

    general = True

    def __init__(self, spec: GroupSpec, outcome: GeneralOutcome, leader_order: np.ndarray | None) -> None:
        super().__init__(spec, None, None, None)
        self.num_members = spec.num_members
        self._outcome = outcome
        self._leader_order = leader_order  # None: the builder's members are in member order

    def _make_assignment(self) -> list[np.ndarray]:
        lists = self._outcome.lists(self.num_members)
        return _read_only(_in_member_order(lists, self._leader_order))

    def _make_owners(self) -> np.ndarray:
        """`EngineResult.owners` straight from the outcome's owner per global id, in member order."""
        return self._outcome.member_owner


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
    `GroupTables` (what it derives from the topics and members alone) for the next call that runs."""
    if spec.num_members == 0:
        return EngineResult(spec, [], EMPTY, EMPTY)
    if spec.num_partitions > _MEMO_PARTITIONS:
        return _run_engine(spec, GroupTables(spec, prefer_rack_aware), _clamped_generations(spec))
    gens = _clamped_generations(spec)
    ranks: tuple[int, ...] | None = None
    first = gens[0]
    for g in gens:
        if g != first:
            rank = {x: r for r, x in enumerate(sorted(set(gens)))}
            ranks = tuple([rank[x] for x in gens])
            break
    memo = spec.round_results
    members = memo.get(("sticky members", prefer_rack_aware))
    if members is None:
        members = memo["sticky members", prefer_rack_aware] = GroupTables(spec, prefer_rack_aware)
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


def _clamped_generations(spec: GroupSpec) -> list[int]:
    """Each member's generation as the engine reads it: below -1 (none reported) counts as -1."""
    gens = spec.generation_list
    return [g if g > -1 else -1 for g in gens]


def _run_engine(spec: GroupSpec, members: GroupTables, generations: list[int]) -> EngineResult:
    """The engine on `spec` (member order) with its `_clamped_generations`, which the memo key has read."""
    order = members.leader_order
    if order is not None:
        generations = [generations[m] for m in members.leader_list]
    ctx = RoundContext(members.in_leader_order(spec), members, generations)
    if ctx.all_equal and ctx.phantom_claims:
        ConstrainedAssignmentBuilder(ctx, ctx.phantom_claims).probe()
    if not ctx.all_equal:
        # the one place that picks the general builder's representation: the C kernel where built (it has no
        # rack logic), else the specification's lists
        cells = len(spec.topic_names) * spec.num_members
        if _GENERAL_KERNEL is not None and not ctx.rack_on and cells <= _KERNEL_TABLE_CELLS:
            outcome = build_in_kernel(_GENERAL_KERNEL, ctx)
        else:
            outcome = GeneralAssignmentBuilder(ctx).build()
        return _GeneralResult(spec, outcome, order)
    # the one place that picks the constrained builder's representation: the spec's lists, numpy's past their size
    listed = members.listed_constrained
    constrained = ConstrainedAssignmentBuilder(ctx) if listed else BulkConstrainedAssignmentBuilder(ctx)
    assignment, ids, owners = constrained.build()
    if order is not None:
        owners = order[owners]
    ids.setflags(write=False)
    owners.setflags(write=False)
    if listed:
        return _ListedResult(spec, assignment, ids, owners, members)
    return EngineResult(spec, _read_only(_in_member_order(assignment, order)), ids, owners)


def _in_member_order(assignment: list[np.ndarray], leader_order: np.ndarray | None) -> list[np.ndarray]:
    """Per-member lists computed over the members in `leader_order` (None: in member order already),
    in member order."""
    if leader_order is None:
        return assignment
    back = [EMPTY] * len(assignment)
    for pos, m in enumerate(leader_order.tolist()):
        back[m] = assignment[pos]
    return back


def _read_only(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """`arrays`, each made read-only: results are shared by repeated calls."""
    for array in arrays:
        array.flags.writeable = False
    return arrays
