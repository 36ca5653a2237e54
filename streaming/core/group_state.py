"""The per-group state machine: (state blob, events) -> (new state blob, diff records, dead letters).

A pure function over plain data, so the Spark adapter, the local loop and the tests share it. The rules
users rely on are in docs/events-and-diffs.md:

* events apply in source order (`SourceRecord.order`); an invalid event becomes a dead letter and
  changes nothing;
* each event that changes membership, subscriptions, or the metadata of a subscribed topic triggers one
  rebalance per configured strategy, called with members in first-join order, topics in the order the
  group first learnt their metadata, and every member's owned partitions/generation from the last round
  it took part in (departed members are remembered, bounded, so a returning member id carries them);
* a static member replaced by a new member id (same `instance_id`) hands over its place, assignments
  and generations without a rebalance; a `replace` record tells diff readers about the new id;
* cooperative-sticky rounds that withhold partitions are followed at once by follow-up rounds;
* a `generation` event (a rebalance the coordinator recorded) sets the membership at once and rebalances
  every strategy once (the strategy named by its `protocol` in one round: the group's next rounds are its next
  generations); its recorded assignment becomes the `observed` pseudo-strategy (`streaming.core.observed`);
  an emptied group's round pauses nothing; a `delete_group` event drops the group's state;
* once a group's state holds an `observed` assignment (its log carried a `generation` event), only
  `generation` events rebalance it: its other events update metadata and membership without a round, as a
  captured history's metadata poll sees a topic change before the generation that the change caused.

One event is applied in four steps (`apply_event`): validate it and work out the group's next shape
(`shape`), relay the partitions and members onto it (`layout`), play each strategy's rounds (`rounds`),
and remember the members that left.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from assignors.registry import OBSERVED
from assignors.spec import INT32
from streaming.core.config import Limits, PipelineConfig
from streaming.core.conformance import conformance_record
from streaming.core.events import (
    DeleteGroup,
    DeleteTopic,
    Event,
    Generation,
    InvalidEvent,
    Join,
    Leave,
    Partitions,
    Subscribe,
    Traffic,
    parse_event,
)
from streaming.core.layout import NewPartitions, Relayout, new_partitions, relaid_owner
from streaming.core.observed import observed_round, relaid, skipped_generations
from streaming.core.records import Emitter, OutputRecord, SourceRecord
from streaming.core.rounds import StrategyRounds
from streaming.core.shape import GroupShape, next_shape
from streaming.core.state_codec import DepartedMember, GroupState, StrategyState, decode, encode
from streaming.core.traffic import TopicTraffic, group_load

log = logging.getLogger(__name__)


def step(
    group: str, state: bytes | None, records: Sequence[SourceRecord], config: PipelineConfig, now_ms: int
) -> tuple[bytes | None, list[OutputRecord]]:
    """Apply one group's records (sorted here by `.order`) to its state blob.

    Returns the new blob (None: the group has no state) and the output records in order. `group == ""`
    is the dead-letter lane: every record becomes a dead letter and nothing is stored.
    """
    current, dirty, out = step_state(group, decode(state) if state is not None else None, records, config, now_ms)
    if current is None:
        return None, out
    return (encode(current) if dirty else state), out


def step_state(
    group: str, current: GroupState | None, records: Sequence[SourceRecord], config: PipelineConfig, now_ms: int
) -> tuple[GroupState | None, bool, list[OutputRecord]]:
    """`step` over a decoded state, for callers that keep states in memory between calls (the local loop
    encodes each group once at the end instead of once per batch). Returns (state, whether it differs from
    the one passed in, output records); `current` itself is never modified beyond strategy alignment."""
    ordered = sorted(records, key=lambda r: r.order)
    limits = config.limits
    out: list[OutputRecord] = []
    dirty = current is not None and _align_strategies(current, config.strategies)
    for rec in ordered:
        emit = Emitter(group, rec, now_ms, limits, out, config.timing)
        try:
            event = parse_event(rec.value, limits, rec.size)
            if not group:
                raise InvalidEvent("record was routed without a group id", event.group)
            if event.group != group:
                raise InvalidEvent(f"event group {event.group!r} differs from the record's group {group!r}",
                                   event.group)
            if isinstance(event, DeleteGroup):
                current, dirty = None, True
                continue
            base = current if current is not None else _empty_state(config.strategies)
            changed = apply_event(base, event, config, emit)
        except InvalidEvent as exc:
            emit.discard()
            emit.dead_letter(exc.reason, exc.group)
            continue
        except Exception as err:  # a bug must not stop the stream nor corrupt the state: the event is parked
            log.exception("internal error on %s", rec.source)
            emit.discard()
            emit.dead_letter(f"internal error: {type(err).__name__}: {err}", group or None)
            continue
        if changed is not None:
            current, dirty = changed, True
    if current is None or not group:
        return None, dirty, out
    return current, dirty, out


def apply_event(old: GroupState, ev: Event, config: PipelineConfig, emit: Emitter) -> GroupState | None:
    """One valid-looking event applied to `old` (left untouched): the new state, or None when nothing
    changed. Raises `InvalidEvent` before emitting anything when the event does not fit the group."""
    if isinstance(ev, Traffic):
        return _with_traffic(old, ev)  # no round: the rates count in the metrics of later rounds
    shape = next_shape(old, ev, config.limits)  # 1. validate; the group's next shape
    parts = new_partitions(old, shape)
    changed = shape.membership_changed or shape.subscribed_metadata_changed()
    if not (changed or shape.replaced or shape.metadata_changed or len(shape.topics) != len(old.topics)):
        return None
    # what the real group did (only `generation` events change it); once there, the group's log is a captured
    # history, which rebalances at its recorded generations only
    observed = old.strategies.get(OBSERVED)
    recorded = ev if isinstance(ev, Generation) else None
    rebalance = changed and (recorded is not None or observed is None)
    # the latest classic rebalance duration the capture recorded; a `generation` event's own counts for its rounds
    recorded_ms = old.rebalance_ms if recorded is None or recorded.rebalance_ms is None else recorded.rebalance_ms
    emit.rebalance_ms = config.timing.classic_ms(recorded_ms)
    lay = Relayout(old, shape, parts)  # 2. the layout change
    cause = _cause(ev, shape, emit.rec.source, observed)
    event_ts = ev.ts if ev.ts is not None else emit.rec.timestamp_ms
    rounds = StrategyRounds(old, shape, lay, config, emit, cause, event_ts,
                            own_strategy=recorded.protocol if recorded is not None else None,
                            emptied=recorded is not None and not recorded.members)
    traffic = _kept_traffic(old.traffic, shape.topics, shape.sizes) if old.traffic else old.traffic
    load = group_load(traffic, _last_round_sizes(old), shape.topics, shape.sizes, [m.topics for m in shape.members],
                      old.load) if traffic else None
    rounds.load = load
    strategies = {name: rounds.run(name, old.strategies[name], rebalance)  # 3. each strategy's rounds
                  for name in config.strategies}
    rounds.close()
    if recorded is not None:
        strategies[OBSERVED] = observed_round(observed, recorded, shape, lay, config, emit, cause, event_ts, load)
        _conformance(shape, parts, lay, observed, emit, event_ts)
    elif observed is not None:
        strategies[OBSERVED] = StrategyState(observed.generation, *relaid(observed, lay))
    departed, held = _departed(old, shape, lay, config.limits)  # 4. remember who left
    return GroupState(
        topics=shape.topics,
        sizes=parts.sizes,
        rack_names=shape.rack_names if parts.rack_bits is not None else [],
        rack_bits=parts.rack_bits,
        members=shape.members,
        strategies=strategies,
        departed=departed,
        departed_partitions=held,
        traffic=traffic,
        load=load,
        rebalance_ms=recorded_ms,
        grown={} if rebalance or observed is None else _grown(old, shape.sizes, traffic),
    )


def _last_round_sizes(old: GroupState) -> list[int]:
    """The partition counts before the event as the group's last round saw them: a captured history's topics
    that grew without a round count from their size at that round (`GroupState.grown`)."""
    sizes: list[int] = old.sizes.tolist()
    if old.grown:
        for t, name in enumerate(old.topics):
            sizes[t] = old.grown.get(name, sizes[t])
    return sizes


def _grown(old: GroupState, sizes: list[int], traffic: dict[str, TopicTraffic]) -> dict[str, int]:
    """`GroupState.grown` after an event without a round in a captured history: the keyed-traffic topics whose
    count it changed join with their count before it (a topic grown twice keeps the first); deleted ones leave."""
    grown = old.grown
    for t, (name, before) in enumerate(zip(old.topics, old.sizes.tolist(), strict=True)):
        after = sizes[t]
        if after == before:
            continue
        tr = traffic.get(name)
        if not after:
            grown = {k: v for k, v in grown.items() if k != name}
        elif before and tr is not None and tr.keyed and name not in grown:
            grown = {**grown, name: before}
    return grown


def _with_traffic(old: GroupState, ev: Traffic) -> GroupState:
    """`old` with the topic's traffic replaced (the latest event per topic wins); `InvalidEvent` when the group
    has no partition count for the topic or `rates` has another length."""
    size = 0
    for t, n in zip(old.topics, old.sizes.tolist(), strict=True):
        if t == ev.topic:
            size = n
    if not size:
        raise InvalidEvent(f"field 'topic': the group has no partition count for topic {ev.topic!r} "
                           "(a partitions or join event gives it)", ev.group)
    rates = ev.traffic.rates
    if rates is not None and len(rates) != size:
        raise InvalidEvent(f"field 'rates': {len(rates)} rates for the {size} partitions of topic {ev.topic!r}",
                           ev.group)
    traffic = dict(old.traffic)
    traffic[ev.topic] = ev.traffic
    return GroupState(old.topics, old.sizes, old.rack_names, old.rack_bits, old.members, old.strategies, old.departed,
                      old.departed_partitions, traffic, rebalance_ms=old.rebalance_ms, grown=old.grown)


def _kept_traffic(traffic: dict[str, TopicTraffic], topics: list[str], sizes: list[int]) -> dict[str, TopicTraffic]:
    """The traffic of the topics that still have partitions (a deleted topic's rates go with it)."""
    if 0 not in sizes:  # no deleted topic: most groups
        return traffic
    gone = {t for t, n in zip(topics, sizes, strict=True) if n == 0}
    if gone.isdisjoint(traffic):
        return traffic  # states share it: nothing modifies a state's traffic in place
    return {t: v for t, v in traffic.items() if t not in gone}


def _conformance(shape: GroupShape, parts: NewPartitions, lay: Relayout, observed: StrategyState | None,
                 emit: Emitter, event_ts: int | None) -> None:
    """The conformance record of a `generation` event: what Kafka's assignor computes from the recorded
    inputs against what the group got. It reads the event's own JSON, which keeps every member's `owned`
    and `owned_generation` (the parsed event keeps only what the state machine needs). Moves count against
    the group's last recorded assignment (`observed`, carried onto this event's layout) when there is one."""
    sizes = parts.sizes.tolist()
    topics = {t: n for t, n in zip(shape.topics, sizes, strict=True) if n > 0}
    racks = None
    if parts.rack_bits is not None:
        names, bits, start, racks = shape.rack_names, parts.rack_bits.tolist(), 0, {}
        for t, n in zip(shape.topics, sizes, strict=True):
            if n > 0:
                racks[t] = [[r for i, r in enumerate(names) if b >> i & 1] for b in bits[start:start + n]]
            start += n
    previous = None if observed is None else _held_by(relaid_owner(observed.owner, lay), lay, shape)
    record = conformance_record(json.loads(emit.rec.value), topics, racks, previous)  # type: ignore[arg-type]
    if record is not None:
        if record.get("ts") is None:
            record["ts"] = event_ts
        if record.get("source") is None:
            record["source"] = emit.rec.source
        emit.conformance(record)


def _held_by(owner: np.ndarray, lay: Relayout, shape: GroupShape) -> dict[str, dict[str, list[int]]]:
    """Each member's partitions under `owner` (this event's layout) as member id -> topic -> partitions."""
    held: dict[str, dict[str, list[int]]] = {}
    who: list[int] = owner.tolist()
    starts: list[int] = lay.starts.tolist()
    for t, topic in enumerate(shape.topics):
        for p in range(starts[t + 1] - starts[t]):
            i = who[starts[t] + p]
            if i >= 0:
                held.setdefault(lay.member_ids[i], {}).setdefault(topic, []).append(p)
    return held


_KINDS: Final[dict[type, str]] = {Join: "join", Leave: "leave", Subscribe: "subscribe", Partitions: "partitions",
                           DeleteTopic: "delete_topic", Generation: "generation"}  # a cause's `type`


def _cause(ev: Event, shape: GroupShape, source: dict, observed: StrategyState | None) -> dict[str, Any]:
    """The `cause` of a diff record: the event that triggered the round, and where it came from."""
    kind = _KINDS[type(ev)]
    cause: dict[str, Any] = {"type": kind}
    if isinstance(ev, (Join, Leave, Subscribe)):
        cause["member"] = ev.member
    if isinstance(ev, Generation):
        cause["generation"] = ev.generation
        skipped = skipped_generations(observed, ev)
        if skipped:
            cause["skipped_generations"] = skipped
    if shape.replaced is not None:
        cause["replaced"] = shape.replaced[1]
    if isinstance(ev, DeleteTopic):
        cause["topic"] = ev.topic
    cause["source"] = source
    return cause


def _departed(old: GroupState, shape: GroupShape, lay: Relayout,
              limits: Limits) -> tuple[dict[str, DepartedMember], int]:
    """Departed members after the event: returning ones forgotten, leavers remembered with what each
    strategy gave them (layout-free keys) and their generations, the oldest forgotten beyond the limits; and the
    partitions they hold (`GroupState.departed_partitions`)."""
    departed = dict(old.departed)
    total = old.departed_partitions
    if total is None:
        total = 0
        for d in departed.values():
            total += _held(d)
    for mid in [c for c in shape.carry if isinstance(c, str)]:
        total -= _held(departed.pop(mid, None))
    if shape.replaced is not None:
        total -= _held(departed.pop(shape.members[shape.replaced[0]].id, None))
    for j in lay.leavers:
        gone = old.members[j].id
        total -= _held(departed.pop(gone, None))
        me = np.array(j, INT32)  # a 0-d operand: numpy converts a Python int operand on every call
        d = departed[gone] = DepartedMember(
            gone,
            {name: int(st.member_generation[j]) for name, st in old.strategies.items()},
            {name: lay.old_keys[st.owner == me] for name, st in old.strategies.items()},
        )
        total += _held(d)
    while departed and (len(departed) > limits.max_departed_members or total > limits.max_departed_partitions):
        total -= _held(departed.pop(next(iter(departed))))  # it would then rejoin as a new member
    return departed, total


def _held(d: DepartedMember | None) -> int:
    """The partitions a departed member holds over all strategies (None: 0)."""
    return 0 if d is None else sum(len(a) for a in d.owned.values())


def _empty_state(strategies: Sequence[str]) -> GroupState:
    state = GroupState()
    _align_strategies(state, strategies)
    return state


def _align_strategies(state: GroupState, strategies: Sequence[str]) -> bool:
    """Keep exactly the configured strategies (a strategy added later starts with no assignment), and the
    `observed` one, which is no configured strategy but what the recorded group did."""
    if [name for name in state.strategies if name != OBSERVED] == list(strategies):
        return False
    old = state.strategies
    state.strategies = {
        name: old.get(name)
        or StrategyState(0, np.full(state.num_partitions, -1, np.int32), np.full(len(state.members), -1, np.int32))
        for name in strategies
    }
    if OBSERVED in old:
        state.strategies[OBSERVED] = old[OBSERVED]
    for d in state.departed.values():
        d.owned = {name: keys for name, keys in d.owned.items() if name in state.strategies}
        d.generations = {name: g for name, g in d.generations.items() if name in state.strategies}
    state.departed_partitions = None  # fewer strategies: fewer partitions held
    return True
