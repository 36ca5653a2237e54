"""The member-less spec a topic layout keeps is what `GroupSpec` would derive from the same topics: every
event's assignor input copies it, so an array filled in by the layout must equal the spec's own."""

from __future__ import annotations

import random

import numpy as np

from assignors import GroupSpec
from streaming.core.layout import _make_partition_layout

_NAMES = ["b", "a", "Z", "ä", "ab", "aa", "zz", "B", "é", "x", "\U0001f600", "\uff21"]


def test_layout_spec_derives_what_a_fresh_spec_would() -> None:
    rng = random.Random(7)
    for _ in range(500):
        names = tuple(rng.sample(_NAMES, rng.randint(0, len(_NAMES))))
        sizes = tuple(rng.choice([0, 0, 1, 3, 7]) for _ in names)  # 0: a deleted topic
        spec = _make_partition_layout(names, sizes).spec
        fresh = GroupSpec(topic_names=list(spec.topic_names), topic_sizes=np.array(spec.topic_sizes),
                          member_ids=[], subscriptions=[], member_topics=[], owned=[],
                          generations=np.zeros(0, dtype=np.int64), racks=[], instance_ids=[])
        for name in ("topics_by_name", "name_rank", "partition_topic"):
            got, want = getattr(spec, name), getattr(fresh, name)
            assert got.dtype == want.dtype and got.tolist() == want.tolist(), (names, sizes, name)
