"""Java ordering rules that Kafka's results depend on.

Kafka sorts member ids with `String.compareTo` (UTF-16 code units) and iterates `HashMap`s by bucket.
A faithful port must reproduce both; Python's `str` order differs only beyond the BMP, the HashMap
order differs always.
"""

from __future__ import annotations

from codecs import utf_16_be_encode
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

import numpy as np

_TREEIFY_THRESHOLD: Final = 8  # a bin reaching 9 entries asks for a tree ...
_MIN_TREEIFY_CAPACITY: Final = 64  # ... which a smaller table answers by doubling instead
_VECTOR_MIN: Final = 64  # more keys than this: hash them with numpy (small groups hit `java_string_hash`'s cache)


def java_string_key(s: str) -> bytes:
    """Sort key giving Java's `String.compareTo` order (UTF-16 code units); always bytes, so that ASCII
    and non-ASCII keys stay comparable. The codec's function itself: `str.encode` looks the codec up by name
    on every call, which cost 3x the encoding (member ids are keyed per rebalance)."""
    return utf_16_be_encode(s)[0]


@lru_cache(maxsize=1 << 16)  # member ids recur in every rebalance of a replayed group
def java_string_hash(s: str) -> int:
    """Java's `String.hashCode` as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


# key -> `java_string_hash` as Java's `HashMap` spreads it (`h ^ h >>> 16`), unsigned
_SPREADS: Final[dict[str, int]] = {}
_SPREADS_KEPT: Final = 1 << 16  # member ids recur in every rebalance of a replayed group; beyond this many, start over


def hashmap_order(keys: Iterable[str], initial_capacity: int = 16) -> list[str]:
    """Iteration order of a `java.util.HashMap<String, ?>` filled with `keys` in the given order.

    Buckets are `(h ^ h >>> 16) & (capacity - 1)`; capacity starts at 16 (`new HashMap<>(n)`: the
    power of two >= n, which is what `initial_capacity` is for) and doubles when the size exceeds
    0.75 x capacity, and when a bucket reaches 9 entries while the capacity is below 64 (Java's
    `treeifyBin` resizes instead of building a tree there). A bucket keeps insertion order. Not
    modelled: the order inside a bucket that has become a tree (9+ keys of one bucket at capacity
    >= 64: hash then `compareTo` placement instead of insertion order).
    """
    unique = list(dict.fromkeys(keys))
    return [unique[i] for i in hashmap_positions(unique, initial_capacity)]


def hashmap_positions(keys: list[str], initial_capacity: int = 16) -> list[int]:
    """`hashmap_order` of distinct `keys` as positions into `keys`; up to `_VECTOR_MIN` keys in plain
    Python, where a numpy call costs more than the loop. A list: its readers index it in Python (the sticky
    engine's member order), and an array made from it only to be listed again cost more than the ordering."""
    first = 1
    while first < initial_capacity:
        first *= 2
    capacity = first
    while len(keys) > 0.75 * capacity:
        capacity *= 2
    if len(keys) > _VECTOR_MIN:  # then the table has 128+ buckets: a long bucket never resizes it
        hashes = _string_hashes(keys)
        spread = (hashes ^ (hashes >> np.uint64(16))) & np.uint64(capacity - 1)
        return np.argsort(spread, kind="stable").tolist()  # stable: insertion order in a bucket
    spreads: list[int] = []  # a dict read per key: an `lru_cache` call per key cost a third of a 10-member group
    for key in keys:
        spread = _SPREADS.get(key)
        if spread is None:
            if len(_SPREADS) >= _SPREADS_KEPT:
                _SPREADS.clear()
            h = java_string_hash(key) & 0xFFFFFFFF
            spread = _SPREADS[key] = h ^ (h >> 16)
        spreads.append(spread)
    # a bucket of 9 doubles a table below 64; past 48 keys the load alone needs 64 or more
    if (
        len(keys) > _TREEIFY_THRESHOLD
        and capacity < _MIN_TREEIFY_CAPACITY
        and _has_long_bucket(spreads, first)
    ):  # buckets only split as the table grows: without a 9-long one at the start there is none later
        capacity = _capacity_with_long_buckets(spreads, first)
    # by bucket, then insertion order: one sort of plain ints (bucket * n + position), no key function
    mask, n = capacity - 1, len(keys)
    slots = sorted([(s & mask) * n + i for i, s in enumerate(spreads)])
    return [k % n for k in slots]


def _has_long_bucket(spread: list[int], capacity: int) -> bool:
    """Whether a bucket of a `capacity`-bucket table holds more than `_TREEIFY_THRESHOLD` of these spread
    hashes: counted in a list (a `Counter` of a generator cost half of a 10-member group's ordering)."""
    counts = [0] * capacity
    mask = capacity - 1
    for s in spread:
        n = counts[s & mask] + 1
        if n > _TREEIFY_THRESHOLD:
            return True
        counts[s & mask] = n
    return False


def _string_hashes(keys: list[str]) -> np.ndarray:
    """`java_string_hash` of many keys at once (numpy over character positions), unsigned, as uint64."""
    data = "".join(keys).encode("utf-16-le")
    codes = np.frombuffer(data, dtype="<u2").astype(np.uint64)
    if codes.size == sum(map(len, keys)):  # no key beyond the BMP: one code unit per character
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    else:
        lengths = np.array([len(k.encode("utf-16-le")) // 2 for k in keys], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    h = np.zeros(len(keys), dtype=np.uint64)
    shortest = int(lengths.min(initial=0))
    for j in range(int(lengths.max(initial=0))):
        if j < shortest:
            h = (h * np.uint64(31) + codes[starts + j]) & np.uint64(0xFFFFFFFF)
        else:
            live = np.flatnonzero(lengths > j)
            h[live] = (h[live] * np.uint64(31) + codes[starts[live] + j]) & np.uint64(0xFFFFFFFF)
    return h


def _capacity_with_long_buckets(spread: list[int], capacity: int) -> int:
    """Java's table size after inserting keys with these spread hashes one by one, starting from
    `capacity`: doubling past 0.75 load, and (below 64) when a bucket reaches 9 entries."""
    counts: Counter[int] = Counter()
    for size, s in enumerate(spread, start=1):
        mask = capacity - 1
        counts[s & mask] += 1
        if counts[s & mask] > _TREEIFY_THRESHOLD and capacity < _MIN_TREEIFY_CAPACITY:
            capacity *= 2
        if size > 0.75 * capacity:
            capacity *= 2
        if capacity - 1 != mask:
            counts = Counter(x & (capacity - 1) for x in spread[:size])
    return capacity
