"""`rebalance replay LOG.jsonl`: the pipeline over a captured log, no broker needed.

Two engines write the same files: `spark` (the streaming job with the JSONL file source and the files
sink) and `local` (the same state machine in this process, `streaming.core.local.replay_files`), which skips
Spark's start-up (15–30 s) and so is what `auto` picks for logs of fewer than `AUTO_LOCAL_MAX_LINES` lines
without `--checkpoint`. Diffs land under `--out/diffs/`, dead letters under `--out/dead-letter/`, one file
per micro-batch of `usage.DEFAULT_BATCH` events (so progress and output come as it goes), one JSON object
per line, in source order. The run ends with one summary line of its own counts; with
`--max-dead-letter-ratio R` it exits with `EXIT_DEAD_LETTERS` (3) when more than R of its events were
dead-lettered. A log none of whose lines is a valid event is bad input (exit 2, one line naming the file
and the first reason): said before any engine starts when the lines themselves are invalid
(`check_has_events`), after the run when only the group's state rejects them (a leave of an unknown member).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from streaming.cli.usage import (
    DEFAULT_BATCH,
    EXIT_DEAD_LETTERS,
    UsageError,
    check_batch_size,
    check_checkpoint,
    check_ratio,
    check_readable,
    check_writable_dir,
    check_writable_file,
    pipeline_config,
    spark_settings,
)
from streaming.core.config import Limits
from streaming.core.lines import unterminated

AUTO_LOCAL_MAX_LINES = 20_000  # below this, Spark's start-up costs more than the local loop's single core
BINARY_PROBE = 8_000  # bytes: a NUL among a file's first bytes marks it binary (git's own test); JSON text has none


def check_log(path: str) -> list[Path]:
    """The log's files, or a usage error naming what cannot be read."""
    from streaming.core.local import log_files

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file or directory")
    files = log_files(p)
    if not files:
        raise UsageError(f"{path}: directory holds no *.jsonl files")
    for f in files:
        if not f.is_file():
            raise UsageError(f"{f}: not a regular file")
        check_readable(f)
    return files


def check_has_events(files: list[Path], limits: Limits) -> None:
    """A usage error when no line of the log is a valid event by itself (what the group's state rejects is
    judged by the run), naming the first file and its first reason; a log of blank lines or none is no error.

    The scan stops at the first valid event, so a good log costs one line. A binary file is named as such
    from its first `BINARY_PROBE` bytes, without reading on, unless a valid event comes first (a capture
    whose tail a crash filled with NUL bytes still replays)."""
    from streaming.core.events import InvalidEvent, parse_event
    from streaming.core.local import read_jsonl

    problems: list[str] = []
    for index, path in enumerate(files):
        with path.open("rb") as f:
            binary = b"\0" in f.read(BINARY_PROBE)
        invalid, first, read = 0, "", 0
        for rec in read_jsonl(path, index, max_event_bytes=limits.max_event_bytes):
            try:
                parse_event(rec.value, limits, rec.size)
                return
            except InvalidEvent as exc:
                invalid += 1
                first = first or f"line {rec.source['line']}: {exc.reason}"
            read += (rec.size or len(rec.value)) + 1
            if binary and read >= BINARY_PROBE:
                break
        if binary:
            problems.append(f"{path}: a binary file, not a log of JSON events (one per line)")
        elif invalid:
            lines = "its line is not" if invalid == 1 else f"none of its {invalid:,} lines is"
            problems.append(f"{path}: {lines} a valid event; {first}")
    if problems:
        raise UsageError(problems[0])


def choose_engine(engine: str, files: list[Path], checkpoint: str | None, master: str = "local[2]") -> str:
    """`--engine auto` -> local or spark; a local engine cannot resume from a Spark checkpoint, nor run on a
    cluster."""
    from streaming.core.local import line_count

    if engine == "local" and checkpoint:
        raise UsageError("--checkpoint needs --engine spark (the local engine keeps no checkpoint)")
    if engine != "auto":
        return engine
    if checkpoint or not master.startswith("local"):
        return "spark"
    return "local" if sum(line_count(f) for f in files) < AUTO_LOCAL_MAX_LINES else "spark"


def _batch_files(out: Path) -> dict[Path, int]:
    """Every batch file under `out` with its modification time (to tell this run's files from older ones)."""
    return {f: f.stat().st_mtime_ns for f in out.glob("*/batch-*.jsonl")}


def _records_in(paths: list[Path]) -> int:
    """Records (non-blank lines) in batch files."""
    count = 0
    for path in paths:
        with path.open("rb") as f:
            count += sum(1 for line in f if line.strip())
    return count


def _written(count: int, what: str, folder: Path) -> str:
    """A summary's count, naming its folder only when there is one (nothing written: no folder made)."""
    return f"{count:,} {what}" + (f" in {folder}/" if folder.is_dir() else "")


def _first_dead_letter(out: Path, files: list[Path]) -> str:
    """Where the run's first dead letter came from (the file too when the log is a directory) and why, from
    the first batch file."""
    from streaming.core.records import DEAD_LETTER, REPLAY_DIRS

    first = min((out / REPLAY_DIRS[DEAD_LETTER]).glob("batch-*.jsonl"))
    with first.open("rb") as f:
        record = json.loads(f.readline())
    source = record.get("source") or {}
    where = f"line {source.get('line', '?')}" + (f" of {source.get('file', '?')}" if len(files) > 1 else "")
    return f"{where}: {record['reason']}"


def run(args: argparse.Namespace) -> int:
    files = check_log(args.log)
    config = pipeline_config(args.strategies, args.timing)
    max_events = check_batch_size(args.max_events_per_batch) or DEFAULT_BATCH
    max_ratio = check_ratio(args.max_dead_letter_ratio, "--max-dead-letter-ratio")
    master, spark_conf = spark_settings(args.master, args.spark_conf)
    check_has_events(files, config.limits)
    engine = choose_engine(args.engine, files, args.checkpoint, master)
    check_writable_dir(args.out, "--out")  # before Spark starts, not after a long run
    if args.report:
        check_writable_file(args.report, "--report")
    resume = check_checkpoint(args.checkpoint, "replay") if args.checkpoint else None
    from streaming.core.records import CONFORMANCE, DEAD_LETTER, DIFF, REPLAY_DIRS

    out = Path(args.out)
    started = time.monotonic()
    if engine == "local":
        from streaming.core.local import ReplayCounts, replay_files

        def progress(batch_id: int, events: int, totals: ReplayCounts) -> None:
            rate = totals.events / max(time.monotonic() - started, 1e-9)
            print(f"[replay] batch {batch_id}: {events} events; {totals.events:,} so far ({rate:,.0f} events/s)",
                  file=sys.stderr, flush=True)

        counts = replay_files(files, out, config, max_events_per_batch=max_events, on_batch=progress)
        events, written = counts.events, counts.written
    else:
        from streaming.spark.pipelines import replay_log
        from streaming.spark.session import build_spark

        before = _batch_files(out)
        spark = build_spark(app_name="rebalance-replay", master=master, extra_conf=spark_conf)
        if resume:
            print(resume, file=sys.stderr, flush=True)
        events = replay_log(spark, args.log, out, config, max_events_per_batch=max_events, checkpoint=args.checkpoint)
        mine = [f for f, mtime in _batch_files(out).items() if before.get(f) != mtime]
        written = {kind: _records_in([f for f in mine if f.parent.name == d]) for kind, d in REPLAY_DIRS.items()}
    seconds = time.monotonic() - started
    dead = written[DEAD_LETTER]
    if events and dead == events and not args.checkpoint:  # a resumed run read only the log's new lines
        raise UsageError(f"{args.log}: none of its {events:,} events is valid; {_first_dead_letter(out, files)} "
                         f"(dead letters in {out / REPLAY_DIRS[DEAD_LETTER]}/)")
    ratio = dead / events if events else 0.0
    print(f"replayed {events:,} events in {seconds:.1f} s ({engine} engine): "
          f"{_written(written[DIFF], 'diff records', out / REPLAY_DIRS[DIFF])}, "
          f"{_written(dead, f'dead letters ({ratio:.1%})', out / REPLAY_DIRS[DEAD_LETTER])}")
    if written[CONFORMANCE]:
        print(f"{_written(written[CONFORMANCE], 'conformance records', out / REPLAY_DIRS[CONFORMANCE])}")
    if args.checkpoint:
        for f in files:
            if unterminated(f):
                print(f"rebalance replay: {f}: the last line has no newline yet; it is left for the next run "
                      "with this --checkpoint", file=sys.stderr)
    if args.report:
        from streaming.cli.report import report_from_replay

        # a resumed replay's output holds earlier runs' records too: the events read are then not known
        report_from_replay(out, args.report, events=None if args.checkpoint else events)
        print(f"report: {args.report}")
    if max_ratio is not None and ratio > max_ratio:
        print(f"rebalance replay: {dead:,} of {events:,} events ({ratio:.1%}) were dead-lettered, more than "
              f"--max-dead-letter-ratio {max_ratio:g}; reasons in {out / REPLAY_DIRS[DEAD_LETTER]}/",
              file=sys.stderr)
        return EXIT_DEAD_LETTERS
    return 0
