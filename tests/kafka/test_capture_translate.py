"""The pure half of `rebalance capture`: offsets-topic records -> events, on the multi-group history."""

from __future__ import annotations

import re

import offsets_history as hist

from streaming.kafka.coordinator_events import Translator, Undecodable

TOPICS = {"orders": "orders", "payments": "payments", "legacy": "legacy", "clicks": "clicks"}
COUNTS = {"orders": 3, "payments": 4, "legacy": 2}  # cluster metadata (clicks: from its PartitionMetadata)


def run(translator: Translator) -> tuple[dict[str, list[dict]], list[Undecodable]]:
    per_group: dict[str, list[dict]] = {}
    bad = []
    for offset, (key, value) in enumerate(hist.history(TOPICS)):
        out = translator.record(key, value, 0, offset, 777)
        if isinstance(out, Undecodable):
            bad.append(out)
            continue
        for ev in out:
            assert ev.pop("source") == {"topic": "__consumer_offsets", "partition": 0, "offset": offset}
            per_group.setdefault(ev["group"], []).append(ev)
    return per_group, bad


def test_history_gives_exactly_the_expected_events_per_group() -> None:
    tr = Translator("__consumer_offsets", partition_count=COUNTS.get)
    got, bad = run(tr)
    assert got == hist.expected_events(TOPICS)
    assert [b.offset for b in bad] == [hist.UNDECODABLE_INDEX]
    assert "GroupMetadataValue.protocolType" in bad[0].reason
    assert tr.stats["offset_commits"] == 2 and tr.stats["non_consumer_groups"] == 1
    assert tr.stats["other_record_types"] == 1 and tr.stats["undecodable"] == 1


def test_groups_regex_keeps_only_matching_groups() -> None:
    got, _ = run(Translator("__consumer_offsets", re.compile("^(orders|clicks)$"), COUNTS.get))
    want = hist.expected_events(TOPICS)
    assert got == {g: want[g] for g in ("orders", "clicks")}


def test_metadata_changes_reach_the_groups_holding_the_topic() -> None:
    tr = Translator("__consumer_offsets", partition_count=COUNTS.get)
    run(tr)
    # orders and clicks were deleted; payments and legacy remain
    assert tr.metadata({"payments": 6, "legacy": 2, "other": 9}, 9000) == [
        {"group": "payments", "type": "partitions", "partitions": {"payments": 6}, "ts": 9000}]
    assert tr.metadata({"payments": 6, "legacy": None}, 9100) == [
        {"group": "legacy", "type": "delete_topic", "topic": "legacy", "ts": 9100}]
    assert tr.metadata({"legacy": None}, 9200) == []
