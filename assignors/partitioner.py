"""Kafka's producer partitioning for keyed records: ``toPositive(murmur2(key)) % numPartitions``.

`murmur2` is Kafka's `Utils.murmur2` (MurmurHash2, seed 0x9747b28c, little-endian 4-byte blocks,
unsigned bytes), returning the signed 32-bit value Java would. `rebalance load` partitions every event
by its group id with it, so the hash is memoised: a log has few distinct keys and many records.
"""

from __future__ import annotations

import struct
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
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
        raise ValueError(f"num_partitions: expected an int, got {type(num_partitions).__name__}")
    if num_partitions < 1:
        raise ValueError(f"num_partitions: must be >= 1, got {num_partitions}")
    return (_murmur2(_as_bytes(key, "key")) & 0x7FFFFFFF) % num_partitions
