"""Diff and conformance records folded into the metric state `rebalance exporter` serves. Pure: no I/O.

The state is a function of the records read so far and nothing else, so an exporter that reads its
topics from the beginning after a restart ends with the same counters it had (see docs/exporter.md).

Per `(group, strategy)` — `strategy` is a library strategy or the `observed` pseudo-strategy of
captured groups — counters sum over rounds and gauges hold the last round's value. A round is a diff
record whose `phase` is not `replace` (a static replacement is not a round), including one in which
Kafka's assignor threw (`error`; also counted apart); a record split into `part`s counts once (every
part repeats the metrics), at its first part.

Label cardinality is bounded: groups not matching `groups` (a regex, full match) get no series and are
counted as `filtered`; of the others the first `max_groups` met get series of their own, and every
later group's counters are added to the series of the pseudo-group `OTHER` (its gauges are not kept:
the last value of some group would mean nothing), so sums over groups stay exact. A group once tracked
stays tracked (dropping it would reset its counters). Strategy labels are the library's names plus
`observed` (an unknown name makes the record undecodable); a conformance record's `protocol` outside
them is labelled `other`.

A record that does not decode — not UTF-8 JSON, not an object, a field missing or of the wrong type —
changes nothing but `decode_errors`; `add` returns the reason for the caller to log.

Load in msgs/s (contract §7): a record of a group with traffic carries `rate_total`, `rate_min` and
`rate_max`, kept as gauges of the last round (unset again by a round without them: the group's members no
longer subscribe to a topic with traffic); `keys_moved` ({topic: share}, in the rounds caused by a
partition-count change of a topic with keyed traffic) is kept per group and topic, the last one met.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from assignors.registry import OBSERVED, STRATEGIES
from streaming.core.record_encoding import PHASES

DIFF = "diff"
CONFORMANCE = "conformance"
OTHER = "__other__"  # the pseudo-group that holds the counters of groups beyond max_groups
OTHER_PROTOCOL = "other"
KNOWN_STRATEGIES = frozenset((*STRATEGIES, OBSERVED))

_COUNTS = ("members", "partitions", "unassigned", "paused", "load_min", "load_max", "moves")
_RATES = ("rate_total", "rate_min", "rate_max")  # msgs/s, contract §7


@dataclass
class StrategySeries:
    """One group under one strategy: counters over its rounds, gauges of its last round."""

    rounds: int = 0
    rebalances: int = 0  # first rounds of a rebalance (phase eager, incremental or revoke)
    moves: int = 0
    moves_beyond_min: int = 0  # sum of moves - min_moves over rounds where min_moves is known
    paused: int = 0
    unconverged_rounds: int = 0
    skipped_generations: int = 0
    assignor_errors: int = 0  # rounds in which Kafka's assignor throws (the record carries `error`)
    stopped_ms: float = 0.0  # sum of `stopped_ms` (partition-ms; ints and halves, so the sum is exact)
    lag_added: float = 0.0  # sum of `lag_added` (messages; records of groups with traffic carry it)
    # gauges; None until a record set them (never set for OTHER)
    generation: int | None = None
    members: int | None = None
    partitions: int | None = None
    unassigned: int | None = None
    load_imbalance: int | None = None
    last_paused: int | None = None
    last_round_ts: float | None = None  # seconds: event_ts, else emitted_ts
    rate_total: float | None = None  # msgs/s of the last round; None: the group had no traffic then
    rate_min: float | None = None
    rate_max: float | None = None

    @property
    def stopped_seconds(self) -> float:
        """Partition-seconds of consumption stopped (docs/cost.md)."""
        return self.stopped_ms / 1000


@dataclass
class ConformanceSeries:
    """Conformance records of one group and protocol."""

    checks: int = 0
    mismatches: int = 0  # conforms false: the real assignment differs from Kafka's Java assignor's
    unknown: int = 0  # conforms null: the library cannot tell (unknown protocol, partial record)


@dataclass
class Health:
    """What the exporter itself read; the service sets the broker-facing fields."""

    records: dict[str, int] = field(default_factory=lambda: {DIFF: 0, CONFORMANCE: 0})
    decode_errors: dict[str, int] = field(default_factory=lambda: {DIFF: 0, CONFORMANCE: 0})
    filtered_records: int = 0  # records of groups not matching --groups
    overflow_records: int = 0  # records of groups beyond --max-groups (counted under OTHER)
    lag: dict[str, int] = field(default_factory=dict)  # topic -> records not yet read
    broker_up: bool = False
    caught_up: bool = False  # read up to the end offsets seen at start


class DecodeError(ValueError):
    """A record the fold cannot use; the message names the field."""


class MetricState:
    """The fold: `add(kind, value)` per record, in topic order per group."""

    def __init__(self, max_groups: int = 1000, groups: str | None = None) -> None:
        if max_groups < 1:
            raise ValueError(f"max_groups: expected a positive integer, got {max_groups}")
        self.max_groups = max_groups
        self.pattern = re.compile(groups) if groups is not None else None
        self.tracked: set[str] = set()
        self.strategies: dict[tuple[str, str], StrategySeries] = {}
        self.conformance: dict[tuple[str, str], ConformanceSeries] = {}
        self.keys_moved: dict[tuple[str, str], float] = {}  # (group, topic) -> share of the last growth
        self.health = Health()
        self.version = 0  # counts records folded (and rejected): a cache of the exposition keys on it

    def snapshot(self) -> MetricState:
        """A copy, for rendering while the fold goes on."""
        out = copy.copy(self)
        out.tracked = set(self.tracked)
        out.strategies = {k: copy.copy(v) for k, v in self.strategies.items()}
        out.conformance = {k: copy.copy(v) for k, v in self.conformance.items()}
        out.keys_moved = dict(self.keys_moved)
        out.health = copy.deepcopy(self.health)
        return out

    def add(self, kind: str, value: bytes | None) -> str | None:
        """Fold one record of `kind` (DIFF or CONFORMANCE); returns None, or why it was not decodable."""
        try:
            record = _object(value)
            group = _str(record, "group")
            if kind == DIFF:
                update = self._diff_update(record)
            elif kind == CONFORMANCE:
                update = self._conformance_update(record)
            else:
                raise ValueError(f"unknown record kind {kind!r}")
        except DecodeError as exc:
            self.version += 1
            self.health.decode_errors[kind] += 1
            return str(exc)
        self.version += 1
        self.health.records[kind] += 1
        label = self._group_label(group)
        if label is not None:
            update(label)
        return None

    def _group_label(self, group: str) -> str | None:
        if self.pattern is not None and not self.pattern.fullmatch(group):
            self.health.filtered_records += 1
            return None
        if group in self.tracked:
            return group
        if group != OTHER and len(self.tracked) < self.max_groups:
            self.tracked.add(group)
            return group
        self.health.overflow_records += 1
        return OTHER

    def _diff_update(self, r: dict[str, Any]) -> Any:
        strategy = _str(r, "strategy")
        if strategy not in KNOWN_STRATEGIES:
            raise DecodeError(f"strategy: unknown {strategy[:100]!r}")
        phase = _str(r, "phase")
        if phase not in PHASES:
            raise DecodeError(f"phase: unknown {phase[:100]!r}")
        generation = _int(r, "generation")
        n = {name: _int(r, name) for name in _COUNTS}
        min_moves = _int(r, "min_moves", nullable=True)
        rates = {name: _rate(r, name) for name in _RATES}
        keys_moved = _keys_moved(r)
        event_ts = _int(r, "event_ts", nullable=True)
        emitted_ts = _int(r, "emitted_ts", nullable=True)
        skipped = _int(r, "skipped_generations", nullable=True) or 0
        part = _int(r, "part", nullable=True)
        stopped = float(_optional_number(r, "stopped_ms") or 0)  # absent from records written before the cost model
        lag = float(_optional_number(r, "lag_added") or 0)
        unconverged = r.get("unconverged", False)
        if not isinstance(unconverged, bool):
            raise DecodeError("unconverged: expected true/false")
        failed = r.get("error") is not None
        first_part = part is None or part == 1

        def update(group: str) -> None:
            s = self.strategies.setdefault((group, strategy), StrategySeries())
            if first_part:
                if phase != "replace":
                    s.rounds += 1
                    s.rebalances += phase != "followup"
                    s.unconverged_rounds += unconverged
                    s.assignor_errors += failed
                s.moves += n["moves"]
                if min_moves is not None:
                    s.moves_beyond_min += n["moves"] - min_moves
                s.paused += n["paused"]
                s.skipped_generations += skipped
                s.stopped_ms += stopped
                s.lag_added += lag
            if group == OTHER:
                return
            s.generation, s.members, s.partitions = generation, n["members"], n["partitions"]
            s.rate_total, s.rate_min, s.rate_max = rates["rate_total"], rates["rate_min"], rates["rate_max"]
            for topic, share in keys_moved.items():
                self.keys_moved[(group, topic)] = share
            s.unassigned, s.load_imbalance = n["unassigned"], n["load_max"] - n["load_min"]
            if phase != "replace":
                s.last_paused = n["paused"]
                ts = event_ts if event_ts is not None else emitted_ts
                if ts is not None:
                    s.last_round_ts = ts / 1000

        return update

    def _conformance_update(self, r: dict[str, Any]) -> Any:
        _int(r, "generation")
        protocol = _str(r, "protocol")
        label = protocol if protocol in KNOWN_STRATEGIES else OTHER_PROTOCOL
        conforms = r.get("conforms", _MISSING)
        if conforms is not None and not isinstance(conforms, bool):
            raise DecodeError("conforms: expected true, false or null")

        def update(group: str) -> None:
            c = self.conformance.setdefault((group, label), ConformanceSeries())
            c.checks += 1
            c.mismatches += conforms is False
            c.unknown += conforms is None

        return update


_MISSING = object()


def _object(value: bytes | None) -> dict[str, Any]:
    if value is None:
        raise DecodeError("no value")
    try:
        record = json.loads(value.decode("utf-8"))
    except UnicodeDecodeError:
        raise DecodeError("not UTF-8") from None
    except ValueError as exc:
        raise DecodeError(f"invalid JSON: {exc}") from None
    if not isinstance(record, dict):
        raise DecodeError("not a JSON object")
    return record


def _str(r: dict[str, Any], name: str) -> str:
    v = r.get(name)
    if not isinstance(v, str):
        raise DecodeError(f"{name}: expected a string")
    return v


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _rate(r: dict[str, Any], name: str) -> float | None:
    v = r.get(name)
    if v is None:
        return None
    if not _number(v) or v < 0:
        raise DecodeError(f"{name}: expected a number >= 0 (msgs/s)")
    return float(v)


def _keys_moved(r: dict[str, Any]) -> dict[str, float]:
    v = r.get("keys_moved")
    if v is None:
        return {}
    if not isinstance(v, dict) or not all(isinstance(t, str) and _number(x) and 0 <= x <= 1 for t, x in v.items()):
        raise DecodeError("keys_moved: expected {topic: share in [0, 1]}")
    return {t: float(x) for t, x in v.items()}


def _int(r: dict[str, Any], name: str, *, nullable: bool = False) -> Any:
    v = r.get(name)
    if v is None and nullable:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise DecodeError(f"{name}: expected an integer >= 0" + (" or null" if nullable else ""))
    return v


def _optional_number(r: dict[str, Any], name: str) -> float | int | None:
    """An optional finite number >= 0 (None: absent or null)."""
    v = r.get(name)
    if v is None:
        return None
    if not _number(v) or v < 0:
        raise DecodeError(f"{name}: expected a number >= 0 or null")
    return v
