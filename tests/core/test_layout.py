"""A topic layout's arrays and `layout_map`, built from per-topic offsets, against their definitions."""

from __future__ import annotations

import random
from itertools import accumulate

import numpy as np

from assignors.javaorder import java_string_key
from streaming.core.layout import _PartitionLayout, layout_map

_NAMES = ["b", "a", "Z", "ä", "ab", "aa", "zz", "B", "é", "x", "\U0001f600", "\uff21"]


def test_layout_arrays_follow_their_definitions() -> None:
    """The per-partition arrays built from one offset per topic equal their element-wise definitions."""
    rng = random.Random(11)
    for _ in range(300):
        names = tuple(rng.sample(_NAMES, rng.randint(0, len(_NAMES))))
        sizes = tuple(rng.choice([0, 0, 1, 3, 7]) for _ in names)
        layout = _PartitionLayout(names, sizes)
        ids = [(t, p) for t, n in enumerate(sizes) for p in range(n)]  # global id order
        by_name = sorted(range(len(ids)), key=lambda g: (java_string_key(names[ids[g][0]]), ids[g][1]))
        assert layout.keys.dtype == np.int64 and layout.keys.tolist() == [t << 32 | p for t, p in ids]
        assert layout.ids_by_name.dtype == np.int64 and layout.ids_by_name.tolist() == by_name
        assert layout.name_rank.dtype == np.int64 and layout.name_rank[by_name].tolist() == list(range(len(ids)))
        live = [t for t, n in enumerate(sizes) if n]
        assert layout.partition_topic.tolist() == [live.index(t) for t, _ in ids]
        assert layout.starts.tolist() == [0, *accumulate(sizes)] and layout.num_partitions == len(ids)


def test_layout_map_sends_each_partition_to_its_new_id() -> None:
    rng = random.Random(5)
    for _ in range(300):
        old = [rng.choice([0, 1, 3, 7]) for _ in range(rng.randint(0, 5))]
        new = [rng.choice([0, n, n + 2]) for n in old] + [rng.choice([0, 4]) for _ in range(rng.randint(0, 2))]
        new_start = [0, *accumulate(new)]
        want = [new_start[t] + p if p < new[t] else -1 for t, n in enumerate(old) for p in range(n)]
        got = layout_map(old, new)
        assert got.dtype == np.int64 and got.tolist() == want, (old, new)
