"""What the user must fix: `UsageError` (one line, exit code 2) and the argument checks commands share.

Library layers raise `ValueError` naming the field; only the command line turns it into a usage error, so a
check that several commands make is written here once.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

EXIT_USAGE = 2  # bad usage or unreadable/invalid input
EXIT_FAILURE = 1  # a runtime failure (a broker that cannot be reached, ...)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)
EXIT_DEAD_LETTERS = 3  # `replay --max-dead-letter-ratio R`: more than R of the events read were dead-lettered


class UsageError(Exception):
    """Bad usage or input the user must fix; printed as one line, exit code 2."""


class CommandFailure(Exception):
    """A runtime failure with its cause and the next step (a broker that cannot be reached, ...); printed as
    one line, exit code 1."""


def kafka_failure(bootstrap: str, exc: BaseException, waited: float | None = None) -> CommandFailure:
    """A Kafka client error as one line with what to check; `waited`: the seconds a `--connect-timeout` let
    the client wait for the broker's first answer."""
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError

    detail = str(exc) or type(exc).__name__
    if waited is not None and isinstance(exc, KafkaTimeoutError):
        detail = f"no answer within {waited:g} s; --connect-timeout waits longer"
    if isinstance(exc, (KafkaConnectionError, KafkaTimeoutError, OSError)):
        return CommandFailure(f"cannot reach Kafka at {bootstrap} ({detail}); check the address (--bootstrap), that "
                              "the broker is up and advertises a listener reachable from here, and the security "
                              "settings (--kafka-option security.protocol=..., sasl.*, ssl.*)")
    return CommandFailure(f"Kafka at {bootstrap} failed: {type(exc).__name__}: {detail}")


def pipeline_config(strategies: str, timing: str = "") -> Any:
    """`--strategies` and `--timing` text -> `PipelineConfig`; bad names or values are a usage error."""
    from streaming.core.config import Limits, PipelineConfig, parse_strategies, parse_timing

    try:
        return PipelineConfig(parse_strategies(strategies), Limits(), timing=parse_timing(timing))
    except ValueError as exc:
        raise UsageError(str(exc).replace("timing: ", "--timing: ", 1)) from None


DEFAULT_BATCH = 2_000
"""Events per micro-batch of `replay` and `serve` unless --max-events-per-batch: a few seconds of work each at
the state machine's speed, and a bound on what one batch holds (a group's rows in the state function, the
output the exactly-once sink collects), however large a backlog the service finds."""


def check_batch_size(n: int | None) -> int | None:
    """`--max-events-per-batch`: a positive integer or None (no cap)."""
    if n is not None and n < 1:
        raise UsageError(f"--max-events-per-batch: expected a positive integer, got {n}")
    return n


def client_options(pairs: list[str], bootstrap: str, client: str = "consumer") -> dict[str, str]:
    """`--kafka-option` pairs, checked against kafka-python's names for `client`; without bootstrap.servers."""
    from streaming.kafka.options import parse_cli_options, to_kafka_python

    try:
        options = parse_cli_options(pairs)
        to_kafka_python({**options, "bootstrap.servers": bootstrap}, client)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options.pop("bootstrap.servers", None)
    return options


_MASTER = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|spark://[^\s/]+(:\d+)?(,[^\s/]+(:\d+)?)*|yarn|k8s://\S+")


def spark_settings(master: str, pairs: list[str]) -> tuple[str, dict[str, str]]:
    """`--master` and `--spark-conf` pairs, checked: (master URL, {key: value})."""
    if not _MASTER.fullmatch(master):
        raise UsageError(f"--master: expected local[N] or spark://HOST:PORT (or yarn, k8s://...), got {master!r}")
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().startswith("spark."):
            raise UsageError(f"--spark-conf: expected spark.KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value.strip()
    return master, conf


def check_readable(path: str | Path) -> Path:
    """A file the command will read: it exists and can be opened, or a usage error naming it."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            f.read(1)
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return p


def check_writable_dir(path: str | Path, option: str) -> Path:
    """A directory the command will write into (created if missing), or a usage error naming the option."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {path}: not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
    _check_creates_files(p, option, path)
    return p


def _check_creates_files(directory: Path, option: str, path: str | Path) -> None:
    """A new file can be made in `directory` now (permissions, read-only mounts, a full inode table)."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None


def check_writable_file(path: str | Path, option: str) -> Path:
    """A file the command will write at the end: its directory must exist and take a new file now, so a long
    run does not end in an error."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    parent = p.parent
    if not parent.is_dir():
        raise UsageError(f"{option} {path}: directory {parent} does not exist")
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"{option} {path}: cannot write: permission denied")
    _check_creates_files(parent, option, path)
    return p


def check_checkpoint(path: str | Path, label: str) -> str:
    """A checkpoint Spark can resume from (or a new one): the line saying where the run starts, or a usage
    error naming the missing or inconsistent file and what to do."""
    from streaming.spark.checkpoint import CheckpointError, inspect, resume_line

    check_writable_dir(path, "--checkpoint")
    try:
        return resume_line(label, inspect(path))
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None


def check_ratio(value: float | None, option: str) -> float | None:
    """A ratio option: a number from 0 to 1, or None (not given)."""
    if value is not None and not 0 <= value <= 1:
        raise UsageError(f"{option}: expected a number from 0 to 1, got {value}")
    return value
