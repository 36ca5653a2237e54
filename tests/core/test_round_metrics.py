"""A round's metrics (`streaming.core.round_metrics`, from the round's (topic, previous, new owner) counts)
against the per-partition definitions: the moves, `min_moves` (rounds with and without moves, some with every
member on every topic) and the load bounds."""

from __future__ import annotations

import random

import numpy as np

from assignors.optimality import TopicGroups, min_moves, moves, topic_subscribers
from streaming.core.round_metrics import build_metrics


def test_round_metrics_match_the_definitions() -> None:
    """Small rounds and a few past `SMALL_ROUND` partitions (counted the other way, `round_counts`)."""
    rng = random.Random(3)
    for _ in range(2_000):
        members, topics = rng.randint(0, 5), rng.randint(1, 3)
        sizes = [rng.randint(1, 8) if rng.random() < 0.95 else rng.randint(100, 300) for _ in range(topics)]
        partition_topic = np.repeat(np.arange(topics, dtype=np.int32), sizes)
        everyone = rng.random() < 0.3
        subscribed = np.array([[everyone or rng.random() < 0.6 for _ in range(topics)] for _ in range(members)],
                              dtype=bool).reshape(members, topics)
        prev = np.array([rng.randint(-1, members - 1) for _ in partition_topic], dtype=np.int32)
        new = prev.copy()
        for i in rng.sample(range(new.size), rng.randint(0, new.size)):
            new[i] = rng.randint(-1, members - 1)
        got = build_metrics(prev, new, partition_topic, subscribed, assigned=0, revoked=0, paused=0)
        in_subscribed = subscribed.any(axis=0)[partition_topic] if members else np.zeros(new.size, dtype=bool)
        assert got["partitions"] == int(in_subscribed.sum())
        assert got["unassigned"] == int((in_subscribed & (new < 0)).sum())
        assert got["moves"] == moves(prev, new)
        assert got["min_moves"] == min_moves(prev, new, partition_topic, subscribed), (prev, new, subscribed)
        load = np.bincount(new[new >= 0], minlength=members)
        assert (got["load_min"], got["load_max"]) == ((int(load.min()), int(load.max())) if members else (0, 0))


def test_round_metrics_of_interleaved_events_keep_their_own_topic_groups() -> None:
    """The rounds of an event share its `TopicGroups` (`streaming.core.layout.Relayout.topic_groups`): rounds of
    two events taking turns, each passing its groups, give the metrics of fresh groups, rounds that hand a
    partition to a non-subscriber (their tables widen new groups, never the shared ones) included."""
    rng = random.Random(11)
    for _ in range(300):
        events = []
        for _ in range(2):
            members, topics = rng.randint(1, 6), rng.randint(1, 3)
            subscribed = np.array([[rng.random() < 0.6 for _ in range(topics)] for _ in range(members)], dtype=bool)
            partition_topic = np.repeat(np.arange(topics, dtype=np.int32), [rng.randint(1, 8) for _ in range(topics)])
            events.append((subscribed, partition_topic, TopicGroups(topic_subscribers(subscribed), members)))
        for k in range(6):
            subscribed, partition_topic, groups = events[k % 2]
            members = subscribed.shape[0]
            prev = np.array([rng.randint(-1, members - 1) for _ in partition_topic], dtype=np.int32)
            new = np.array([rng.choice([-1, *np.flatnonzero(subscribed[:, t]).tolist()])
                            if rng.random() < 0.9 else rng.randint(-1, members - 1) for t in partition_topic],
                           dtype=np.int32)
            got = build_metrics(prev, new, partition_topic, subscribed, assigned=0, revoked=0, paused=0,
                                groups=groups)
            assert got == build_metrics(prev, new, partition_topic, subscribed, assigned=0, revoked=0, paused=0)
            assert got["min_moves"] == min_moves(prev, new, partition_topic, subscribed)
            assert groups.topic_members == topic_subscribers(subscribed)
