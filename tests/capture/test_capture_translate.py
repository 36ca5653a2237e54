"""The pure half of `rebalance capture`: offsets-topic records -> events, on the multi-group history."""

from __future__ import annotations

import re

import offsets_history as hist

from streaming.capture.coordinator_events import Translator, Undecodable

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


def test_a_captured_log_replays_and_observed_changes_reproduce_the_recorded_assignments(tmp_path) -> None:
    """Capture -> JSONL -> the state machine's plain loop: no dead letters, observed rows for every
    generation that carries assignments, and replaying their `changes` gives each recorded `assigned`."""
    import json

    from streaming.core.config import Limits, PipelineConfig
    from streaming.core.local import read_jsonl, replay

    tr = Translator("__consumer_offsets", partition_count=COUNTS.get)
    log = tmp_path / "captured.jsonl"
    with open(log, "w") as f:
        for offset, (key, value) in enumerate(hist.history(TOPICS)):
            out = tr.record(key, value, 0, offset, 777)
            for ev in [] if isinstance(out, Undecodable) else out:
                f.write(json.dumps(ev) + "\n")
    config = PipelineConfig(("sticky", "cooperative-sticky", "range"), Limits())
    outputs = [json.loads(o.value) | {"kind": o.kind} for o in replay(read_jsonl(log), config, lambda: 1)]
    assert [o for o in outputs if o["kind"] == "dead-letter"] == []
    conformance = [o for o in outputs if o["kind"] == "conformance"]
    assert conformance and all(c["conforms"] is not False for c in conformance)  # what Kafka's assignors made
    held: dict[tuple[str, str], set] = {}
    recorded = [json.loads(line) for line in log.read_text().splitlines()]
    checked = 0
    for o in (o for o in outputs if o["kind"] == "diff" and o["strategy"] == "observed"):
        for member, sides in o["changes"].items():
            mine = held.setdefault((o["group"], member), set())
            mine.difference_update((t, p) for t, ps in sides["revoked"].items() for p in ps)
            mine.update((t, p) for t, ps in sides["assigned"].items() for p in ps)
        (ev,) = [e for e in recorded if e["type"] == "generation" and e["group"] == o["group"]
                 and e["generation"] == o["generation"]]
        for member, fields in ev["members"].items():
            want = {(t, p) for t, ps in fields.get("assigned", {}).items() for p in ps}
            assert held.get((o["group"], member), set()) == want
            checked += 1
    assert checked >= 10
    gaps = [o for o in outputs if o.get("strategy") == "observed" and o.get("skipped_generations")]
    assert [(o["group"], o["generation"], o["skipped_generations"]) for o in gaps] == [("orders", 5, 2)]
    assert {(o["group"], o["strategy"]) for o in outputs if o["kind"] == "diff"} >= {
        (g, s) for g in ("orders", "payments", "legacy", "clicks") for s in ("observed", "sticky", "range")}


def test_topic_ids_without_partition_metadata_resolve_through_cluster_metadata() -> None:
    """Kafka 4.1+ writes no PartitionMetadata record: ids are named by Metadata, counts too."""
    records = [(k, v) for k, v in hist.history(TOPICS) if k is None or k[:2] != b"\x00\x04"]
    tr = Translator("__consumer_offsets", partition_count={"clicks": 4}.get,
                    topic_name={hist.CLICKS_ID_TEXT: "clicks"}.get)
    events = []
    for offset, (key, value) in enumerate(records):
        out = tr.record(key, value, 0, offset, 777)
        events += [] if isinstance(out, Undecodable) else [e for e in out if e["group"] == "clicks"]
    for e in events:
        e.pop("source")
    assert events == hist.expected_events(TOPICS)["clicks"] and tr.stats["unresolved_topic_ids"] == 0


def test_describe_snapshots_number_generations_and_see_static_replacements() -> None:
    import coordinator_encoder as enc

    from streaming.capture.coordinator_records import MemberMetadata

    def member(mid: str, instance: str | None, parts: list[int]) -> MemberMetadata:
        return MemberMetadata(mid, instance, "app", "/h", -1, -1, enc.subscription(1, ["orders"]),
                              enc.assignment(0, [("orders", parts)]))

    tr = Translator("", partition_count=COUNTS.get)
    first = tr.described("g", "range", [member("a", "i-a", [0, 1]), member("b", "i-b", [2])], 10)
    assert [e["type"] for e in first] == ["partitions", "generation"] and first[1]["generation"] == 1
    assert "source" not in first[1]
    assert tr.described("g", "range", [member("a", "i-a", [0, 1]), member("b", "i-b", [2])], 20) == []
    # b restarted under a new member id with its instance id: no rebalance, a join that replaces it
    assert tr.described("g", "range", [member("a", "i-a", [0, 1]), member("b2", "i-b", [2])], 30) == [
        {"group": "g", "type": "join", "member": "b2", "topics": ["orders"], "rack": None, "instance_id": "i-b",
         "ts": 30}]
    moved = tr.described("g", "range", [member("a", "i-a", [0]), member("b2", "i-b", [1, 2])], 40)
    assert [(e["type"], e.get("generation")) for e in moved] == [("generation", 2)]
    assert tr.gone("g", 50) == [{"group": "g", "type": "delete_group", "ts": 50}] and tr.gone("g", 60) == []


def test_describe_snapshot_of_dynamic_members_that_left_is_a_generation() -> None:
    import coordinator_encoder as enc

    from streaming.capture.coordinator_records import MemberMetadata

    def member(mid: str, parts: list[int]) -> MemberMetadata:
        return MemberMetadata(mid, None, "app", "/h", -1, -1, enc.subscription(1, ["orders"]),
                              enc.assignment(0, [("orders", parts)]))

    tr = Translator("", partition_count=COUNTS.get)
    tr.described("g", "range", [member("a", [0]), member("b", [1]), member("c", [2])], 10)
    left = tr.described("g", "range", [member("b", [0, 1]), member("c", [2])], 20)
    assert [(e["type"], e["generation"], list(e["members"])) for e in left] == [("generation", 2, ["b", "c"])]


def test_fuzzed_histories_never_break_the_translator() -> None:
    """Bit flips, truncations, dropped and repeated records: every record gives events or `Undecodable`."""
    import random

    rng = random.Random(10)
    base = hist.history(TOPICS)
    for _ in range(150):
        tr = Translator("__consumer_offsets", partition_count=COUNTS.get)
        records = [r for r in base if rng.random() > 0.1]
        records += rng.sample(base, 5)
        if rng.random() < 0.3:
            rng.shuffle(records)
        for offset, (key, value) in enumerate(records):
            if value is not None and rng.random() < 0.2:
                mutated = bytearray(value)
                if rng.random() < 0.5:
                    del mutated[rng.randrange(len(mutated)):]
                else:
                    mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
                value = bytes(mutated)
            out = tr.record(key, value, 0, offset, 777)
            assert isinstance(out, (list, Undecodable))
        tr.metadata({"orders": 5, "payments": None}, 1)


def test_events_above_the_pipeline_limit_are_written_and_reported() -> None:
    import io

    from streaming.capture.capture import _write

    out, err = io.StringIO(), io.StringIO()
    big = {"group": "g", "type": "generation", "generation": 1, "members": {"m": {"topics": ["t" * 1_100_000]}}}
    _write(out, [{"group": "g", "type": "delete_group"}, big], err)
    assert len(out.getvalue().splitlines()) == 2
    assert "generation event of group 'g' is" in err.getvalue() and "delete_group" not in err.getvalue()


def test_kip848_protocol_is_the_assignor_most_members_prefer_ties_in_java_hashmap_order() -> None:
    import coordinator_encoder as enc

    def epoch(preferences: list[str | None]) -> str:
        tr = Translator("__consumer_offsets")
        records = [(enc.key(5, "g", f"m{i}"), enc.value(
            5, 0, instance_id=None, rack_id=None, client_id="c", client_host="/h", subscribed_topic_names=["t"],
            subscribed_topic_regex=None, rebalance_timeout_ms=1, server_assignor=p)) for i, p in enumerate(preferences)]
        records.append((enc.key(6, "g"), enc.value(6, 0, assignment_epoch=1)))
        events = [e for i, (k, v) in enumerate(records) for e in tr.record(k, v, 0, i, 0)]
        return events[-1]["protocol"]

    assert epoch([None, None]) == "uniform"  # nobody prefers one: the broker's default
    assert epoch(["range", "range", "uniform"]) == "server-range"
    assert epoch(["range", "uniform"]) == epoch(["uniform", "range"]) == "uniform"  # HashMap order: uniform first
    assert epoch(["range", None]) == "server-range"
