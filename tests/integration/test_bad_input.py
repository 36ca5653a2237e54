"""Bad input becomes dead letters with a reason, its bytes and its position; valid events around it are
processed as if it were not there; nothing crashes.

Every kind through `replay` of a file; the malformed and unknown ones through Kafka (`serve --once`) too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline_helpers import by_group, config, local_records, run_replay, run_serve_once, serve_topics, write_log

from streaming.core.config import Limits
from streaming.kafka.loader import load_log

pytestmark = pytest.mark.spark

LIMITS = Limits()
G = "shop"


def valid_events() -> list[dict]:
    """With `ts`, so event times do not fall back to Kafka record timestamps (and match a file replay)."""
    events = [
        {"group": G, "type": "partitions", "partitions": {"orders": 4}},
        {"group": G, "type": "join", "member": "m1", "topics": ["orders"]},
        {"group": G, "type": "join", "member": "m2", "topics": ["orders"]},
        {"group": G, "type": "partitions", "partitions": {"orders": 6}},
        {"group": G, "type": "leave", "member": "m1"},
    ]
    return [{**e, "ts": 1_732_200_000_000 + 1000 * i} for i, e in enumerate(events)]


# (line, reason fragment) - each goes between valid events
BAD_FOR_KAFKA = [
    ('{"group": "shop", "type": "join", "member": ', "invalid JSON"),
    ('{"group": "shop", "type": "rebalance-now"}', "unknown type 'rebalance-now'"),
    (b"\xff\xfe not utf-8", "not UTF-8"),
    ('["shop", "join"]', "not a JSON object"),
]
BAD_FOR_FILES = [
    *BAD_FOR_KAFKA,
    ('{"group": "shop", "type": "join", "member": "m3", "topics": "orders"}', "field 'topics': expected an array"),
    ('{"group": "shop", "type": "join", "member": 7, "topics": ["orders"]}', "field 'member': expected a string"),
    ('{"group": "shop", "type": "leave", "member": "ghost"}', "unknown member 'ghost'"),
    ('{"group": "shop", "type": "partitions", "partitions": {"orders": 2}}', "cannot shrink"),
    ('{"group": "shop", "type": "partitions", "partitions": {"orders": 0}}', "must be >= 1"),
    (json.dumps({"group": G, "type": "partitions", "partitions": {"big": LIMITS.max_partitions_per_topic + 1}}),
     f"partition count {LIMITS.max_partitions_per_topic + 1} exceeds the limit"),
    (json.dumps({"group": G, "type": "subscribe", "member": "m2",
                 "topics": [f"t{i}" for i in range(LIMITS.max_topics_per_subscription + 1)]}),
     "topics exceed the limit"),
    (json.dumps({"group": G, "type": "join", "member": "m" * (LIMITS.max_name_chars + 1), "topics": ["orders"]}),
     "characters exceed the limit"),
    (json.dumps({"group": G, "type": "join", "member": "huge", "topics": ["orders"], "pad": "x" * 2_000_000}),
     "bytes exceeds the limit"),
]


def interleave(bad: list[tuple[str | bytes, str]]) -> list[dict | str | bytes]:
    """Valid events with bad lines between them (the last bad lines trail)."""
    good = valid_events()
    out: list[dict | str | bytes] = []
    for i in range(max(len(good), len(bad))):
        if i < len(good):
            out.append(good[i])
        if i < len(bad):
            out.append(bad[i][0])
    return out


def _check(dead: list[dict], bad: list[tuple[str | bytes, str]], where: dict[str | bytes, dict] | str) -> None:
    """One dead letter per bad line, found by its reason; its source is `where[line]` (files) or lies in
    the topic `where` (Kafka); it carries the original bytes (a prefix when they are oversized)."""
    assert len(dead) == len(bad), [d["reason"] for d in dead]
    for line, reason in bad:
        matches = [d for d in dead if reason in d["reason"]]
        assert len(matches) == 1, (reason, [d["reason"] for d in dead])
        d = matches[0]
        if isinstance(where, dict):
            assert d["source"] == where[line]
        else:
            assert d["source"]["topic"] == where
        raw = line if isinstance(line, bytes) else line.encode()
        if len(raw) <= LIMITS.max_event_bytes:
            kept = d.get("original")
            assert (kept.encode() if kept is not None else None) == raw or "original_base64" in d
        else:
            assert d.get("truncated") is True and len(json.dumps(d)) < LIMITS.max_record_bytes


def test_replay_dead_letters_bad_lines(spark, tmp_path: Path) -> None:
    lines = interleave(BAD_FOR_FILES)
    log = write_log(tmp_path / "bad.jsonl", lines)
    clean = write_log(tmp_path / "clean.jsonl", valid_events())
    cfg = config("sticky,cooperative-sticky")

    diffs, dead = run_replay(spark, log, tmp_path / "out", cfg, max_events=5)

    _check(dead, BAD_FOR_FILES, {e: {"file": "bad.jsonl", "line": i + 1} for i, e in enumerate(lines)
                                 if not isinstance(e, dict)})
    # the valid events produce exactly what they produce alone (positions aside)
    clean_diffs, _ = local_records(clean, cfg)
    assert by_group(diffs, positions=False) == by_group(clean_diffs, positions=False)
    assert len(diffs) > 0


@pytest.mark.kafka
def test_serve_dead_letters_bad_records(spark, kafka_bootstrap, unique_topic, tmp_path: Path) -> None:
    lines = interleave(BAD_FOR_KAFKA)
    log = write_log(tmp_path / "bad.jsonl", lines)
    clean = write_log(tmp_path / "clean.jsonl", valid_events())
    cfg = config("sticky")
    topics = serve_topics(unique_topic)
    load_log(log, kafka_bootstrap, topics.events, progress=None)

    diffs, dead = run_serve_once(spark, kafka_bootstrap, topics, tmp_path / "ckpt", cfg)

    _check(dead, BAD_FOR_KAFKA, topics.events)
    clean_diffs, _ = local_records(clean, cfg)
    assert by_group(diffs, positions=False) == by_group(clean_diffs, positions=False)


POISON_MIX = [
    # over-long, and its tail alone would be a valid join: one dead letter with the true size, no join
    b'{"pad": "' + b"x" * 2_000_000 + b'"} {"group": "shop", "type": "join", "member": "evil", "topics": ["orders"]}',
    b"{",  # a piece of pretty-printed JSON
    b'{"group": "shop", "type": "join", "member": "m3", "topics": ["orders"], "group": "other"}',  # duplicate key
    b"[" * 3000,  # deep nesting
    "é".encode() * 600_000,  # over-long, cut inside a character
    b'{"group": "shop", "type": "leave", "member": "ghost"}',
]


@pytest.mark.kafka
def test_load_and_serve_dead_letter_exactly_what_replay_dead_letters(spark, kafka_bootstrap, unique_topic,
                                                                    tmp_path: Path) -> None:
    """Same reasons, originals and true sizes through both paths; a log with a BOM and no final newline."""
    log = tmp_path / "poison.jsonl"
    write_log(log, interleave([(line, "") for line in POISON_MIX]))
    log.write_bytes(b"\xef\xbb\xbf" + log.read_bytes().rstrip(b"\n"))
    cfg = config("sticky")
    replay_diffs, replay_dead = run_replay(spark, log, tmp_path / "out", cfg)
    topics = serve_topics(unique_topic)
    load_log(log, kafka_bootstrap, topics.events, progress=None)
    serve_diffs, serve_dead = run_serve_once(spark, kafka_bootstrap, topics, tmp_path / "ckpt", cfg)

    def essence(d: dict) -> tuple:
        return (d["group"], d["reason"], d.get("original"), d.get("original_base64"), d.get("original_bytes"),
                d.get("truncated"))

    assert sorted(map(essence, serve_dead), key=repr) == sorted(map(essence, replay_dead), key=repr)
    assert len(replay_dead) == len(POISON_MIX)
    sizes = {d["reason"]: d.get("original_bytes") for d in replay_dead}
    assert sizes[f"event of {len(POISON_MIX[0])} bytes exceeds the limit of {LIMITS.max_event_bytes} bytes"] \
        == len(POISON_MIX[0])
    assert by_group(serve_diffs, positions=False) == by_group(replay_diffs, positions=False)
    assert all(d["cause"].get("member") != "evil" for d in replay_diffs + serve_diffs)
    # line 1 is valid once its BOM is dropped; the last line (no newline) is read: the log is complete
    lines = {d["source"]["line"] for d in replay_dead}
    assert 1 not in lines and len(interleave([(line, "") for line in POISON_MIX])) in lines
