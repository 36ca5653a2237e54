"""Kafka's `StickyAssignor` (eager, name "sticky"): the shared sticky engine's result as it is.

Ownership and generation come from each member's `owned`/`generation` (what Kafka's StickyAssignor
reads from its userData). Not modelled: the engine's `maxGeneration` persisting across calls on one
assignor instance (we are stateless per call), and the difference between the userData generation and
the protocol generationId of V0/V1 subscriptions (our `Member` has a single generation, used for both).
"""

from __future__ import annotations

import numpy as np

from assignors.model import GroupSpec
from assignors.sticky_engine.engine import run_engine


class StickyAssignor:
    name = "sticky"
    prefer_rack_aware = False  # Kafka's test-only preferRackAwareLogic

    def assign(self, spec: GroupSpec) -> list[np.ndarray]:
        return run_engine(spec, prefer_rack_aware=self.prefer_rack_aware).assignment

    def owners(self, spec: GroupSpec) -> np.ndarray:
        """int32 member index per global partition id (-1: nobody), read-only: `assign` as `assign_owners`
        wants it, shared with a repeated call's result (`EngineResult.owners`)."""
        return run_engine(spec, prefer_rack_aware=self.prefer_rack_aware).owners
