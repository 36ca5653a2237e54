"""`rebalance conformance LOG`: did each recorded generation get what Kafka's Java assignor would have given?

No Spark, no broker: the log is read once, in order. Per group the command keeps the partition counts
(`partitions` events, a `join`'s `partitions`, `delete_topic`) and replica racks (`partition_racks`), and
turns every `generation` event into a conformance record (`streaming.core.conformance`, contract §6).

Output: one line per generation (`--json`: the records themselves, one JSON object per line) and a
summary per protocol. Lines that are not JSON objects, and `generation` events without the fields the
check needs, are reported on stderr with their line number and skipped.
Exit codes: 0 every checked generation conforms, 1 at least one does not, 2 bad usage or a log that
cannot be read.
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any, TextIO

from streaming.cli.usage import UsageError, check_readable
from streaming.core.conformance import conformance_record

EXIT_DIFFERS = 1


class _Group:
    def __init__(self) -> None:
        self.topics: dict[str, int] = {}
        self.partition_racks: dict[str, list[list[str]]] = {}


def _lines(path: str) -> Iterator[tuple[int, str]]:
    try:
        with open(path, encoding="utf-8", errors="strict") as f:
            yield from enumerate(f, start=1)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None


def generation_problem(event: dict[str, Any]) -> str | None:
    """Why a `generation` event cannot be checked (the fields the conformance check reads), or None."""
    members = event.get("members")
    if not isinstance(members, dict):
        return "members: expected an object of member id -> member"
    for mid, m in members.items():
        if not isinstance(m, dict) or not isinstance(m.get("topics"), list):
            return f"members[{mid!r}].topics: expected a list of topic names"
        for key in ("owned", "assigned"):
            parts = m.get(key, {})
            if not isinstance(parts, dict) or not all(
                isinstance(ps, list) and all(type(p) is int for p in ps) for ps in parts.values()
            ):
                return f"members[{mid!r}].{key}: expected an object of topic -> list of partition numbers"
        if "owned_generation" in m and type(m["owned_generation"]) is not int:
            return f"members[{mid!r}].owned_generation: expected an integer"
    return None


def _apply_metadata(group: _Group, event: dict[str, Any]) -> None:
    """Partition counts and replica racks the group's leader would see from now on."""
    if event.get("type") == "delete_topic":
        group.topics.pop(event.get("topic"), None)
        group.partition_racks.pop(event.get("topic"), None)
        return
    partitions = event.get("partitions")
    if isinstance(partitions, dict):
        group.topics.update({t: n for t, n in partitions.items() if type(n) is int})
    racks = event.get("partition_racks")
    if isinstance(racks, dict):
        group.partition_racks.update(racks)


def _parts(per_topic: dict[str, list[int]]) -> str:
    return ",".join(f"{t}[{','.join(map(str, ps))}]" for t, ps in per_topic.items())


def describe(record: dict[str, Any]) -> str:
    """One human line for a conformance record."""
    head = f"{record['group']} generation {record['generation']} {record['protocol']}:"
    if record["conforms"] is None:
        return f"{head} not checked ({record['reason']})"
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
    groups: dict[str, _Group] = defaultdict(_Group)
    counts: Counter = Counter()
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"{path}:{number}: skipped: invalid JSON ({exc.msg})", file=err)
            counts["invalid", "lines"] += 1
            continue
        if not isinstance(event, dict) or not isinstance(event.get("group"), str):
            print(f"{path}:{number}: skipped: not an event object with a group", file=err)
            counts["invalid", "lines"] += 1
            continue
        group = groups[event["group"]]
        if event.get("type") != "generation":
            _apply_metadata(group, event)
            continue
        problem = generation_problem(event)
        if problem is not None:
            print(f"{path}:{number}: skipped generation event: {problem}", file=err)
            counts["invalid", "lines"] += 1
            continue
        record = conformance_record(event, group.topics, group.partition_racks or None)
        if record is None:
            continue
        verdict = {True: "conform", False: "differ", None: "not checked"}[record["conforms"]]
        counts[str(record["protocol"]), verdict] += 1
        out.write((json.dumps(record, ensure_ascii=False) if as_json else describe(record)) + "\n")
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
