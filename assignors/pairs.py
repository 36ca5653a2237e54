"""Reuse of the public API's `(topic, partition)` tuples across `assign()` calls.

A million-partition result is a million tuples, and allocating them (plus the GC pass over every new
tuple) costs more than computing the assignment. Three facts make reuse safe and cheap:

- a tuple of a str and an int is immutable, so results may share them: `PairCache` keeps, per topic
  layout, the tuple of each global partition id once made, and later results hand out the same one
  (made in result order, so results that look alike — sticky ones — touch memory in order);
- the next rebalance usually gets the previous result back as `Member.owned`: `RESULTS` remembers the
  lists the last results handed out, with their global ids, so they are recognised without reading a
  pair. A list changed since then (compared by identity of its items, not by value) takes the
  validated path like any other input;
- owned pairs that pass validation as plain `(str, int)` tuples seed the cache, so a result mostly
  made of what members already owned (a sticky one) allocates little even when `owned` came from JSON.

Both caches are bounded: `MAX_CACHED_PAIRS` tuples over all cached layouts, the lists of the last
`RESULTS_KEPT` results (at most `MAX_CACHED_PAIRS` partitions in all).
"""

from __future__ import annotations

import functools
import itertools
import operator
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

MAX_CACHED_PAIRS = 4_000_000  # ≈ 80 bytes each (tuple + array slot): ≈ 320 MB at the bound
RESULTS_KEPT = 8  # results; and at most MAX_CACHED_PAIRS partitions over them

LayoutKey = tuple[tuple[str, ...], tuple[int, ...]]  # topic names and sizes, in global id order


@dataclass(eq=False)
class PairLayout:
    """The tuples made so far for one topic layout, by global partition id."""

    key: LayoutKey
    pairs: np.ndarray = field(init=False)  # object[P]: the tuple of id, or None until made
    made: np.ndarray = field(init=False)  # bool[P]
    every: list | None = field(init=False, default=None)  # `listed`: every id's tuple, once all are made

    def __post_init__(self) -> None:
        size = sum(self.key[1])
        self.pairs = np.full(size, None, dtype=object)
        self.made = np.zeros(size, dtype=bool)

    def listed(self) -> list:
        """Every id's tuple, as a list by global id, making missing ones (once made, a tuple never changes)."""
        if self.every is None:
            missing = np.flatnonzero(~self.made)
            if missing.size:
                self.pairs[missing] = _make(self.key, missing)
                self.made[missing] = True
            self.every = self.pairs.tolist()
        return self.every

    def take(self, flat: np.ndarray, bounds: list[int]) -> list[np.ndarray]:
        """The tuples of `flat[bounds[i]:bounds[i + 1]]` as one object array per i, making missing ones."""
        have = self.made[flat]
        if not have.any():  # all new (a cold cache): made in result order, handed out as views
            made = _make(self.key, flat)
            self.pairs[flat] = made
            self.made[flat] = True
            return [made[lo:hi] for lo, hi in pairwise(bounds)]
        if not have.all():
            missing = flat[~have]
            self.pairs[missing] = _make(self.key, missing)
            self.made[missing] = True
        return [self.pairs[flat[lo:hi]] for lo, hi in pairwise(bounds)]

    def seed(self, ids: np.ndarray, tuples: np.ndarray) -> None:
        """Adopt a caller's `(str, int)` tuples for ids that have none yet (immutable, so shareable)."""
        new = ~self.made[ids]
        self.pairs[ids[new]] = tuples[new]
        self.made[ids[new]] = True

    def copy_from(self, other: PairLayout) -> None:
        """Take over the tuples `other` made for topics both layouts have."""
        starts = dict(zip(other.key[0], np.cumsum((0, *other.key[1])).tolist(), strict=False))
        sizes = dict(zip(other.key[0], other.key[1], strict=True))
        at = 0
        for name, size in zip(*self.key, strict=True):
            if name in starts:
                n = min(size, sizes[name])
                self.pairs[at : at + n] = other.pairs[starts[name] : starts[name] + n]
                self.made[at : at + n] = other.made[starts[name] : starts[name] + n]
            at += size


def _make(key: LayoutKey, ids: np.ndarray) -> np.ndarray:
    """New tuples for global ids (a 1-d object array, so that numpy does not unpack them)."""
    starts = np.cumsum((0, *key[1]))
    topic = np.searchsorted(starts, ids, side="right") - 1
    names = np.asarray(key[0], dtype=object)[topic].tolist()
    numbers = np.arange(max(key[1]), dtype=object)[ids - starts[topic]].tolist()
    return np.fromiter(zip(names, numbers, strict=True), dtype=object, count=ids.size)


class PairCache:
    """`PairLayout`s by layout key, least recently used dropped beyond `limit` tuples in total."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._layouts: OrderedDict[LayoutKey, PairLayout] = OrderedDict()
        # counts the layouts dropped (cleared, evicted): a `listed` answer holds while it has not changed
        self.epoch = 0

    def take(self, key: LayoutKey, flat: np.ndarray, bounds: list[int]) -> list[np.ndarray]:
        with self._lock:
            return self._layout(key).take(flat, bounds)

    def listed(self, key: LayoutKey) -> tuple[list, int]:
        """`PairLayout.listed` of layout `key`, for small results to take their tuples from by global id, and the
        `epoch` until which it is the cache's (-1: a layout too big to keep). Until then a caller may keep the list
        instead of asking again, and need not seed the layout: every tuple is made."""
        with self._lock:
            layout = self._layout(key)
            return layout.listed(), self.epoch if self._layouts.get(key) is layout else -1

    def seed(self, key: LayoutKey, seeds: list[tuple[np.ndarray, np.ndarray]]) -> None:
        """`PairLayout.seed` for each `(ids, tuples)`; validated input tuples (`GroupSpec` building)."""
        with self._lock:
            layout = self._layout(key)
            for ids, tuples in seeds:
                layout.seed(ids, tuples)

    def _layout(self, key: LayoutKey) -> PairLayout:
        found = self._layouts.get(key)
        if found is not None:
            self._layouts.move_to_end(key)
            return found
        made = PairLayout(key)
        if made.pairs.size > self.limit:
            return made  # used once, not kept
        if self._layouts:  # a topic grew or came and went: start from the latest layout's tuples
            made.copy_from(next(reversed(self._layouts.values())))
        self._layouts[key] = made
        total = sum(layout.pairs.size for layout in self._layouts.values())
        while total > self.limit:
            total -= self._layouts.popitem(last=False)[1].pairs.size
            self.epoch += 1
        return made

    def clear(self) -> None:
        with self._lock:
            self._layouts.clear()
            self.epoch += 1


@dataclass(eq=False)
class _Handed:
    """The lists one result handed out, in parallel lists (a handful of GC-tracked objects, not one
    per member: fewer tracked allocations mean fewer full collections over everybody's lists). The index
    by identity and a small result's ids are made on the first lookup: most results are never looked up."""

    key: LayoutKey
    lists: list[list]
    snapshots: list[np.ndarray] | list[tuple]  # each list's items when handed out (not GC-traversed)
    ids: list[np.ndarray] | None  # None: derived from the snapshots when first asked
    size: int
    index: dict[int, int] | None = None  # id(list) -> position

    def position(self, items: object) -> int | None:
        if self.index is None:
            self.index = {id(listed): i for i, listed in enumerate(self.lists)}
        return self.index.get(id(items))

    def ids_at(self, i: int) -> np.ndarray:
        if self.ids is None:
            starts = dict(zip(self.key[0], itertools.accumulate(self.key[1], initial=0), strict=False))
            self.ids = [_read_only(np.array([starts[t] + p for t, p in pairs], dtype=np.int64))
                        for pairs in self.snapshots]
        return self.ids[i]


class ResultRegistry:
    """The lists handed out by the last `RESULTS_KEPT` results, by object identity."""

    def __init__(self, kept: int, limit: int) -> None:
        self.kept = kept
        self.limit = limit
        self._lock = threading.Lock()
        self._results: deque[_Handed] = deque()
        self._total = 0  # partitions over the kept results

    def remember(self, key: LayoutKey, lists: list[list], snapshots: list[np.ndarray] | list[tuple],
                 ids: list[np.ndarray] | None) -> None:
        """`lists[i]` (made from `snapshots[i]`, of global ids `ids[i]` in layout `key`; None: derive them from
        the snapshots when asked) was handed out."""
        size = sum(map(len, lists))
        if size > self.limit:
            return
        handed = _Handed(key, lists, snapshots, ids, size)
        with self._lock:
            self._results.append(handed)
            self._total += size
            while len(self._results) > self.kept or self._total > self.limit:
                self._total -= self._results.popleft().size

    def ids_of(self, items: object, key: LayoutKey) -> np.ndarray | None:
        """Global ids (in `key`'s layout, pairs outside it dropped) of a list a result handed out and
        nobody changed since; None for anything else."""
        with self._lock:
            found = None
            for handed in reversed(self._results):
                at = handed.position(items)
                if at is not None:
                    found = handed, at
                    break
            if found is None:
                return None
            handed, i = found
            if handed.lists[i] is not items or not _same_objects(handed.snapshots[i], items):
                return None
            ids = handed.ids_at(i)
        return ids if handed.key == key else _relayout(ids, handed.key, key)

    def clear(self) -> None:
        with self._lock:
            self._results.clear()
            self._total = 0


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _same_objects(a: np.ndarray | tuple, b: list) -> bool:
    """Item by item identity: an equal-valued replacement such as `("t", True)` for `("t", 1)` is a change."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def _relayout(ids: np.ndarray, old: LayoutKey, new: LayoutKey) -> np.ndarray:
    """Global ids in layout `old` -> ids in layout `new`, dropping partitions `new` lacks (order kept)."""
    old_starts, to_new, new_starts, new_sizes = _relayout_tables(old, new)
    topic = np.searchsorted(old_starts, ids, side="right") - 1
    number = ids - old_starts[topic]
    t = to_new[topic]
    keep = number < new_sizes[t]
    return new_starts[t[keep]] + number[keep]


@functools.lru_cache(maxsize=4)
def _relayout_tables(old: LayoutKey, new: LayoutKey) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per old topic its index in `new` (-1: gone), and both layouts' starts (once per layout change,
    not once per member)."""
    new_index = {name: i for i, name in enumerate(new[0])}
    to_new = np.array([new_index.get(name, -1) for name in old[0]], dtype=np.int64)
    new_sizes = np.array((*new[1], 0), dtype=np.int64)  # index -1: a topic without metadata now
    return np.cumsum((0, *old[1])), to_new, np.cumsum((0, *new[1])), new_sizes


CACHE = PairCache(MAX_CACHED_PAIRS)
RESULTS = ResultRegistry(RESULTS_KEPT, MAX_CACHED_PAIRS)


def clear() -> None:
    """Forget every cached tuple and handed-out list (a cold start, as benchmarks measure it)."""
    CACHE.clear()
    RESULTS.clear()
