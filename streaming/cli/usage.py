"""What the user must fix: `UsageError` (one line, exit code 2) and the argument checks commands share.

Library layers raise `ValueError` naming the field; only the command line turns it into a usage error, so a
check that several commands make is written here once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

EXIT_USAGE = 2  # bad usage or unreadable/invalid input
EXIT_FAILURE = 1  # a runtime failure (a broker that cannot be reached, ...)


class UsageError(Exception):
    """Bad usage or input the user must fix; printed as one line, exit code 2."""


def pipeline_config(strategies: str) -> Any:
    """`--strategies` text -> `PipelineConfig`; bad names are a usage error."""
    from streaming.core.config import Limits, PipelineConfig, parse_strategies

    try:
        return PipelineConfig(parse_strategies(strategies), Limits())
    except ValueError as exc:
        raise UsageError(str(exc)) from None


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
