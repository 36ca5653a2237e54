"""Logs without `generation` events keep their exact output: every record (diffs, dead letters) of the bundled
samples and of a generated history, under every strategy, pinned by a digest.

The captured-history rules (docs/events-and-diffs.md §1, "A captured history is replayed at the real group's
rebalances") apply only to groups whose log carried a `generation` event; this is what proves they leave every
other log alone. A digest changes with any byte of any record: a change meant to alter plain logs' output updates
it here, on purpose.

Each output is pinned twice: as written, and with `stopped_ms` (the cost model, docs/cost.md) taken out of every
diff record. The second digest holds the cost model to adding its one field and changing no other byte.
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

PINNED = {  # sample -> (digest of its records, digest of its records without `stopped_ms`)
    "autoscaling.jsonl": ("23a5e63d86b344f9", "02afa048d1cbcb82"),
    "flapping-member.jsonl": ("b92f9ad8871e7f7b", "5c9a6ac6f2a435f9"),
    "large-group.jsonl": ("48941a4ce27ba2be", "f3c486a922748c4a"),
    "mixed-instance-sizes.jsonl": ("dbe7c20970447043", "1599084d06420154"),
    "mixed-subscriptions.jsonl": ("01909784de4876b5", "b13f4fb576726385"),
    "rack-aware.jsonl": ("ba0482037c8f74bd", "fae8c38e71500daf"),
    "rolling-deploy.jsonl": ("37dae705a0b8dbb4", "dacf4a28dadaa032"),
    "static-restarts.jsonl": ("bdeabad1b009d77e", "b69564804e8e595d"),
    "topic-growth.jsonl": ("a74b7f71ed1e5afc", "2d044cda0b5680ee"),
}
GENERATED = ("1cdea01c262cbd36", "1fd59665ca7188ae")
STOPPED_MS = re.compile(rb',"stopped_ms":[0-9]+(?:\.5)?(?=[,}])')  # an integer, or an integer and a half


def digests(records: Iterable[SourceRecord]) -> tuple[str, str]:
    """The first 16 hex digits of the SHA-256 of every output record (kind, key, value), in order: of the records
    as written, and of the same records with `stopped_ms` taken out of each diff record (which carries it once)."""
    written, without = hashlib.sha256(), hashlib.sha256()
    for o in replay(records, ALL, now_ms=lambda: 0):
        head = f"{o.kind}\t{o.key}\t".encode()
        written.update(head + o.value + b"\n")
        value, found = STOPPED_MS.subn(b"", o.value)
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
