"""A small round's metrics (`streaming.core.diffs`, counted from the round's (topic, previous, new owner)
triples) against the per-partition definitions: the moves, `min_moves` (rounds with and without moves, some
with every member on every topic) and the load bounds."""

from __future__ import annotations

import random

import numpy as np

from assignors.optimality import min_moves, moves
from streaming.core.diffs import build_metrics


def test_small_round_metrics_match_the_definitions() -> None:
    rng = random.Random(3)
    for _ in range(2_000):
        members, topics = rng.randint(0, 5), rng.randint(1, 3)
        sizes = [rng.randint(1, 8) for _ in range(topics)]
        partition_topic = np.repeat(np.arange(topics, dtype=np.int32), sizes)
        everyone = rng.random() < 0.3
        subscribed = np.array([[everyone or rng.random() < 0.6 for _ in range(topics)] for _ in range(members)],
                              dtype=bool).reshape(members, topics)
        prev = np.array([rng.randint(-1, members - 1) for _ in partition_topic], dtype=np.int32)
        new = prev.copy()
        for i in rng.sample(range(new.size), rng.randint(0, new.size)):
            new[i] = rng.randint(-1, members - 1)
        got = build_metrics(prev, new, partition_topic, subscribed, assigned=0, revoked=0, paused=0)
        assert got["moves"] == moves(prev, new)
        assert got["min_moves"] == min_moves(prev, new, partition_topic, subscribed), (prev, new, subscribed)
        load = np.bincount(new[new >= 0], minlength=members)
        assert (got["load_min"], got["load_max"]) == ((int(load.min()), int(load.max())) if members else (0, 0))
