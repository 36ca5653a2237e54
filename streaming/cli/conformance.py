"""`rebalance conformance LOG`: did each recorded generation get what Kafka's Java assignor would have given?

No Spark, no broker: the log is read once, in order, with the pipeline's line reader and event validation
(`streaming.core.lines`, `streaming.core.events`). Per group the command keeps the partition counts
(`partitions` events, a `join`'s `partitions`, `delete_topic`), replica racks (`partition_racks`) and its last
recorded assignment (what moves count against), and turns every `generation` event into a conformance record
(`streaming.core.conformance`, docs/conformance.md): the records the pipeline writes for the same log.

Output: one line per generation (`--json`: the records themselves, one JSON object per line) and a
summary per protocol. Invalid events (what the pipeline would dead-letter) are reported on stderr with
their line number and the reason, and skipped.
Exit codes: 0 every checked generation conforms, 1 at least one does not, 2 bad usage or a log that
cannot be read.
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from collections import Counter, defaultdict
from typing import Any, TextIO

from streaming.cli.usage import UsageError, check_readable
from streaming.core.config import Limits
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
    parse_event,
)
from streaming.core.lines import read_lines

EXIT_DIFFERS = 1


class _Group:
    def __init__(self) -> None:
        self.topics: dict[str, int] = {}
        self.partition_racks: dict[str, list[list[str]]] = {}
        # the group's last recorded assignment (member -> topic -> partitions), which moves count against, carried
        # as the pipeline's `observed` assignment is (docs/events-and-diffs.md §1); None until a generation has one
        self.assigned: dict[str, dict[str, list[int]]] | None = None
        self.instances: dict[str, str] = {}  # instance_id -> member id of the static members

    def apply(self, event: Event) -> None:
        """Partition counts and replica racks the group's leader sees from this event on; the last recorded
        assignment without the partitions of a deleted topic or a departed member."""
        if isinstance(event, DeleteTopic):
            self.topics.pop(event.topic, None)
            self.partition_racks.pop(event.topic, None)
            for per_topic in (self.assigned or {}).values():
                per_topic.pop(event.topic, None)
        elif isinstance(event, Leave):
            (self.assigned or {}).pop(event.member, None)
        elif isinstance(event, (Partitions, Join)) and event.metadata is not None:
            self.topics.update(event.metadata.partitions)
            self.partition_racks.update(event.metadata.partition_racks)
        if isinstance(event, Join) and event.instance_id is not None:
            held = self.instances.get(event.instance_id)
            if held is not None and held != event.member and self.assigned is not None:
                self.assigned[event.member] = self.assigned.pop(held, {})  # a static member under a new id
            self.instances[event.instance_id] = event.member

    def recorded(self, event: Generation) -> None:
        """After a generation: what it assigned (within the metadata) is the group's last recorded assignment;
        one whose members carry no `assigned` keeps the last one, for the members still there."""
        members = {m.id: m for m in event.members}
        if members and all(m.assigned is None for m in event.members):
            if self.assigned is not None:
                self.assigned = {mid: held for mid, held in self.assigned.items() if mid in members}
        else:
            self.assigned = {m.id: {t: [p for p in ps if p < self.topics.get(t, 0)]
                                    for t, ps in (m.assigned or {}).items()} for m in event.members}
        self.instances = {m.instance_id: m.id for m in event.members if m.instance_id is not None}


def _parts(per_topic: dict[str, list[int]]) -> str:
    return ",".join(f"{t}[{','.join(map(str, ps))}]" for t, ps in per_topic.items())


def describe(record: dict[str, Any]) -> str:
    """One human line for a conformance record."""
    head = f"{record['group']} generation {record['generation']} {record['protocol']}:"
    if record["conforms"] is None:
        return f"{head} not checked ({record['reason']})"
    if "error" in record:
        return (f"{head} DIFFERS (moves observed {record['observed_moves']}, min {record['min_moves']}): "
                f"Java's leader would have failed: {record['error']}")
    moves = (f"moves observed {record['observed_moves']}, expected {record['expected_moves']}, "
             f"min {record['min_moves']}")
    if record["conforms"]:
        return f"{head} conforms ({moves})"
    diffs = "; ".join(
        " ".join(filter(None, [mid, d["observed_only"] and "+" + _parts(d["observed_only"]),
                               d["expected_only"] and "-" + _parts(d["expected_only"])]))
        for mid, d in record["differences"].items()
    )
    return f"{head} DIFFERS ({moves}): {diffs}  (+ observed only, - expected only)"


def check_log(path: str, out: TextIO, err: TextIO, *, as_json: bool) -> Counter:
    """Write one line per generation event to `out`; returns counts per (protocol, verdict)."""
    limits = Limits()
    groups: dict[str, _Group] = defaultdict(_Group)
    counts: Counter = Counter()
    try:
        with open(path, "rb") as f:
            for line in read_lines(f, limits.max_event_bytes, complete=True):
                try:
                    event = parse_event(line.value, limits, line.size if line.cut else None)
                except InvalidEvent as exc:
                    print(f"{path}:{line.number}: skipped: {exc.reason}", file=err)
                    counts["invalid", "lines"] += 1
                    continue
                if isinstance(event, DeleteGroup):
                    groups.pop(event.group, None)
                    continue
                group = groups[event.group]
                if not isinstance(event, Generation):
                    group.apply(event)
                    continue
                record = conformance_record(json.loads(line.value), group.topics, group.partition_racks or None,
                                            group.assigned)
                group.recorded(event)
                if record is None:
                    continue
                verdict = {True: "conform", False: "differ", None: "not checked"}[record["conforms"]]
                counts[str(record["protocol"]), verdict] += 1
                out.write((json.dumps(record, ensure_ascii=False) if as_json else describe(record)) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return counts


def summary(counts: Counter) -> list[str]:
    """`PROTOCOL: N generations, M conform, K differ, U not checked` per protocol, then the total."""
    protocols = sorted({p for p, _ in counts if p != "invalid"})
    lines = []
    for name, keys in [*((p, [p]) for p in protocols), ("total", protocols)]:
        c = {v: sum(counts[p, v] for p in keys) for v in ("conform", "differ", "not checked")}
        lines.append(f"{name}: {sum(c.values())} generations, {c['conform']} conform, {c['differ']} differ, "
                     f"{c['not checked']} not checked")
    if counts["invalid", "lines"]:
        lines.append(f"skipped lines: {counts['invalid', 'lines']}")
    return lines


def run(args: Namespace) -> int:
    check_readable(args.log)
    counts = check_log(args.log, sys.stdout, sys.stderr, as_json=args.json)
    for line in summary(counts):
        print(line, file=sys.stderr if args.json else sys.stdout)
    return EXIT_DIFFERS if any(v == "differ" and n for (_, v), n in counts.items()) else 0
