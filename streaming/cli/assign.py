"""`rebalance assign --strategy NAME SNAPSHOT.json`: one assignment of a group snapshot, printed as JSON.

A thin shell over `assignors.snapshot.load_snapshot` and `assignors.assign`; every input problem
(unreadable file, invalid JSON, a bad field, an unknown strategy) becomes a one-line `UsageError`.
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from pathlib import Path

from streaming.cli.usage import UsageError
from streaming.core import jsontext

MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024


def _read(path: str) -> str:
    """The snapshot's text ("-": standard input), at most MAX_SNAPSHOT_BYTES."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_SNAPSHOT_BYTES + 1)
        else:
            with Path(path).open("rb") as f:
                raw = f.read(MAX_SNAPSHOT_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_SNAPSHOT_BYTES:
        raise UsageError(f"{path}: larger than {MAX_SNAPSHOT_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def run(args: Namespace) -> int:
    from assignors import KafkaAssignorError, assign
    from assignors.registry import get_assignor
    from assignors.snapshot import load_snapshot

    try:
        get_assignor(args.strategy)
    except ValueError as exc:
        raise UsageError(f"--{exc}") from None  # "strategy: unknown strategy ..." names the option
    text = _read(args.snapshot)
    try:
        data = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{args.snapshot}: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # duplicate key, huge integer, nesting too deep
        raise UsageError(f"{args.snapshot}: invalid JSON: {exc}") from None
    try:
        topics, members, partition_racks = load_snapshot(data)
        result = assign(args.strategy, topics, members, partition_racks)
    except ValueError as exc:
        raise UsageError(f"{args.snapshot}: {exc}") from None
    except KafkaAssignorError as exc:  # valid input on which Kafka's own assignor fails: not a usage error
        sys.stderr.write(f"{args.snapshot}: {exc}\n")
        return 1
    out = {"assignment": {member: [[t, p] for t, p in parts] for member, parts in result.items()}}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0
