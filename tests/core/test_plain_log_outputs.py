"""Logs without `generation` events keep their exact output: every record (diffs, dead letters) of the bundled
samples and of a generated history, under every strategy, pinned by a digest.

The captured-history rules (docs/events-and-diffs.md §1, "A captured history is replayed at the real group's
rebalances") apply only to groups whose log carried a `generation` event; this is what proves they leave every
other log alone. A digest changes with any byte of any record: a change meant to alter plain logs' output updates
it here, on purpose.

Each output is pinned twice: as written, and with the cost model's fields (docs/cost.md: `stopped_ms`, and
`lag_added` in the records of a group with traffic) taken out of every diff record. The second digest holds the
cost model to adding its fields and changing no other byte. (What traffic adds is held apart by
tests/core/test_traffic.py: blanking a sample's traffic lines changes its records by the load fields alone.)
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from test_group_state import random_history

from assignors import STRATEGIES
from streaming.core.config import PipelineConfig
from streaming.core.local import read_jsonl, replay
from streaming.core.records import DIFF, SourceRecord

SAMPLES = Path(__file__).resolve().parents[2] / "whatif" / "samples"
ALL = PipelineConfig(strategies=STRATEGIES)

PINNED = {  # sample -> (digest of its records, digest of its records without the cost fields)
    "autoscaling.jsonl": ("83f41ab9620316e9", "03a27d0f882d6958"),
    "flapping-member.jsonl": ("136bdb0576d58aa8", "4741f325e052b61e"),
    "large-group.jsonl": ("c1ed166bed19d4db", "a3ab8c96951ca738"),
    "mixed-instance-sizes.jsonl": ("ae14328935295b78", "3ee857089f5f6807"),
    "mixed-subscriptions.jsonl": ("ca69d3ddc87381cb", "4ef25beb5dda5f94"),
    "rack-aware.jsonl": ("f24a0302dbb8a587", "a6e6fc98e29ebf14"),
    "rolling-deploy.jsonl": ("221ea6784add6d92", "a85776d1993cf264"),
    "static-restarts.jsonl": ("cf6cb26fd3c95490", "7e40248b4008e156"),
    "topic-growth.jsonl": ("9b5b02eac2318b06", "fd7fd6b8e4256e9d"),
}
GENERATED = ("8f80eef21864d83e", "8760bfbf2eb1e6fc")
# `stopped_ms`: an integer, or an integer and a half; then `lag_added`, a double, when the group has traffic
COST_FIELDS = re.compile(rb',"stopped_ms":[0-9]+(?:\.5)?(?:,"lag_added":[0-9.e+-]+)?(?=[,}])')


def digests(records: Iterable[SourceRecord]) -> tuple[str, str]:
    """The first 16 hex digits of the SHA-256 of every output record (kind, key, value), in order: of the records
    as written, and of the same records with the cost fields taken out of each diff record (which carries them
    once)."""
    written, without = hashlib.sha256(), hashlib.sha256()
    for o in replay(records, ALL, now_ms=lambda: 0):
        head = f"{o.kind}\t{o.key}\t".encode()
        written.update(head + o.value + b"\n")
        value, found = COST_FIELDS.subn(b"", o.value)
        assert found == (o.kind == DIFF), o.value
        without.update(head + value + b"\n")
    return written.hexdigest()[:16], without.hexdigest()[:16]


def test_the_pins_cover_every_bundled_sample() -> None:
    assert sorted(p.name for p in SAMPLES.glob("*.jsonl")) == sorted(PINNED)


@pytest.mark.parametrize("sample", sorted(PINNED))
def test_a_bundled_sample_gives_its_pinned_records(sample: str) -> None:
    assert digests(read_jsonl(SAMPLES / sample)) == PINNED[sample]


def test_a_generated_history_gives_its_pinned_records() -> None:
    """Three groups, every event type but `generation`, invalid events among them (dead letters)."""
    events = random_history(11, n_events=300, groups=("g1", "g2", "g3"))
    assert not any(isinstance(e, dict) and e["type"] == "generation" for e in events)
    records = [SourceRecord(e if isinstance(e, bytes) else json.dumps(e).encode(), None,
                            {"file": "generated.jsonl", "line": i}, (0, i), None) for i, e in enumerate(events, 1)]
    assert digests(records) == GENERATED
