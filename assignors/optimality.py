"""The optimality gap: the fewest partition moves any assignment with the same loads could have made.

A strategy's round is judged against every assignment that gives each member exactly as many partitions
as the strategy did, hands each partition to at most one member and only to a subscriber of its topic.
Among those, `min_moves` is the least number of previously owned partitions that end up elsewhere
(with another member or with nobody). The gap `moves - min_moves` is the movement a strategy spent for
reasons other than the loads it chose (stickiness it gave up, rack placement, ordering rules).

Maximising the kept partitions is a transportation problem. Partitions of topics with the same set of
subscribers are interchangeable, so topics are merged into *topic groups*; a group can send a member
partitions it owned before ("keep", worth 1) or any others (worth 0), within the group's size and the
member's load. Its constraint matrix is a bipartite incidence matrix (totally unimodular), so the LP
optimum (HiGHS) is the integer optimum. Connected parts of the group–member graph are solved on their
own, and a part with a single topic group has the closed form ``sum(min(load, owned))`` — which covers
identical subscriptions, the common case of huge groups, in O(partitions).

The LP is the last resort (a few ms of scipy overhead per call, once per round of a replay): every
member keeps at most ``min(load, keepable)``; when the strategy's own assignment reaches that bound (most
sticky rounds) it is the answer, and otherwise a min-cut check usually proves some other assignment does.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from scipy.sparse.csgraph import connected_components


def moves(prev_owner: np.ndarray, new_owner: np.ndarray) -> int:
    """Previously owned partitions (``prev_owner >= 0``) that the new assignment gives to someone else or nobody."""
    prev = np.asarray(prev_owner)
    return int(np.count_nonzero((prev >= 0) & (np.asarray(new_owner) != prev)))


def min_moves(
    prev_owner: np.ndarray, new_owner: np.ndarray, partition_topic: np.ndarray, subscribed: np.ndarray
) -> int:
    """The exact minimum of `moves` over all assignments with `new_owner`'s per-member loads.

    `prev_owner` / `new_owner`: member index per partition (-1: nobody, or a member that left);
    `partition_topic`: topic index per partition; `subscribed`: bool[members, topics] after the round.
    A (member, topic) pair the strategy itself used counts as allowed even if `subscribed` says no
    (Kafka's lenient cases), so ``min_moves <= moves(prev_owner, new_owner)`` always holds.
    """
    prev, new, topic, sub = _validated(prev_owner, new_owner, partition_topic, subscribed)
    num_members, num_topics = sub.shape
    assigned, owned = new >= 0, prev >= 0
    total_owned = int(np.count_nonzero(owned))
    load = np.bincount(new[assigned], minlength=num_members).astype(np.int64)

    # Per (topic, member) pair, O(partitions) with 1-D counting: partitions the member owned before, and
    # whether the strategy gave it any of the topic (such a pair counts as allowed).
    num_pairs = num_topics * num_members
    owned_pair, owned_count = _sum_by_key(topic[owned] * num_members + prev[owned], num_pairs)
    owned_topic, owned_member = np.divmod(owned_pair, num_members)
    used_topic, used_member = np.divmod(_sum_by_key(topic[assigned] * num_members + new[assigned], num_pairs)[0],
                                        num_members)
    allowed = sub.copy()
    allowed[used_member, used_topic] = True
    keepable = allowed[owned_member, owned_topic]
    if not keepable.any():
        return total_owned
    # Upper bound on what stays: a member keeps at most min(load, its keepable partitions). The strategy's
    # own assignment is a candidate, so when it reaches the bound (the usual sticky round) that is the answer.
    keepable_member = np.bincount(owned_member[keepable], weights=owned_count[keepable], minlength=num_members)
    least = total_owned - int(np.minimum(keepable_member, load).sum())
    if least == moves(prev, new):
        return least

    # Topic groups: topics with identical subscriber sets (topics nobody may hold are dropped).
    subscribed_topics = np.flatnonzero(allowed.any(axis=0))
    group_index: dict[bytes, int] = {}  # subscriber set, as packed bits -> topic group
    group_of = np.array([group_index.setdefault(row.tobytes(), len(group_index))
                         for row in np.packbits(allowed[:, subscribed_topics].T, axis=1)], dtype=np.int64)
    num_groups = len(group_index)
    first_topic = np.zeros(num_groups, dtype=np.int64)
    first_topic[group_of[::-1]] = subscribed_topics[::-1]  # the last write per group is its first topic
    columns = allowed[:, first_topic].T  # bool[groups, members]: the subscriber set of each group
    topic_group = np.full(num_topics, -1, dtype=np.int64)
    topic_group[subscribed_topics] = group_of
    topic_size = np.bincount(topic, minlength=num_topics)
    group_size = np.bincount(topic_group[subscribed_topics], weights=topic_size[subscribed_topics],
                             minlength=num_groups).astype(np.int64)

    # Keepable partitions per (group, previous owner).
    keys = topic_group[owned_topic[keepable]] * num_members + owned_member[keepable]
    pair, count = _sum_by_key(keys, num_groups * num_members, weights=owned_count[keepable])
    keep_group, keep_member = np.divmod(pair, num_members)

    # Often the bound is reachable by some other assignment: one min-cut check over the whole graph says so.
    whole = _max_kept(np.arange(num_groups), group_size, columns, load, (keep_group, keep_member, count), solve=False)
    if whole is not None:
        return total_owned - whole

    # Connected parts of the bipartite graph groups x members (nodes: groups first, then members).
    group_idx, member_idx = np.nonzero(columns)
    graph = sparse.coo_matrix(
        (np.ones(len(group_idx)), (group_idx, num_groups + member_idx)),
        shape=(num_groups + num_members,) * 2,
    )
    _, label = connected_components(graph, directed=False)
    part_groups = np.bincount(label[:num_groups], minlength=label.max() + 1)

    kept = 0
    single = part_groups[label[keep_group]] == 1
    kept += int(np.minimum(count[single], load[keep_member[single]]).sum())
    for part in np.unique(label[keep_group[~single]]):
        in_part = label[keep_group] == part
        kept += _max_kept(
            groups=np.flatnonzero(label[:num_groups] == part),
            group_size=group_size,
            columns=columns,
            load=load,
            keep=(keep_group[in_part], keep_member[in_part], count[in_part]),
        )
    return total_owned - kept


_DENSE_KEYS = 1 << 22  # sum by key in a dense table up to this many keys, else sort


def _sum_by_key(keys: np.ndarray, num_keys: int, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys (ascending) and, per key, how many entries (or the sum of their weights)."""
    if num_keys <= _DENSE_KEYS:
        sums = np.bincount(keys, weights=weights, minlength=num_keys)
        distinct = np.flatnonzero(sums)
        return distinct, sums[distinct].astype(np.int64)
    distinct, inverse = np.unique(keys, return_inverse=True)
    return distinct, np.bincount(inverse.ravel(), weights=weights).astype(np.int64)


def _max_kept(
    groups: np.ndarray,
    group_size: np.ndarray,
    columns: np.ndarray,
    load: np.ndarray,
    keep: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    solve: bool = True,
) -> int | None:
    """Most partitions kept by their owners in one connected part of `groups`, as a transportation LP
    unless the keep bound is reachable (a min-cut check proves it). `solve=False`: None instead of the LP."""
    keep_group, keep_member, keep_count = keep
    loaded = load > 0
    free_group_local, free_member = np.nonzero(columns[groups] & loaded)
    free_group = groups[free_group_local]
    has_load = loaded[keep_member]
    keep_group, keep_member, keep_count = keep_group[has_load], keep_member[has_load], keep_count[has_load]
    if len(keep_group) == 0:
        return 0

    members = np.unique(free_member)
    member_row = np.full(len(load), -1, dtype=np.int64)
    member_row[members] = np.arange(len(members))
    group_row = np.full(len(group_size), -1, dtype=np.int64)
    group_row[groups] = np.arange(len(groups))
    bound = _keep_bound_if_feasible(member_row, group_row, group_size[groups], load[members],
                                    (keep_group, keep_member, keep_count), (free_group, free_member))
    if bound is not None or not solve:
        return bound

    var_group = np.concatenate([keep_group, free_group])
    var_member = np.concatenate([keep_member, free_member])
    n_keep, n_vars = len(keep_group), len(var_group)
    cols = np.arange(n_vars)
    a_eq = sparse.csr_matrix((np.ones(n_vars), (member_row[var_member], cols)), shape=(len(members), n_vars))
    a_ub = sparse.csr_matrix((np.ones(n_vars), (group_row[var_group], cols)), shape=(len(groups), n_vars))
    upper = load[var_member].astype(float)
    upper[:n_keep] = np.minimum(upper[:n_keep], keep_count)
    cost = np.zeros(n_vars)
    cost[:n_keep] = -1.0
    result = linprog(
        cost,
        A_ub=a_ub,
        b_ub=group_size[groups].astype(float),
        A_eq=a_eq,
        b_eq=load[members].astype(float),
        bounds=np.column_stack([np.zeros(n_vars), upper]),
        method="highs",
    )
    if result.status != 0:  # the strategy's own assignment is feasible, so this is a solver failure
        raise RuntimeError(f"min_moves: HiGHS failed: {result.message}")
    return round(-result.fun)


_MAX_CUT_GROUPS = 10  # the bound check enumerates 2**groups cuts; bigger parts go straight to the LP


def _keep_bound_if_feasible(
    member_row: np.ndarray,
    group_row: np.ndarray,
    capacity: np.ndarray,
    demand: np.ndarray,
    keep: tuple[np.ndarray, np.ndarray, np.ndarray],
    free: tuple[np.ndarray, np.ndarray],
) -> int | None:
    """The upper bound ``sum(min(load, keepable))`` of a part if some assignment reaches it, else None.

    Reaching it is a max-flow question: each member takes exactly its bound's share K through its keep
    edges (capacity: owned count) and the rest of its load through any allowed group, within the group
    sizes. Parts have few topic groups, so the min cut is found by enumerating which groups stay on the
    source side (member nodes then pick their cheaper side independently): a handful of array operations
    instead of an LP or a sparse-graph solver.
    """
    num_groups, num_members = len(capacity), len(demand)
    if num_groups > _MAX_CUT_GROUPS:
        return None
    keep_group, keep_member, keep_count = keep
    free_group, free_member = free
    owned = np.zeros((num_groups, num_members), dtype=np.int64)
    owned[group_row[keep_group], member_row[keep_member]] = keep_count
    allowed = np.zeros((num_groups, num_members), dtype=np.int64)
    allowed[group_row[free_group], member_row[free_member]] = 1
    kept = np.minimum(owned.sum(axis=0), demand)
    outside = ((np.arange(1 << num_groups)[:, None] >> np.arange(num_groups)) & 1) ^ 1  # [cut, group]: sink side
    cut = ((1 - outside) @ capacity
           + np.minimum(outside @ owned, kept).sum(axis=1)
           + ((outside @ allowed) > 0) @ (demand - kept))
    if cut.min() < demand.sum():
        return None
    return int(kept.sum())


def _validated(
    prev_owner: np.ndarray, new_owner: np.ndarray, partition_topic: np.ndarray, subscribed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    prev = np.asarray(prev_owner, dtype=np.int64)
    new = np.asarray(new_owner, dtype=np.int64)
    topic = np.asarray(partition_topic, dtype=np.int64)
    sub = np.asarray(subscribed, dtype=bool)
    if sub.ndim != 2:
        raise ValueError(f"subscribed: expected a 2-D bool array [members, topics], got shape {sub.shape}")
    num_members, num_topics = sub.shape
    for name, arr in (("prev_owner", prev), ("new_owner", new), ("partition_topic", topic)):
        if arr.ndim != 1 or len(arr) != len(prev):
            raise ValueError(f"{name}: expected a 1-D array of {len(prev)} partitions, got shape {arr.shape}")
    for name, arr in (("prev_owner", prev), ("new_owner", new)):
        if len(arr) and (arr.min() < -1 or arr.max() >= num_members):
            raise ValueError(f"{name}: member indices must be in [-1, {num_members})")
    if len(topic) and (topic.min() < 0 or topic.max() >= num_topics):
        raise ValueError(f"partition_topic: topic indices must be in [0, {num_topics})")
    return prev, new, topic, sub
