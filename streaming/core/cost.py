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

import numpy as np

from assignors.compiled import kernel
from assignors.registry import CONSUMER_PROTOCOL

_K = kernel("streaming.core.load_kernel")  # `lag_added` in C (None: the Python sum runs)


class Paused:
    """The partitions a round pauses, for its `lag_added`: those held `before` it (an owner >= 0) that `after`
    gives to another owner, or every one held when `after` is None (an eager round); `rates` their msgs/s. The
    three are on one layout: float64 rates, int32 owners."""

    def __init__(self, rates: np.ndarray, before: np.ndarray, after: np.ndarray | None) -> None:
        self.rates, self.before, self.after = rates, before, after

    def rates_list(self) -> list[float]:
        """msgs/s of each paused partition, in partition order."""
        held = self.before >= 0
        return self.rates[held if self.after is None else held & (self.before != self.after)].tolist()


_NO_PARTITIONS = np.zeros(0, dtype=np.int32)
NOTHING_PAUSED = Paused(np.zeros(0, dtype=np.float64), _NO_PARTITIONS, _NO_PARTITIONS)  # a record that pauses none


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


def lag_added(paused: Paused, stop_ms: int | float) -> float:
    """A diff record's `lag_added`: messages that pile up while the round's paused partitions stop, the fsum over
    them of `rate × stop_ms / 1000` (`stop_ms`: the record's `partition_stop_ms`, as a float the same double the
    product would convert it to: it is below 2^53). Computed in C where the load kernel is built."""
    ms = float(stop_ms)
    if _K is not None:
        found = _K.lag_added(paused.rates, paused.before, paused.after, ms)
        if found is not None:
            return found
    return math.fsum([rate * ms / 1000.0 for rate in paused.rates_list()])
