"""What a pipeline run is configured with: the strategies to replay and the size limits on user input.

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


@dataclass(frozen=True)
class PipelineConfig:
    """The strategies every rebalance is replayed with, the input limits, and whether diff records carry
    `min_moves` (an exact optimum: a small min-cost flow per round when subscriptions differ; off = null)."""

    strategies: tuple[str, ...] = ("sticky", "cooperative-sticky")
    limits: Limits = field(default_factory=Limits)
    optimality: bool = True

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
