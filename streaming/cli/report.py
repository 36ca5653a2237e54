"""`rebalance report (DIR | --bootstrap HOST:PORT [--diffs-topic T] [--dead-letter-topic T] [--conformance-topic T])
--out REPORT.html`.

DIR is a replay's output directory OUT (its `diffs/`, `dead-letter/` and `conformance/`), its `OUT/diffs`
(the siblings are read all the same), or a directory of diff records alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from streaming.cli.usage import UsageError, check_writable_file, client_options, kafka_failure
from streaming.core.records import CONFORMANCE, DEAD_LETTER, DIFF, REPLAY_DIRS


def _read_jsonl_dir(path: Path) -> Iterator[dict]:
    """Records of a directory's *.jsonl files in name order, streamed; bad JSON is a usage error."""
    for file in sorted(path.glob("*.jsonl")):
        with file.open("rb") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{file}:{n}: not JSON: {exc}") from None


def replay_layout(directory: str | Path) -> tuple[Path, Path]:
    """Where DIR's diff records are, and the directory whose `dead-letter/` and `conformance/` go with them:
    OUT for a replay's output directory OUT and for its `OUT/diffs`, DIR itself for any other directory."""
    path = Path(directory)
    if not path.is_dir():
        raise UsageError(f"{directory}: not a directory")
    if not list(path.glob("*.jsonl")) and (path / REPLAY_DIRS[DIFF]).is_dir():
        return path / REPLAY_DIRS[DIFF], path
    if path.name == REPLAY_DIRS[DIFF]:
        return path, path.parent
    return path, path


def read_diffs_dir(directory: str | Path) -> Iterator[dict]:
    """Diff records from a directory of JSONL files in name order (or from its `diffs/` subdirectory, as
    `replay --out` writes them), streamed: only the metrics of each record are kept downstream."""
    path, _ = replay_layout(directory)
    count = 0
    for record in _read_jsonl_dir(path):
        count += 1
        yield record
    if not count:
        raise UsageError(f"{path}: no diff records (*.jsonl)")


def read_kind_dir(directory: str | Path, kind: str) -> Iterator[dict]:
    """The records of one kind (dead letters, conformance) of a replay's output directory, if it has them."""
    path = Path(directory) / REPLAY_DIRS[kind]
    return _read_jsonl_dir(path) if path.is_dir() else iter(())


def read_topic(bootstrap: str, topic: str, options: dict[str, str], *, missing_ok: bool) -> Iterator[dict]:
    """Every committed record of a topic (diffs, dead letters, conformance), from the beginning to the end offsets seen
    at start."""
    from streaming.kafka.consumer import iter_to_end

    for message in iter_to_end(bootstrap, topic, options, missing_ok=missing_ok):
        yield json.loads(message.value)


def report_from_replay(out: str | Path, report: str | Path, *, events: int | None = None) -> None:
    """The what-if report of a replay's output directory: its diffs, dead letters and conformance records, and
    the events it read."""
    from whatif.report import write_report

    write_report(read_diffs_dir(Path(out) / REPLAY_DIRS[DIFF]), report, dead_letters=read_kind_dir(out, DEAD_LETTER),
                 events=events, conformance=read_kind_dir(out, CONFORMANCE))


def run(args: argparse.Namespace) -> int:
    from kafka.errors import KafkaError

    from whatif.report import write_report

    if (args.diffs_dir is None) == (args.bootstrap is None):
        raise UsageError("give either DIR (a replay's --out directory) or --bootstrap HOST:PORT (with --diffs-topic)")
    check_writable_file(args.out, "--out")
    if args.diffs_dir is not None:
        diffs, out = replay_layout(args.diffs_dir)
        records: Iterable[dict] = read_diffs_dir(diffs)
        dead_letters = read_kind_dir(out, DEAD_LETTER)
        conformance = read_kind_dir(out, CONFORMANCE)
    else:
        options = client_options(args.kafka_option, args.bootstrap)
        records = read_topic(args.bootstrap, args.diffs_topic, options, missing_ok=False)
        dead_letters = read_topic(args.bootstrap, args.dead_letter_topic, options, missing_ok=True)
        conformance = read_topic(args.bootstrap, args.conformance_topic, options, missing_ok=True)
    counted, verdicts = _Counting(records, "diff records"), _Counting(conformance, "conformance records")
    try:
        report = write_report(counted, args.out, dead_letters=dead_letters, conformance=verdicts)
    except ValueError as exc:  # bad records, a missing topic
        raise UsageError(str(exc)) from None
    except (KafkaError, TimeoutError) as exc:
        raise kafka_failure(args.bootstrap, exc) from None
    print(f"rebalance report: {counted.count} diff records, {report.dead_letters} dead letters, {verdicts.count} "
          f"conformance records -> {args.out}", file=sys.stderr)
    return 0


class _Counting:
    """Pass records through, counting them (and showing progress on long inputs)."""

    def __init__(self, records: Iterable[dict], what: str) -> None:
        self.records, self.what = records, what
        self.count = 0

    def __iter__(self) -> Iterator[dict]:
        for rec in self.records:
            self.count += 1
            if self.count % 100_000 == 0:
                print(f"  {self.count:,} {self.what} read", file=sys.stderr)
            yield rec
