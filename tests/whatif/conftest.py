"""Diff records of the bundled histories, replayed once per session with the Spark-free pipeline."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assignors import Member, assign
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



def _range_generation(group: str, generation: int, ts: int, partitions: int, members: str) -> dict:
    """A `generation` event as capture writes it, each member (one letter each) given what Kafka's range
    assigns it."""
    ids = [f"consumer-{m}" for m in members]
    result = assign("range", {"orders": partitions}, {m: Member(topics=["orders"]) for m in ids})
    return {"group": group, "type": "generation", "generation": generation, "protocol_type": "consumer",
            "protocol": "range" if ids else None, "leader": ids[0] if ids else None, "ts": ts,
            "members": {m: {"topics": ["orders"], "assigned": {"orders": [p for _, p in result[m]]}} for m in ids}}


@pytest.fixture(scope="session")
def burst_capture(tmp_path_factory) -> Path:
    """A captured range group as a real capture sees it: one generation, then an hour later 13 in 37 s —
    members joining one after another, one leaving, `orders` grown from 12 to 16 partitions (the metadata
    poll's `partitions` event a second before the generation the group goes through for it), every member
    stopped. Replayed with every strategy by `replay --engine local`: the directory `replay --out` writes."""
    from streaming.cli.main import main as cli

    group, start, burst = "grp-A-range", 1_732_200_000_000, 1_732_203_600_000
    events = [{"group": group, "type": "partitions", "partitions": {"orders": 12}, "ts": start},
              _range_generation(group, 1, start, 12, "a")]
    steps = [("ab", 12), ("abc", 12), ("abcd", 12), ("acd", 12), ("acd", 16), ("acde", 16), ("ade", 16),
             ("adef", 16), ("adefg", 16), ("defg", 16), ("efg", 16), ("fg", 16), ("", 16)]
    size = 12
    for generation, (members, partitions) in enumerate(steps, 2):
        ts = burst + (generation - 2) * 3_000
        if partitions != size:
            events.append({"group": group, "type": "partitions", "partitions": {"orders": partitions},
                           "ts": ts - 1_000})
            size = partitions
        events.append(_range_generation(group, generation, ts, partitions, members))
    root = tmp_path_factory.mktemp("burst")
    log = root / "captured.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert cli(["replay", str(log), "--out", str(root / "out"), "--strategies", "all", "--engine", "local"]) == 0
    return root / "out"
