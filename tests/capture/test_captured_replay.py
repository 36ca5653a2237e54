"""Offsets-topic captures replayed (docs/events-and-diffs.md §1): for every group whose recorded generations all
conform, the group's own strategy gives exactly the `observed` records — on the real broker records of
fixtures/consumer-offsets and on the generated multi-group history (`offsets_history`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import offsets_history as hist
from captured_groups import assert_own_strategy_is_observed, conforming_groups

from assignors import STRATEGIES
from streaming.capture.coordinator_events import Translator, Undecodable
from streaming.core.config import PipelineConfig
from streaming.core.local import read_jsonl, replay

FIXTURES = Path(__file__).with_name("fixtures") / "consumer-offsets" / "group_metadata"
REAL_COUNTS = {"t01": 3, "__consumer_offsets": 50}  # what the fixtures' assignments cover
TOPICS = {"orders": "orders", "payments": "payments", "legacy": "legacy", "clicks": "clicks"}
COUNTS = {"orders": 3, "payments": 4, "legacy": 2}  # cluster metadata (clicks: from its PartitionMetadata)


def captured(translator: Translator, records: list[tuple[bytes | None, bytes | None]], path: Path) -> Path:
    """The records through the capture's translator, in order, written as the capture writes its log."""
    with open(path, "w") as f:
        for offset, (key, value) in enumerate(records):
            out = translator.record(key, value, 0, offset, 777)
            for event in [] if isinstance(out, Undecodable) else out:
                f.write(json.dumps(event) + "\n")
    return path


def replayed(log: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"diff": [], "dead-letter": [], "conformance": []}
    for o in replay(read_jsonl(log), PipelineConfig(strategies=STRATEGIES), now_ms=lambda: 0):
        out[o.kind].append(json.loads(o.value))
    return out


def test_the_real_records_replay_as_the_groups_ran(tmp_path: Path) -> None:
    """A librdkafka range group through generations 3, 6 and 7, then Empty; another group's one generation. The
    records are the topic's compacted survivors, taken in the order their groups changed state."""
    keys = sorted(FIXTURES.glob("*.key"), key=_state_ts)
    records: list[tuple[bytes | None, bytes | None]] = [(k.read_bytes(), k.with_suffix(".payload").read_bytes())
                                                        for k in keys]
    out = replayed(captured(Translator("__consumer_offsets", partition_count=REAL_COUNTS.get), records,
                            tmp_path / "real.jsonl"))
    assert out["dead-letter"] == []
    groups = conforming_groups(out["conformance"])
    assert groups == {"kafkesc-devcluster-group-id": "range", "ivan-experimental-consumer": "range"}
    for group, protocol in groups.items():
        assert_own_strategy_is_observed(out["diff"], group, protocol)
    emptied = [d for d in out["diff"] if d["cause"].get("generation") == 8]
    assert sorted(d["strategy"] for d in emptied) == sorted([*STRATEGIES, "observed"])
    assert {(d["paused"], d["revoked"], d["members"]) for d in emptied} == {(0, 3, 0)}


def _state_ts(key: Path) -> int:
    """The record's `current_state_timestamp`, as the fixture's decoded view spells it."""
    view = key.with_suffix(".ts_int.fmt").read_text()
    return int(view.split("current_state_timestamp: ")[1].split(",")[0])


def test_the_generated_history_replays_as_its_groups_ran(tmp_path: Path) -> None:
    out = replayed(captured(Translator("__consumer_offsets", partition_count=COUNTS.get), hist.history(TOPICS),
                            tmp_path / "generated.jsonl"))
    assert out["dead-letter"] == []
    groups = conforming_groups(out["conformance"])
    assert groups == {"orders": "range", "payments": "cooperative-sticky", "legacy": "sticky",
                      "clicks": "server-range"}
    for group, protocol in groups.items():
        assert_own_strategy_is_observed(out["diff"], group, protocol)
