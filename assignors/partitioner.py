"""Kafka's producer partitioning: keyed records go to ``toPositive(murmur2(key)) % numPartitions``, null-key
records round robin over the available partitions with a per-topic counter (`DefaultPartitioner`).

`murmur2` is Kafka's `Utils.murmur2` (MurmurHash2, seed 0x9747b28c, little-endian 4-byte blocks,
unsigned bytes), returning the signed 32-bit value Java would. `rebalance load` partitions every event
by its group id with it, so the hash is memoised: a log has few distinct keys and many records.
`DefaultPartitioner` is the Java client's as the founding documents show it (0.10.2 to 2.3, KAFKA-4402);
Kafka's later null-key paths (2.4 sticky, 3.3 uniform sticky) are in docs/traffic.md.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import lru_cache

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


@lru_cache(maxsize=1 << 16)
def _murmur2(data: bytes) -> int:
    length = len(data)
    h = (_SEED ^ length) & _MASK
    nblocks = length >> 2
    for k in struct.unpack_from(f"<{nblocks}I", data):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = nblocks << 2
    rem = length & 3
    if rem == 3:
        h ^= data[tail + 2] << 16
    if rem >= 2:
        h ^= data[tail + 1] << 8
    if rem >= 1:
        h ^= data[tail]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def _as_bytes(value: object, name: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise ValueError(f"{name}: expected bytes, got {type(value).__name__}")


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2(data)`: a signed 32-bit int."""
    return _murmur2(_as_bytes(data, "data"))


def to_positive(number: int) -> int:
    """Kafka's `Utils.toPositive`: clears the sign bit of a 32-bit int (not `abs`: -1 -> 2147483647)."""
    if isinstance(number, bool) or not isinstance(number, int):
        raise ValueError(f"number: expected an int, got {type(number).__name__}")
    return number & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition Kafka's producer picks for a record with this serialized key (all partitions count)."""
    return (_murmur2(_as_bytes(key, "key")) & 0x7FFFFFFF) % _check_count(num_partitions)


_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1


def _check_count(num_partitions: object) -> int:
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
        raise ValueError(f"num_partitions: expected an int, got {type(num_partitions).__name__}")
    if num_partitions < 1:
        raise ValueError(f"num_partitions: must be >= 1, got {num_partitions}")
    return num_partitions


class DefaultPartitioner:
    """Kafka's `DefaultPartitioner` (0.10.2 - 2.3): one instance is one producer's partitioner.

    Keyed records: `partition_for_key`, over all partitions whatever is available. Null-key records: a counter
    per topic, created at `counter_start` on the topic's first null-key record (Java draws it with
    `ThreadLocalRandom.nextInt()`) and read then incremented by each one (`AtomicInteger.getAndIncrement`, 32-bit
    signed: 2147483647 is followed by -2147483648); it picks `available[toPositive(value) % len(available)]`, or
    `toPositive(value) % num_partitions` when no partition is available.
    """

    def __init__(self, counter_start: int = 0) -> None:
        if isinstance(counter_start, bool) or not isinstance(counter_start, int):
            raise ValueError(f"counter_start: expected an int, got {type(counter_start).__name__}")
        if not _INT32_MIN <= counter_start <= _INT32_MAX:
            raise ValueError(f"counter_start: {counter_start} is outside Java's 32-bit int range")
        self.counter_start = counter_start
        self._counters: dict[str, int] = {}  # topic -> the value its next null-key record reads

    def partition(self, topic: str, key: bytes | None, num_partitions: int,
                  available: Sequence[int] | None = None) -> int:
        """The partition of one record of `topic`; `available`: the partitions with a leader, in metadata order
        (None: all of them)."""
        if not isinstance(topic, str):
            raise ValueError(f"topic: expected a str, got {type(topic).__name__}")
        n = _check_count(num_partitions)
        if key is not None:
            return partition_for_key(key, n)
        if available is not None:
            available = _check_available(available, n)
        value = self._counters.get(topic, self.counter_start)
        self._counters[topic] = _INT32_MIN if value == _INT32_MAX else value + 1
        if available is None:
            return (value & 0x7FFFFFFF) % n
        if available:
            return available[(value & 0x7FFFFFFF) % len(available)]
        return (value & 0x7FFFFFFF) % n


def _check_available(available: object, num_partitions: int) -> list[int]:
    if isinstance(available, (str, bytes)) or not isinstance(available, Sequence):
        raise ValueError(f"available: expected a list of partition numbers, got {type(available).__name__}")
    out = list(available)
    for p in out:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < num_partitions:
            raise ValueError(f"available: expected partition numbers in [0, {num_partitions}), got {p!r}")
    return out
