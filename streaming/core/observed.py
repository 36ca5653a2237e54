"""The `observed` pseudo-strategy: what the real group's leader (or KIP-848 coordinator) assigned, as
recorded by `generation` events, diffed like any strategy's rounds so the report can set it beside them.

It keeps a `StrategyState` under the name `observed` whose `generation` is the last recorded generation
number (so a gap is seen), whose owners follow every layout change like the other strategies', and which
only a `generation` event changes. One diff record per `generation` event whose members carry `assigned`, and
per emptied group (no members: everything held is revoked): `generation` is the recorded one, `paused` follows
the recorded `protocol` (eager protocols pause everything held before; `cooperative-sticky` and the KIP-848
assignors only what they revoke; an emptied group nothing, as its members stopped), and `skipped_generations`
says how many generations never completed since the previous record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assignors.registry import OBSERVED
from streaming.core.changes import member_changes
from streaming.core.config import PipelineConfig
from streaming.core.cost import NOTHING_PAUSED, Paused
from streaming.core.events import Generation
from streaming.core.layout import Relayout, move, relaid_generations, relaid_owner, union_owner, union_values
from streaming.core.records import Emitter
from streaming.core.round_metrics import build_metrics
from streaming.core.rounds import COOPERATIVE, INCREMENTAL
from streaming.core.shape import GroupShape
from streaming.core.state_codec import StrategyState
from streaming.core.traffic import GroupLoad


def skipped_generations(st: StrategyState | None, ev: Generation) -> int:
    """Generations between the last recorded one and this one that never completed (0 for the first)."""
    if st is None or st.generation <= 0:
        return 0
    return max(ev.generation - st.generation - 1, 0)


def relaid(st: StrategyState, lay: Relayout) -> tuple[np.ndarray, np.ndarray]:
    """The observed owners and member generations carried onto the new layout (nothing reassigned)."""
    return relaid_owner(st.owner, lay), relaid_generations(st.member_generation, lay)


def observed_round(st: StrategyState | None, ev: Generation, shape: GroupShape, lay: Relayout,
                   config: PipelineConfig, emit: Emitter, cause: dict[str, Any], event_ts: int | None,
                   load: GroupLoad | None = None) -> StrategyState:
    """The observed state after a `generation` event, emitting its diff record when members carry `assigned` or
    there are none (an emptied group); `load`: the event's msgs/s per partition (None: no subscribed topic has
    traffic)."""
    if st is None:
        st = StrategyState(0, np.full(lay.old_to_new.size, -1, np.int32), np.full(lay.remap.size, -1, np.int32))
    prev_new, gens = relaid(st, lay)
    recorded = {m.id: m.assigned for m in ev.members}
    if recorded and all(a is None for a in recorded.values()):
        return StrategyState(ev.generation, prev_new, gens)
    new_owner = np.full(lay.num_partitions, -1, dtype=np.int32)
    outside = 0  # recorded partitions the group has no metadata for (unknown topic, beyond the count)
    foreign = False  # a partition held by a member that does not subscribe to its topic (Kafka allows it)
    for i, m in enumerate(shape.members):
        for topic, parts in (recorded[m.id] or {}).items():
            t = shape.topic_index.get(topic)
            size = int(lay.sizes[t]) if t is not None else 0
            ok = [p for p in parts if p < size]
            outside += len(parts) - len(ok)
            if ok:
                new_owner[lay.starts[t] + np.array(ok, dtype=np.int64)] = i
                foreign |= topic not in m.topics
    prev_union = prev_new if lay.union_is_new else union_owner(st.owner, lay)
    new_union = new_owner if lay.union_is_new else move(new_owner, lay.new_to_union, prev_union.size, -1)
    changes, assigned, revoked = member_changes(prev_union, new_union, lay.union_ids, shape.topics, lay.union_sizes)
    incremental = ev.protocol in COOPERATIVE | INCREMENTAL
    metrics: dict[str, Any] = build_metrics(
        prev_new, new_owner, lay.partition_topic, lay.subscribed, assigned=assigned, revoked=revoked,
        paused=0 if not recorded else revoked if incremental else int((prev_union >= 0).sum()),
        optimality=config.optimality and not foreign)  # min_moves assumes subscribed owners only
    skipped = skipped_generations(st, ev)
    if skipped:
        metrics["skipped_generations"] = skipped
    if outside:
        metrics["unknown_partitions"] = outside
    paused: Paused | None = None
    if load is not None:
        metrics.update(load.fields(new_owner, len(lay.member_ids)))
        paused = NOTHING_PAUSED if not recorded else Paused(union_values(load.rates, lay), prev_union,
                                                             new_union if incremental else None)
    head = {"group": emit.group, "strategy": OBSERVED, "generation": ev.generation,
            "phase": "revoke" if incremental else "eager", "protocol": ev.protocol, "cause": cause}
    emit.diff(head, changes, metrics, event_ts, paused)
    return StrategyState(ev.generation, new_owner, np.full(len(lay.member_ids), ev.generation, dtype=np.int32))
