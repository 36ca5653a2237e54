"""`rebalance load` against a real Kafka-protocol broker: keys, murmur2 partitions, per-group order, timestamps."""

from __future__ import annotations

import json

import pytest

from assignors.partitioner import partition_for_key
from streaming.cli.main import main
from streaming.kafka.consumer import read_to_end
from streaming.kafka.loader import DEFAULT_PARTITIONS

pytestmark = [pytest.mark.kafka]


def test_load_keys_partitions_and_orders_by_group(kafka_bootstrap, tmp_path, capsys):
    groups = [f"group-{i}" for i in range(7)]
    lines = []
    for n in range(60):
        g = groups[(n * 5) % len(groups)]
        event = {"group": g, "type": "join", "member": f"m{n}", "topics": ["t"], "seq": n}
        if n % 2 == 0:
            event["ts"] = 1_700_000_000_000 + n
        lines.append(json.dumps(event))
    lines.insert(10, "this is not json")
    lines.insert(20, "")  # blank lines are skipped
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n")
    topic = f"load-{tmp_path.name}"[:200]

    assert main(["load", str(log), "--bootstrap", kafka_bootstrap, "--topic", topic]) == 0
    assert "loaded 61 events" in capsys.readouterr().err

    records = read_to_end(kafka_bootstrap, topic)
    assert len(records) == 61
    partitions = DEFAULT_PARTITIONS  # the loader created the topic
    unkeyed = [r for r in records if r.key is None]
    assert [r.value for r in unkeyed] == [b"this is not json"] and unkeyed[0].partition == 0
    for g in groups:
        mine = sorted((r for r in records if r.key == g.encode()), key=lambda r: r.offset)
        assert {r.partition for r in mine} == {partition_for_key(g.encode(), partitions)}
        seqs = [json.loads(r.value)["seq"] for r in mine]
        assert seqs == sorted(seqs) and seqs  # log order kept per group
        for r in mine:
            seq = json.loads(r.value)["seq"]
            if seq % 2 == 0:
                assert r.timestamp == 1_700_000_000_000 + seq  # the event's ts is the record timestamp


def test_load_unreadable_file_exits_2_with_one_line(tmp_path, capsys):
    assert main(["load", str(tmp_path / "missing.jsonl"), "--bootstrap", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot read" in err[0]
