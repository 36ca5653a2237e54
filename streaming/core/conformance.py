"""Conformance: would Kafka's Java client have made the assignment a real group recorded?

A `generation` event (docs/events-and-diffs.md §1) records one completed rebalance: every member's subscription, what it
reported owning (with the generation it owned it in), its rack and instance id, and what the leader gave
it. `conformance_record` recomputes the leader's assignment with `assignors.assign` from exactly those
inputs and compares (docs/conformance.md). Pure: no I/O, no clock.

Inputs as the leader saw them:
- members in the record's order, which is the insertion order of the leader's `HashMap` of
  subscriptions (the coordinator hands the members to the leader in that order); `assign` iterates
  them as that map does;
- `owned` / `owned_generation` as the member's Subscription carried them (ownedPartitions + generationId,
  or the sticky userData), `rack`, `instance_id`;
- the group's partition counts (the caller's `partitions` events: the leader's metadata) and, where
  known, replica racks per partition.

Moves (all counted over the partitions in `topics`, i.e. the leader's metadata):
- the *previous owner* of a partition is the member the group's previous generation assigned it to, when the
  log recorded that assignment (the caller's `previous`: eager clients report no `owned`, so their claims
  alone would show no move); else the member whose `owned` lists it; when several members list it, the one
  with the highest `owned_generation` (Kafka's rule); several at that highest generation means no previous
  owner (Kafka's sticky assignors invalidate such claims). A member that left in this generation is nobody's
  previous owner (its partitions are not moves, as in the diff records);
- `observed_moves` / `expected_moves`: partitions with a previous owner that the observed / expected
  assignment does not give to that owner (they go to another member, or to nobody — a cooperative
  first round withholds them);
- `min_moves`: the fewest such moves any assignment could have made that gives each member as many of
  these partitions as the *observed* assignment did, only to subscribers of their topics
  (`assignors.optimality.min_moves`), so `observed_moves - min_moves` is the observed optimality gap,
  comparable with the strategies' `moves - min_moves` in the diff records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assignors import STRATEGIES, KafkaAssignorError, Member, assign
from assignors.optimality import min_moves

Pairs = set[tuple[str, int]]


def conformance_record(
    event: Mapping[str, Any],
    topics: Mapping[str, int],
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
    previous: Mapping[str, Mapping[str, Sequence[int]]] | None = None,
) -> dict[str, Any] | None:
    """The conformance record of one validated `generation` event, or None when there is nothing to
    compare (no members, or no member carries `assigned`).

    `topics` is the group's metadata (topic -> partition count) when the rebalance happened;
    `partition_racks` the replica racks per partition where known (rack-aware assignment, KIP-881);
    `previous` the group's last recorded assignment (member -> topic -> partitions; None: the log has none),
    which the moves count against instead of the members' reported `owned`.
    `conforms` is None, with a `reason`, when the protocol is not one of the library's strategies, when
    only some members carry `assigned`, or when the recorded inputs are not a valid assignor input. When
    Kafka's assignor throws on these inputs (`KafkaAssignorError`) the group cannot have run it: `conforms`
    is false, `error` names Kafka's exception, and there are no `differences` or `expected_moves`.
    """
    members: Mapping[str, Mapping[str, Any]] = event.get("members") or {}
    if not any("assigned" in m for m in members.values()):
        return None
    record: dict[str, Any] = {
        "group": event.get("group"),
        "generation": event.get("generation"),
        "protocol": event.get("protocol"),
    }
    reason = _not_comparable(event, members)
    error = None
    if reason is None:
        inputs = {mid: _member(m) for mid, m in members.items()}
        try:
            result = assign(event["protocol"], topics, inputs, partition_racks)
        except KafkaAssignorError as exc:
            error = str(exc)
        except ValueError as exc:
            reason = f"the recorded inputs are not a valid assignor input: {exc}"
    if reason is not None:
        record.update(conforms=None, reason=reason)
    elif error is not None:
        # Java's leader would have thrown: no assignment, so a group that completed the generation did not
        # run Kafka's assignor.
        observed = {mid: _pairs(m["assigned"]) for mid, m in members.items()}
        moved = _Moves(topics, inputs, previous)
        record.update(conforms=False, error=error, observed_moves=moved.moves(observed),
                      min_moves=moved.min_moves(observed))
    else:
        observed = {mid: _pairs(m["assigned"]) for mid, m in members.items()}
        expected = {mid: set(parts) for mid, parts in result.items()}
        differences = {
            mid: {"observed_only": _by_topic(observed[mid] - expected[mid]),
                  "expected_only": _by_topic(expected[mid] - observed[mid])}
            for mid in members if observed[mid] != expected[mid]
        }
        moved = _Moves(topics, inputs, previous)
        record.update(
            conforms=not differences,
            differences=differences,
            observed_moves=moved.moves(observed),
            expected_moves=moved.moves(expected),
            min_moves=moved.min_moves(observed),
        )
    record.update(ts=event.get("ts"), source=event.get("source"))
    return record


def _not_comparable(event: Mapping[str, Any], members: Mapping[str, Mapping[str, Any]]) -> str | None:
    protocol_type = event.get("protocol_type", "consumer")
    if protocol_type != "consumer":
        return f"protocol_type {protocol_type!r} is not the consumer protocol"
    protocol = event.get("protocol")
    if protocol not in STRATEGIES:
        return f"protocol {protocol!r} is not one of the library's strategies ({', '.join(STRATEGIES)})"
    missing = [mid for mid, m in members.items() if "assigned" not in m]
    if missing:
        return f"members without assigned: {', '.join(missing)}"
    return None


def _member(m: Mapping[str, Any]) -> Member:
    """A recorded member as the leader's assignor input."""
    owned_generation = m.get("owned_generation")
    return Member(
        topics=list(m["topics"]),
        owned=[(topic, p) for topic, parts in (m.get("owned") or {}).items() for p in parts],
        generation=-1 if owned_generation is None else owned_generation,
        rack=m.get("rack"),
        instance_id=m.get("instance_id"),
    )


def _pairs(per_topic: Mapping[str, Sequence[int]]) -> Pairs:
    return {(topic, p) for topic, parts in per_topic.items() for p in parts}


def _by_topic(pairs: Pairs) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, p in sorted(pairs):
        out.setdefault(topic, []).append(p)
    return out


class _Moves:
    """Previous owners over the metadata's partitions (see the module docstring) and moves against them."""

    def __init__(self, topics: Mapping[str, int], members: Mapping[str, Member],
                 previous: Mapping[str, Mapping[str, Sequence[int]]] | None) -> None:
        self.member_ids = list(members)
        self.index = {mid: i for i, mid in enumerate(self.member_ids)}
        names = [t for t, n in topics.items() if n > 0]
        self.topic_index = {t: i for i, t in enumerate(names)}
        sizes = np.array([topics[t] for t in names], dtype=np.int64)
        self.start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.partition_topic = np.repeat(np.arange(len(names)), sizes)
        self.subscribed = np.zeros((len(members), len(names)), dtype=bool)
        self.prev = np.full(int(self.start[-1]), -1, dtype=np.int64)
        for i, m in enumerate(members.values()):
            for t in m.topics:
                if t in self.topic_index:
                    self.subscribed[i, self.topic_index[t]] = True
        if previous is None:
            self._owners_by_claims(members)
            return
        for mid, per_topic in previous.items():
            i = self.index.get(mid)  # a member that left in this generation owns nothing in it
            if i is None:
                continue
            for topic, parts in per_topic.items():
                for p in parts:
                    g = self.gid((topic, p))
                    if g is not None:
                        self.prev[g] = i

    def _owners_by_claims(self, members: Mapping[str, Member]) -> None:
        """Previous owners from the members' `owned` claims, the highest `owned_generation` winning."""
        best: dict[int, tuple[int, int | None]] = {}  # partition -> (generation, owner; None = conflicting)
        for i, m in enumerate(members.values()):
            for tp in m.owned:
                g = self.gid(tp)
                if g is None:
                    continue
                seen = best.get(g)
                if seen is None or m.generation > seen[0]:
                    best[g] = (m.generation, i)
                elif m.generation == seen[0] and seen[1] != i:
                    best[g] = (m.generation, None)
        for g, (_, owner) in best.items():
            if owner is not None:
                self.prev[g] = owner

    def gid(self, tp: tuple[str, int]) -> int | None:
        """Global id of a partition in the metadata, None outside it."""
        t = self.topic_index.get(tp[0])
        if t is None or not 0 <= tp[1] < self.start[t + 1] - self.start[t]:
            return None
        return int(self.start[t]) + tp[1]

    def moves(self, assignment: Mapping[str, Pairs]) -> int:
        kept = 0
        for mid, pairs in assignment.items():
            i = self.index[mid]
            kept += sum(1 for tp in pairs if (g := self.gid(tp)) is not None and self.prev[g] == i)
        return int(np.count_nonzero(self.prev >= 0)) - kept

    def min_moves(self, assignment: Mapping[str, Pairs]) -> int:
        """`assignors.optimality.min_moves` with the assignment's loads; a partition the assignment gives to
        several members (a client bug) counts for its previous owner if that is one of them, else for the
        first of them in record order (as in `moves`, so that ``min_moves <= moves``)."""
        new = np.full(self.prev.size, -1, dtype=np.int64)
        for mid, pairs in assignment.items():
            i = self.index[mid]
            for tp in pairs:
                g = self.gid(tp)
                if g is not None and (new[g] < 0 or self.prev[g] == i):
                    new[g] = i
        return min_moves(self.prev, new, self.partition_topic, self.subscribed)
