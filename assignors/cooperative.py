"""Kafka's `CooperativeStickyAssignor` (name "cooperative-sticky"): the sticky engine's target minus the
partitions transferring ownership, which nobody gets this round (their owner revokes them and the
follow-up rebalance hands them out).

On the constrained path the transfers are the engine's `partitionsTransferringOwnership` map (partitions
claimed by several members in the same generation always count, even when one of the claimants gets
them back); on the general path they are computed afterwards like Kafka does: a partition transfers if
some member gains it without having owned it and some member that owned it loses it (so a claimant of
a doubly-claimed partition that receives it keeps it). Ownership is each member's `owned` with its
`generation` (ownedPartitions + generationId). Not modelled: the engine's `maxGeneration` persisting
across calls on one assignor instance (we are stateless per call).
"""

from __future__ import annotations

import numpy as np

from assignors.model import SMALL_GROUP, GroupSpec
from assignors.sticky_engine.engine import EngineResult, run_engine

_EMPTY = np.zeros(0, dtype=np.int64)


def transferring_after_the_fact(spec: GroupSpec, new_owner: np.ndarray) -> np.ndarray | list[int]:
    """The global ids gained by a member that did not own them and lost by a member that did (`new_owner`:
    the engine's owner per global id). Small groups go over their claims in plain Python, where numpy's
    calls would cost more than the loop, and give a list: one pass over their `owned_lists` marks what a
    claimant keeps and lists what one loses
    (a revoked partition whose new owner claimed it too is one a claimant keeps; with `GroupSpec.owned_disjoint`
    claims there is no other claimant, and a revoked one transfers as soon as somebody gets it)."""
    if spec.num_partitions <= SMALL_GROUP:
        owner: list[int] = new_owner.tolist()
        if spec.owned_disjoint:
            return [p for m, ids in enumerate(spec.owned_lists) for p in ids if owner[p] != m and owner[p] >= 0]
        kept = [False] * len(owner)  # kept by one of its claimants
        revoked: list[int] = []
        for m, ids in enumerate(spec.owned_lists):
            for p in ids:
                if owner[p] == m:
                    kept[p] = True
                else:
                    revoked.append(p)
        return [p for p in revoked if owner[p] >= 0 and not kept[p]]
    claimed = [ids for ids in spec.owned if ids.size]
    if not claimed:
        return _EMPTY
    claimed_ids = np.concatenate(claimed)
    claimants = np.repeat([m for m, o in enumerate(spec.owned) if o.size], [o.size for o in claimed])
    keeps = new_owner[claimed_ids] == claimants
    kept_by_claimant = np.zeros(spec.num_partitions, dtype=bool)
    kept_by_claimant[claimed_ids[keeps]] = True
    revoked_mask = np.zeros(spec.num_partitions, dtype=bool)
    revoked_mask[claimed_ids[~keeps]] = True
    return np.flatnonzero((new_owner >= 0) & ~kept_by_claimant & revoked_mask)


class CooperativeStickyAssignor:
    name = "cooperative-sticky"
    prefer_rack_aware = False  # Kafka's test-only preferRackAwareLogic

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        result = run_engine(spec, prefer_rack_aware=self.prefer_rack_aware)
        withheld_ids = _withheld(spec, result)
        if not len(withheld_ids):
            return result.assignment
        withheld = np.zeros(spec.num_partitions, dtype=bool)
        withheld[withheld_ids] = True
        return [ids[~withheld[ids]] if ids.size else ids for ids in result.assignment]

    def owners(self, spec: GroupSpec) -> np.ndarray:
        """int32 member index per global partition id (-1: nobody): `assign` as `assign_owners` wants it,
        the engine's owners without the transferring partitions (read-only and shared with the engine's
        result when nothing transfers), and no per-member lists. A small group's few transfers (a list) are
        cleared one at a time: numpy converts a list index to an array first, which costs more."""
        result = run_engine(spec, prefer_rack_aware=self.prefer_rack_aware)
        withheld = _withheld(spec, result)
        if not len(withheld):
            return result.owners
        owners = result.owners.copy()
        if isinstance(withheld, list):
            for p in withheld:
                owners[p] = -1
        else:
            owners[withheld] = -1
        return owners


def _withheld(spec: GroupSpec, result: EngineResult) -> np.ndarray | list[int]:
    """The global ids of the partitions transferring ownership, which nobody gets this round."""
    if result.general:
        return transferring_after_the_fact(spec, result.owners)
    return result.transfer_ids  # type: ignore[return-value]
