"""Strategy name -> assignor, and the public `assign` entry point.

Every strategy is a class with a `name` and `assign(spec) -> list[np.ndarray]` (global partition ids
per member, in `spec.member_ids` order), like Kafka's one-class-per-strategy assignors over shared
engines; a `RATE_AWARE` one also takes the msgs/s of every partition, `assign(spec, rates)`. Modules are
imported on first use so that `import assignors` stays cheap.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np

from assignors.intake import plain_spec
from assignors.model import SMALL_GROUP, GroupSpec, Member, build_spec, owner_of

_STRATEGIES: dict[str, str] = {
    "range": "assignors.range:RangeAssignor",
    "roundrobin": "assignors.roundrobin:RoundRobinAssignor",
    "sticky": "assignors.sticky:StickyAssignor",
    "cooperative-sticky": "assignors.cooperative:CooperativeStickyAssignor",
    "uniform": "assignors.uniform:UniformAssignor",
    "server-range": "assignors.server_range:ServerRangeAssignor",
    "metaq-default": "assignors.metaq:MetaqDefaultAssignor",
    "metaq-consistent-hash": "assignors.metaq:MetaqConsistentHashAssignor",
    "weighted-sticky": "assignors.weighted:WeightedStickyAssignor",
    "rate-balanced": "assignors.rate_balanced:RateBalancedAssignor",
}
STRATEGIES: tuple[str, ...] = tuple(_STRATEGIES)
# strategies whose result depends on the topics and members alone: they read no member's `owned` or
# `generations` (Kafka's Range and RoundRobin ignore ownedPartitions; server Range and MetaQ's take none),
# so a caller may give them a spec without the round's claims (tests/assignors/test_properties.py checks it)
OWNERSHIP_BLIND: frozenset[str] = frozenset(
    {"range", "roundrobin", "server-range", "metaq-default", "metaq-consistent-hash"})
# strategies that give a member only partitions of topics it subscribes to, whatever it owned (Kafka's Range
# and RoundRobin hand a topic's partitions to its subscribers alone; the sticky engine may hand one back to a
# previous owner): no member of theirs rejects its assignment (tests/assignors/test_properties.py checks it)
SUBSCRIBERS_ONLY: frozenset[str] = frozenset({"range", "roundrobin"})
# strategies that read the partitions' msgs/s (the `rates` argument below); the others ignore it, as Kafka's do
RATE_AWARE: frozenset[str] = frozenset({"rate-balanced"})
# the consumer protocol's (KIP-848) broker-side assignors: the coordinator revokes only the partitions that move
CONSUMER_PROTOCOL: frozenset[str] = frozenset({"uniform", "server-range"})
# not a strategy: the row of what a captured group was given (its recorded generations); no strategy takes it
OBSERVED = "observed"


class Assignor(Protocol):
    name: str

    def assign(self, spec: GroupSpec) -> list[np.ndarray]: ...


def check_strategy(strategy: object, where: str = "strategy", *, also: Sequence[str] = ()) -> str:
    """`strategy` when it is a registered name (or one of `also`); else ValueError naming `where`."""
    if isinstance(strategy, str) and (strategy in _STRATEGIES or strategy in also):
        return strategy
    raise ValueError(f"{where}: unknown strategy {strategy!r}; expected one of {', '.join([*STRATEGIES, *also])}")


def get_assignor(strategy: str) -> Assignor:
    """The assignor registered under `strategy` (ValueError naming the field if unknown)."""
    return _assignor_class(check_strategy(strategy))()


@lru_cache(maxsize=len(_STRATEGIES))
def _assignor_class(strategy: str) -> type[Assignor]:
    """The class, looked up once per strategy: a replay calls an assignor several times per event."""
    module, cls = _STRATEGIES[strategy].split(":")
    return getattr(importlib.import_module(module), cls)


def assign_spec(strategy: str, spec: GroupSpec, rates: np.ndarray | None = None) -> list[np.ndarray]:
    """Array-level entry point: global partition ids per member, in `spec.member_ids` order. `rates`: float64 msgs/s
    per global partition id, for a `RATE_AWARE` strategy (None: no traffic)."""
    assignor = get_assignor(strategy)
    if strategy in RATE_AWARE:
        return assignor.assign(spec, rates)  # type: ignore[call-arg]
    return assignor.assign(spec)


def assign_owners(strategy: str, spec: GroupSpec, rates: np.ndarray | None = None) -> np.ndarray:
    """`assign_spec` as int32 owners (member index per global partition id, -1: nobody), what the streaming
    state machine keeps: from the assignor's own `owners(spec)` where it computes those anyway (Range,
    RoundRobin), which spares building and re-reading the per-member lists on every small round. `rates`: as in
    `assign_spec`."""
    if strategy in RATE_AWARE:
        return owner_of(assign_spec(strategy, spec, rates), spec.num_partitions)
    return _owners_function(check_strategy(strategy))(spec)


@lru_cache(maxsize=len(_STRATEGIES))
def _owners_function(strategy: str) -> Callable[[GroupSpec], np.ndarray]:
    """`assign_owners`' call for one strategy, made once: assignors keep nothing between calls, and a replay
    makes several per event (`get_assignor` still gives every caller an instance of its own)."""
    assignor = get_assignor(strategy)
    owners = getattr(assignor, "owners", None)
    return owners if owners is not None else lambda spec: owner_of(assignor.assign(spec), spec.num_partitions)


def assign(
    strategy: str,
    topics: Mapping[str, int],
    members: Mapping[str, Member],
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
    partition_rates: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, list[tuple[str, int]]]:
    """Kafka's assignment for one rebalance: member id -> partitions sorted by (topic, partition).

    `members` is in the order the group leader received them (docs/assignors.md); the sticky family iterates
    them in the order of the leader's Java `HashMap` filled in that order (`GroupSpec.leader_order`).
    `partition_rates`: msgs/s per partition of each topic (topics left out carry 0), read by `RATE_AWARE`
    strategies only.

    A small group's plain input (`assignors.intake`) takes the streaming state machine's route: its spec in list
    form, the assignor's owners (`assign_owners`, where the assignor computes them) and one walk over them.
    """
    assignor = get_assignor(strategy)
    spec = plain_spec(topics, members, partition_racks)
    if spec is None:
        spec = build_spec(topics, members, partition_racks)
    try:
        rates = None if partition_rates is None else rates_array(spec, partition_rates)
        if strategy in RATE_AWARE:
            return spec.to_result(assign_spec(strategy, spec, rates))
        if spec.num_partitions <= SMALL_GROUP and hasattr(assignor, "owners"):
            return spec.owners_result(_owners_function(strategy)(spec))
        return spec.to_result(assignor.assign(spec))
    finally:
        spec.release()


def rates_array(spec: GroupSpec, partition_rates: Mapping[str, Sequence[float]]) -> np.ndarray:
    """`partition_rates` ({topic: msgs/s per partition}) as float64 per global id of `spec`; ValueError naming the
    entry when a topic has no metadata, a list has another length than the topic, or a rate is negative or not
    finite."""
    if not isinstance(partition_rates, Mapping):
        raise ValueError(f"partition_rates: expected a mapping of topic -> rates, got {type(partition_rates).__name__}")
    out = np.zeros(spec.num_partitions, dtype=np.float64)
    for topic, values in partition_rates.items():
        where = f"partition_rates[{topic!r}]"
        t = spec.topic_index.get(topic) if isinstance(topic, str) else None
        if t is None:
            raise ValueError(f"{where}: no partition count for this topic in `topics`")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
            raise ValueError(f"{where}: expected a list of msgs/s per partition")
        size = int(spec.topic_sizes[t])
        if len(values) != size:
            raise ValueError(f"{where}: {len(values)} rates for {size} partitions")
        for p, r in enumerate(values):
            if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not (
                    math.isfinite(r) and r >= 0):
                raise ValueError(f"{where}[{p}]: expected a finite number >= 0, got {r!r}")
        start = int(spec.topic_start[t])
        out[start:start + size] = [float(r) for r in values]
    return out
