"""Kafka's partition assignors, exact and fast: range, roundrobin, sticky, cooperative-sticky, the
KIP-848 server-side uniform and range, MetaQ's balance strategies, and what-if ones (weighted, rate-balanced)."""

from assignors.errors import KafkaAssignorError
from assignors.model import GroupSpec, Member, build_spec
from assignors.registry import (
    OWNERSHIP_BLIND,
    RATE_AWARE,
    STRATEGIES,
    SUBSCRIBERS_ONLY,
    assign,
    assign_owners,
    assign_spec,
    get_assignor,
)

__all__ = [
    "OWNERSHIP_BLIND",
    "RATE_AWARE",
    "STRATEGIES",
    "SUBSCRIBERS_ONLY",
    "GroupSpec",
    "KafkaAssignorError",
    "Member",
    "assign",
    "assign_owners",
    "assign_spec",
    "build_spec",
    "get_assignor",
]
