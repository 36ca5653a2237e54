"""Diff records of the bundled histories, replayed once per session with the Spark-free pipeline."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from streaming.core.config import PipelineConfig, parse_strategies
from streaming.core.local import read_jsonl, replay
from whatif.histories import sample_path


@pytest.fixture(scope="session")
def history_diffs(tmp_path_factory) -> Callable[[str], Path]:
    """`history_diffs(name)` -> a directory laid out as `replay --out` writes it: `diffs/diffs.jsonl` (all
    strategies) and `dead-letter/dead-letters.jsonl`; each history is replayed on first use only."""
    root = tmp_path_factory.mktemp("history-diffs")
    config = PipelineConfig(strategies=parse_strategies("all"))
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            out = root / name
            (out / "diffs").mkdir(parents=True)
            (out / "dead-letter").mkdir()
            with (out / "diffs" / "diffs.jsonl").open("wb") as diffs, \
                    (out / "dead-letter" / "dead-letters.jsonl").open("wb") as dead:
                for rec in replay(read_jsonl(sample_path(name)), config, max_events_per_batch=None):
                    (diffs if rec.kind == "diff" else dead).write(rec.value + b"\n")
            done[name] = out
        return done[name]

    return get


@pytest.fixture(scope="session")
def history_dead_letters(history_diffs) -> Callable[[str], list[dict]]:
    """`history_dead_letters(name)` -> the parsed dead letters of a history."""
    def get(name: str) -> list[dict]:
        with (history_diffs(name) / "dead-letter" / "dead-letters.jsonl").open() as f:
            return [json.loads(line) for line in f]

    return get


@pytest.fixture(scope="session")
def history_records(history_diffs) -> Callable[[str], list[dict]]:
    """`history_records(name)` -> the parsed diff records of a history (all strategies)."""
    def get(name: str) -> list[dict]:
        with (history_diffs(name) / "diffs" / "diffs.jsonl").open() as f:
            return [json.loads(line) for line in f]

    return get
