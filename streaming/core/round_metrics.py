"""The metrics of one round (docs/events-and-diffs.md §2): loads, moves and the fewest moves any assignment with
the same loads could have made, all from the round's (topic, previous owner, new owner) counts."""

from __future__ import annotations

import numpy as np

from assignors.optimality import (
    Counts,
    TopicGroups,
    min_moves_counted,
    min_moves_tallied,
    round_counts,
    topic_subscribers,
)


def build_metrics(
    prev_owner: np.ndarray,
    new_owner: np.ndarray,
    partition_topic: np.ndarray,
    subscribed: np.ndarray,
    *,
    assigned: int,
    revoked: int,
    paused: int,
    optimality: bool = True,
    counts: Counts | None = None,
    groups: TopicGroups | None = None,
) -> dict[str, int | None]:
    """The metrics of one round (docs/events-and-diffs.md), in record field order.

    `prev_owner`/`new_owner`: int32 per partition of the post-round layout, member index into the
    post-round member list (-1: nobody, or a member that left). `partition_topic`: int32 topic index per
    partition; `subscribed`: bool[members, topics]. `assigned`/`revoked`/`paused` are counted by the caller
    over the changes (they include partitions of departed members and deleted topics).
    `moves`: partitions taken from a member that is still in the group (given to another or withheld);
    `min_moves`: the fewest moves any assignment with the same per-member loads could have made
    (`assignors.optimality`), so `moves - min_moves` is the movement the strategy chose to spend; None
    when `optimality` is off (it solves a small min-cost flow per round when subscriptions differ).
    Every value follows from the round's `round_counts` (`counts`, for a caller that counted them already)
    tallied over `subscribed`'s topic groups (`groups`, for a caller that keeps them over the event's rounds).
    """
    shape: tuple[int, int] = subscribed.shape
    members, num_topics = shape
    if counts is None:
        counts = round_counts(prev_owner, new_owner, partition_topic)
    if groups is None:
        groups = TopicGroups(topic_subscribers(subscribed), members)
    tally = groups.tally(counts, num_topics)
    load, size, _, _, moved, unassigned, outside = tally
    partitions = 0
    for count in size:
        partitions += count
    least = None
    if optimality:  # 0 <= min_moves <= moves, so no moves needs no solving
        if not moved:
            least = 0
        elif outside:  # the strategy gave a partition to a non-subscriber: that pair counts as allowed
            least = min_moves_counted(counts, subscribed, groups)
        else:
            least = min_moves_tallied(groups, tally)
    load_min = load_max = load[0] if members else 0
    for count in load:
        if count < load_min:
            load_min = count
        elif count > load_max:
            load_max = count
    return {
        "members": members,
        "partitions": partitions,
        "assigned": assigned,
        "revoked": revoked,
        "unassigned": unassigned,
        "paused": paused,
        "load_min": load_min,
        "load_max": load_max,
        "moves": moved,
        "min_moves": least,
    }
