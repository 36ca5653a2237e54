"""The cost model (docs/cost.md): how long a round stops consumption, and the messages that pile up meanwhile.

A classic-protocol rebalance (every client-side strategy) holds its paused partitions for the whole
JoinGroup/SyncGroup round, `rebalance_ms`; a consumer-protocol (KIP-848) round stops a revoked partition only
until its new owner's next heartbeat, on average half the heartbeat interval. The `observed` pseudo-strategy
follows the protocol the group recorded (a record's `protocol`).

Numbers are exact and spelt one way: `stopped_ms` is an int, or an int and a half (an odd
`paused × heartbeat_ms`), which a double holds exactly far beyond any real group (`paused × heartbeat_ms`
below 2^53) and which both JSON encoders write alike (`2.5`); `lag_added` is the `math.fsum` of its terms, so
the same inputs give the same bits in both builds, whatever the batching.
"""

from __future__ import annotations

import math

from assignors.registry import CONSUMER_PROTOCOL


def partition_stop_ms(protocol: str | None, rebalance_ms: int, heartbeat_ms: int) -> int | float:
    """How long one paused partition stops in a round of `protocol` (a strategy name, or the recorded protocol of
    an `observed` record; None, an emptied group's, counts as classic): `heartbeat_ms / 2` for the consumer
    protocol's strategies, `rebalance_ms` for every other."""
    if protocol in CONSUMER_PROTOCOL:
        return heartbeat_ms // 2 if heartbeat_ms % 2 == 0 else heartbeat_ms / 2
    return rebalance_ms


def stopped_ms(protocol: str | None, paused: int, rebalance_ms: int, heartbeat_ms: int) -> int | float:
    """A diff record's `stopped_ms`: partition-milliseconds of consumption stopped by the round, `paused` times
    `partition_stop_ms` (an int when the product is integral)."""
    if protocol in CONSUMER_PROTOCOL:
        doubled = paused * heartbeat_ms
        return doubled // 2 if doubled % 2 == 0 else doubled / 2
    return paused * rebalance_ms


def lag_added(paused_rates: list[float], stop_ms: int | float) -> float:
    """A diff record's `lag_added`: messages that pile up while the round's paused partitions stop, the fsum over
    them of `rate × stop_ms / 1000` (`paused_rates`: msgs/s of each paused partition, in any order; `stop_ms`:
    the record's `partition_stop_ms`). `stop_ms` as a float is the same double the product would convert it to
    (it is below 2^53), declared so that the compiled build multiplies unboxed doubles."""
    ms = float(stop_ms)
    return math.fsum([rate * ms / 1000.0 for rate in paused_rates])
