"""What a pipeline run is configured with: the strategies to replay, the size limits on user input, and the
timing of the cost model (docs/cost.md).

Every limit bounds something an event author controls (event size, group size, name lengths), so that one
bad or hostile event becomes a dead letter instead of an out-of-memory crash or an oversized state blob.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assignors.registry import STRATEGIES, check_strategy


@dataclass(frozen=True)
class Limits:
    """Size limits; an event that would exceed one is dead-lettered and changes nothing."""

    max_event_bytes: int = 1_048_576  # one event's UTF-8 JSON
    max_name_chars: int = 1_024  # group, member, topic, rack and instance ids
    max_members_per_group: int = 10_000
    max_partitions_per_topic: int = 1_000_000
    max_topics_per_subscription: int = 1_000
    max_topics_per_group: int = 10_000  # topics the group ever learnt metadata for (deleted ones included)
    max_partitions_per_group: int = 2_000_000
    max_racks_per_group: int = 64  # distinct replica racks (the assignors keep racks as 64-bit masks)
    max_replicas_per_partition: int = 64
    max_departed_members: int = 1_000  # departed members whose last assignment is remembered (KIP-341)
    max_departed_partitions: int = 2_000_000  # total partitions over all remembered departed members
    max_followup_rounds: int = 4  # cooperative follow-up rounds after a revoke round
    max_record_bytes: int = 900_000  # diff/dead-letter record size; bigger diffs are split (Kafka's is 1 MB)

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"limits.{name}: expected a positive integer, got {value!r}")
        if self.max_racks_per_group > 64:
            raise ValueError(f"limits.max_racks_per_group: at most 64, got {self.max_racks_per_group}")
        if self.max_record_bytes < 4_096:
            raise ValueError(f"limits.max_record_bytes: at least 4096, got {self.max_record_bytes}")


MAX_TIMING_MS = 2**31 - 1  # Kafka's timeouts and intervals are Java ints; a day is 86,400,000


@dataclass(frozen=True)
class Timing:
    """The cost model's two durations (docs/cost.md): how long a classic-protocol rebalance stops a paused
    partition, and the consumer protocol's heartbeat interval (a revoked partition waits half of it on average
    for its new owner's next heartbeat). `observed`: a classic group's rounds take the duration the capture
    recorded on its latest `generation` event, `rebalance_ms` until one is seen."""

    rebalance_ms: int = 3_000
    heartbeat_ms: int = 5_000  # Kafka's group.consumer.heartbeat.interval.ms default
    observed: bool = False

    def __post_init__(self) -> None:
        for name in ("rebalance_ms", "heartbeat_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TIMING_MS:
                raise ValueError(f"timing: {name}: expected an integer number of milliseconds from 0 to "
                                 f"{MAX_TIMING_MS}, got {value!r}")

    def classic_ms(self, recorded_ms: int | None) -> int:
        """How long this group's classic rebalance stops a paused partition: the recorded duration when
        `observed` and the group has one, else `rebalance_ms`."""
        return recorded_ms if self.observed and recorded_ms is not None else self.rebalance_ms

    def text(self) -> str:
        """The `--timing` value that gives this timing."""
        return f"rebalance_ms={'observed' if self.observed else self.rebalance_ms},heartbeat_ms={self.heartbeat_ms}"


def parse_timing(text: str) -> Timing:
    """`--timing` value: comma-separated `key=value` pairs of `rebalance_ms` (milliseconds or `observed`) and
    `heartbeat_ms` (milliseconds); a key left out keeps its default. ValueError naming the key."""
    values: dict[str, int | bool] = {}
    for pair in text.split(","):
        if not pair.strip():
            continue
        key, sep, value = (part.strip() for part in pair.partition("="))
        if key not in ("rebalance_ms", "heartbeat_ms"):
            raise ValueError(f"timing: unknown key {key!r}; expected rebalance_ms=N,heartbeat_ms=N")
        if not sep or not value:
            raise ValueError(f"timing: {key}: expected {key}=N (milliseconds), got {pair.strip()!r}")
        if key in values or (key == "rebalance_ms" and "observed" in values):
            raise ValueError(f"timing: {key}: given twice")
        if key == "rebalance_ms" and value == "observed":
            values["observed"] = True
            continue
        if not value.isascii() or not value.isdigit():
            also = " or 'observed'" if key == "rebalance_ms" else ""
            raise ValueError(f"timing: {key}: expected an integer number of milliseconds{also}, got {value!r}")
        if len(value) > len(str(MAX_TIMING_MS)) or int(value) > MAX_TIMING_MS:
            raise ValueError(f"timing: {key}: {value} ms is above the maximum, {MAX_TIMING_MS}")
        values[key] = int(value)
    return Timing(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PipelineConfig:
    """The strategies every rebalance is replayed with, the input limits, whether diff records carry
    `min_moves` (an exact optimum: a small min-cost flow per round when subscriptions differ; off = null), and
    the cost model's timing (every record's `stopped_ms`)."""

    strategies: tuple[str, ...] = ("sticky", "cooperative-sticky")
    limits: Limits = field(default_factory=Limits)
    optimality: bool = True
    timing: Timing = field(default_factory=Timing)

    def __post_init__(self) -> None:
        if isinstance(self.strategies, str) or not self.strategies:
            raise ValueError("strategies: expected a non-empty tuple of strategy names")
        for name in self.strategies:
            check_strategy(name, "strategies")
        if len(set(self.strategies)) != len(self.strategies):
            raise ValueError(f"strategies: duplicate names in {list(self.strategies)}")


def parse_strategies(text: str) -> tuple[str, ...]:
    """`--strategies` value: a comma-separated list of names, or `all`."""
    if text.strip() == "all":
        return STRATEGIES
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise ValueError("strategies: expected a comma-separated list of strategy names or 'all'")
    for name in names:
        check_strategy(name, "strategies", also=("all",))
    return names
