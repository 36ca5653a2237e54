"""What each strategy's rebalances cost a group in time and lag (docs/cost.md), summed from diff records, and
the timing the records were computed with, read back from the records themselves.

The report learns the timing from the records, not from the replay's command line: a report reads records
from a replay's folder or from the diffs topic of `serve`, and both carry `stopped_ms` with its `paused`, so
`stopped_ms / paused` is the time each paused partition stopped in that round — one value for the consumer
protocol's strategies (half the heartbeat interval), and for the classic ones `rebalance_ms`, or under
`rebalance_ms=observed` the group's captured durations (then several values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from assignors.registry import CONSUMER_PROTOCOL, OBSERVED

# the consumer-protocol strategy a move is shown with: `uniform` first, as Kafka's group.consumer.assignors default
# lists it
_TARGETS = sorted(CONSUMER_PROTOCOL, key=lambda name: (name != "uniform", name))


@dataclass
class StrategyCost:
    """One strategy's rounds in one group: partition-milliseconds stopped and messages of lag added."""

    stopped_ms: Fraction = Fraction(0)
    lag: list[float] = field(default_factory=list)  # each round's `lag_added` (records of groups with traffic)
    rounds: int = 0
    missing: int = 0  # records without `stopped_ms` (written before the cost model)

    @property
    def partition_seconds(self) -> float:
        return float(self.stopped_ms / 1000)

    @property
    def lag_added(self) -> float | None:
        """Messages piled up over all rounds (None: no record carried `lag_added`, the group had no traffic)."""
        return math.fsum(self.lag) if self.lag else None


@dataclass
class GroupCost:
    """Per strategy (in the order first met: the configured order), its cost; the recorded protocols of the
    observed records; and the per-partition stop times seen (ms) — classic and consumer protocol."""

    strategies: dict[str, StrategyCost] = field(default_factory=dict)
    protocols: list[str | None] = field(default_factory=list)
    classic_ms: set[Fraction] = field(default_factory=set)
    consumer_ms: set[Fraction] = field(default_factory=set)

    def baseline(self) -> tuple[str, str] | None:
        """The strategy a move to the consumer protocol is weighed against, and why: the group's own
        (`observed`) when it was captured, else the first classic strategy replayed."""
        if OBSERVED in self.strategies:
            own = next((p for p in reversed(self.protocols) if p is not None), None)
            return OBSERVED, f"what the group itself did as captured{f' ({own})' if own else ''}"
        for name in self.strategies:
            if name not in CONSUMER_PROTOCOL:
                return name, "the first classic strategy replayed, as the group was not captured"
        return None

    def target(self) -> str | None:
        """The consumer-protocol strategy replayed for this group: `uniform` where there, else `server-range`."""
        return next((name for name in _TARGETS if name in self.strategies), None)


class CostCollector:
    """One pass over diff records (any order, split records once, each round once): `GroupCost` per group."""

    def __init__(self) -> None:
        self.groups: dict[str, GroupCost] = {}
        self._seen: set[tuple[str, str, int, str]] = set()

    def add(self, rec: dict) -> None:
        if rec.get("part", 1) != 1 or rec.get("phase") == "replace":  # parts repeat the metrics; no round
            return
        group, strategy = str(rec["group"]), str(rec["strategy"])
        key = (group, strategy, int(rec["generation"]), str(rec["phase"]))
        if key in self._seen:
            return
        self._seen.add(key)
        cost = self.groups.setdefault(group, GroupCost())
        row = cost.strategies.setdefault(strategy, StrategyCost())
        row.rounds += 1
        protocol = rec.get("protocol") if strategy == OBSERVED else strategy
        if strategy == OBSERVED:
            cost.protocols.append(protocol)
        stopped = rec.get("stopped_ms")
        if stopped is None:
            row.missing += 1
            return
        row.stopped_ms += Fraction(stopped)
        if rec.get("lag_added") is not None:
            row.lag.append(float(rec["lag_added"]))
        paused = int(rec["paused"])
        if paused:
            (cost.consumer_ms if protocol in CONSUMER_PROTOCOL else cost.classic_ms).add(Fraction(stopped) / paused)
