"""What moved per member (`streaming.core.changes.member_changes`) against the per-partition definition."""

from __future__ import annotations

import json
import random

import numpy as np

from streaming.core.changes import member_changes


def _changes_by_definition(prev, new, ids, names, sizes):
    """Per member (in `ids` order) its assigned and revoked partitions, partition by partition."""
    starts = np.concatenate([[0], np.cumsum(sizes)])
    found: dict[int, dict[str, dict[str, list[int]]]] = {}
    for i, (p, n) in enumerate(zip(prev.tolist(), new.tolist(), strict=True)):
        if p == n:
            continue
        t = int(np.searchsorted(starts, i, side="right")) - 1
        for side, m in (("assigned", n), ("revoked", p)):
            if m >= 0:
                found.setdefault(m, {"assigned": {}, "revoked": {}})[side].setdefault(names[t], []).append(
                    i - int(starts[t]))
    return {ids[m]: found[m] for m in sorted(found)}


def test_member_changes_list_each_moved_partition_once() -> None:
    """`member_changes` against the per-partition definition, field order included (members in member order,
    topics in layout order, partitions ascending): small and large rounds, deleted topics (no partitions), few
    and many changes."""
    rng = random.Random(5)
    for _ in range(600):
        members = rng.choice((rng.randint(0, 5), rng.randint(30, 40)))
        ids = [f"m{i}" for i in range(members)]
        sizes = [rng.choice((0, rng.randint(1, 9), rng.randint(50, 400))) for _ in range(rng.randint(1, 4))]
        names = [f"t{t}" for t in range(len(sizes))]
        prev = np.array([rng.randint(-1, members - 1) for _ in range(sum(sizes))], dtype=np.int32)
        new = prev.copy()
        for i in rng.sample(range(new.size), rng.randint(0, new.size)):
            new[i] = rng.randint(-1, members - 1)
        changes, assigned, revoked = member_changes(prev, new, ids, names, np.array(sizes, dtype=np.int64))
        expected = _changes_by_definition(prev, new, ids, names, sizes)
        assert json.dumps(changes) == json.dumps(expected)
        assert assigned == int(((prev != new) & (new >= 0)).sum())
        assert revoked == int(((prev != new) & (prev >= 0)).sum())
