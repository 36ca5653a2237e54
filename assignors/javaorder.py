"""Java ordering rules that Kafka's results depend on.

Kafka sorts member ids with `String.compareTo` (UTF-16 code units) and iterates `HashMap`s by bucket.
A faithful port must reproduce both; Python's `str` order differs only beyond the BMP, the HashMap
order differs always.
"""

from __future__ import annotations

from collections.abc import Iterable


def java_string_key(s: str) -> bytes:
    """Sort key giving Java's `String.compareTo` order (UTF-16 code units); always bytes, so that ASCII
    and non-ASCII keys stay comparable."""
    return s.encode("utf-16-be")


def java_string_hash(s: str) -> int:
    """Java's `String.hashCode` as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def hashmap_order(keys: Iterable[str], initial_capacity: int = 16) -> list[str]:
    """Iteration order of a `java.util.HashMap<String, ?>` filled with `keys` in the given order.

    Buckets are `(h ^ h >>> 16) & (capacity - 1)`; capacity starts at 16 (`new HashMap<>(n)`: the
    power of two >= n, which is what `initial_capacity` is for) and doubles when the size exceeds
    0.75 x capacity; a bucket keeps insertion order (treeified buckets, which need eight colliding
    keys, are not modelled).
    """
    unique = list(dict.fromkeys(keys))
    capacity = 1
    while capacity < initial_capacity:
        capacity *= 2
    while len(unique) > 0.75 * capacity:
        capacity *= 2
    buckets: dict[int, list[str]] = {}
    for key in unique:
        h = java_string_hash(key) & 0xFFFFFFFF
        buckets.setdefault((h ^ (h >> 16)) & (capacity - 1), []).append(key)
    return [key for bucket in sorted(buckets) for key in buckets[bucket]]
