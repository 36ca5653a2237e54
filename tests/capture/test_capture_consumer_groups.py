"""Consumer-protocol (KIP-848) groups in `rebalance capture --source describe`: ConsumerGroupDescribe answers,
built as bytes from Kafka's schema (group_api_encoder) and decoded by the capture, become one `generation`
event per target-assignment epoch; those events go through `rebalance conformance` like any other."""

from __future__ import annotations

import json

import group_api_encoder as enc

from streaming.capture.coordinator_events import Translator
from streaming.capture.group_messages import parse_consumer_group_describe
from streaming.capture.wire import kafka_topic_id

COUNTS = {"orders": 3, "orders-eu": 2, "orders-us": 2, "payments": 4}


def described(*groups, version: int = 1):
    """The capture's view of one ConsumerGroupDescribe answer carrying `groups`."""
    return parse_consumer_group_describe(version, enc.describe_response(version, list(groups)))


def translator(**kwargs) -> Translator:
    return Translator("", None, COUNTS.get, cluster_topics=lambda: sorted(COUNTS), **kwargs)


def poll(tr: Translator, ts: int, *groups) -> list[dict]:
    return [e for g in described(*groups) for e in tr.consumer_group(g, ts)]


def test_each_target_assignment_epoch_seen_is_one_generation_event() -> None:
    tr = translator()
    first = poll(tr, 1000, enc.group("app", 4, [
        enc.member("m-1", ["orders"], {"orders": [0, 1, 2]}, {"orders": [0, 1]}, epoch=3)]))
    assert first == [
        {"group": "app", "type": "partitions", "partitions": {"orders": 3}, "ts": 1000},
        {"group": "app", "type": "generation", "generation": 4, "protocol_type": "consumer", "protocol": "uniform",
         "leader": None, "ts": 1000, "members": {
             # no earlier epoch seen: owned is what the member holds now, from its member epoch
             "m-1": {"topics": ["orders"], "rack": None, "instance_id": None, "owned": {"orders": [0, 1]},
                     "owned_generation": 3, "assigned": {"orders": [0, 1, 2]}, "client_id": "client-m-1",
                     "client_host": "/10.0.0.1"}}}]
    # the same epoch again, members converging to it: nothing new
    assert poll(tr, 2000, enc.group("app", 4, [
        enc.member("m-1", ["orders"], {"orders": [0, 1, 2]}, {"orders": [0, 1, 2]}, epoch=4)])) == []
    (gen,) = poll(tr, 3000, enc.group("app", 5, [
        enc.member("m-1", ["orders"], {"orders": [0, 1]}, {"orders": [0, 1]}, epoch=5),
        enc.member("m-2", ["orders"], {"orders": [2]}, {}, epoch=5, rack="az-2", instance_id="host-2")]))
    # epoch 4 was seen: owned is each member's target at epoch 4 (the assignor's input); m-2 had none
    assert gen["generation"] == 5 and gen["ts"] == 3000
    assert gen["members"]["m-1"]["owned"] == {"orders": [0, 1, 2]}
    assert gen["members"]["m-1"]["owned_generation"] == 4
    assert "owned" not in gen["members"]["m-2"]
    assert gen["members"]["m-2"]["assigned"] == {"orders": [2]}
    assert (gen["members"]["m-2"]["rack"], gen["members"]["m-2"]["instance_id"]) == ("az-2", "host-2")
    assert tr.stats["generation_events"] == 2


def test_a_gap_in_epochs_falls_back_to_current_assignments() -> None:
    tr = translator()
    poll(tr, 1000, enc.group("app", 4, [enc.member("m-1", ["orders"], {"orders": [0, 1, 2]}, epoch=4)]))
    (gen,) = poll(tr, 2000, enc.group("app", 7, [
        enc.member("m-1", ["orders"], {"orders": [0]}, {"orders": [0, 2]}, epoch=6)]))
    assert gen["generation"] == 7  # the replay reports skipped_generations 2
    assert (gen["members"]["m-1"]["owned"], gen["members"]["m-1"]["owned_generation"]) == ({"orders": [0, 2]}, 6)


def test_the_broker_s_assignor_names_become_the_library_s() -> None:
    tr = translator()
    events = poll(tr, 1000, enc.group("a", 1, [], assignor="range"), enc.group("b", 1, [], assignor="uniform"),
                  enc.group("c", 1, [], assignor="custom"))
    assert [(e["group"], e["protocol"], e["members"]) for e in events] == [
        ("a", "server-range", {}), ("b", "uniform", {}), ("c", "custom", {})]


def test_topics_are_named_by_the_answer_else_by_cluster_metadata() -> None:
    names = {kafka_topic_id(enc.topic_id("payments")): "payments"}
    tr = translator(topic_name=names.get)
    (_, gen) = poll(tr, 1000, enc.group("app", 2, [
        enc.member("m-1", ["payments"], {"payments": [0, 1]}, names=False),
        enc.member("m-2", ["lost"], {"lost": [0]}, names=False)]))
    assert gen["members"]["m-1"]["assigned"] == {"payments": [0, 1]}
    lost = kafka_topic_id(enc.topic_id("lost"))
    assert gen["members"]["m-2"]["assigned"] == {lost: [0]}  # nobody names it: the id, counted
    assert tr.stats["unresolved_topic_ids"] == 1


def test_a_regex_subscription_lists_the_cluster_topics_it_matches() -> None:
    tr = translator()
    events = poll(tr, 1000, enc.group("app", 1, [
        enc.member("m-1", ["payments"], {"orders-eu": [0]}, regex="orders-.*"),
        enc.member("m-2", [], {}, regex="(unclosed")]))
    members = events[-1]["members"]
    assert members["m-1"]["topics"] == ["payments", "orders-eu", "orders-us"]
    assert members["m-1"]["topic_regex"] == "orders-.*"
    assert members["m-2"]["topics"] == []
    assert tr.stats["unreadable_topic_regexes"] == 1


def test_a_group_that_disappears_is_deleted() -> None:
    tr = translator()
    poll(tr, 1000, enc.group("app", 1, [enc.member("m-1", ["orders"], {"orders": [0, 1, 2]})]))
    assert tr.gone("app", 2000) == [{"group": "app", "type": "delete_group", "ts": 2000}]


def test_captured_consumer_protocol_generations_go_through_conformance(tmp_path, capsys) -> None:
    """Kafka's uniform assignor keeps a member's previous target up to its quota in owned order: with
    orders 0-2 held by m-1 and m-2 joining, m-1 keeps 0 and 1 (uniform). The server range assignor sorts
    member ids: m-a gets 0 and 1, m-b 2. A target that moved another partition is named as the difference."""
    tr = translator()
    events = []
    events += poll(tr, 1000, enc.group("uni", 1, [enc.member("m-1", ["orders"], {"orders": [0, 1, 2]})]),
                   enc.group("rng", 3, [enc.member("m-b", ["orders"], {"orders": [2]}),
                                        enc.member("m-a", ["orders"], {"orders": [0, 1]})], assignor="range"),
                   enc.group("odd", 1, [enc.member("m-1", ["orders"], {"orders": [0, 1, 2]})]))
    events += poll(tr, 2000, enc.group("uni", 2, [enc.member("m-1", ["orders"], {"orders": [0, 1]}),
                                                  enc.member("m-2", ["orders"], {"orders": [2]})]),
                   enc.group("odd", 2, [enc.member("m-1", ["orders"], {"orders": [1, 2]}),
                                        enc.member("m-2", ["orders"], {"orders": [0]})]))
    log = tmp_path / "captured.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    from streaming.cli.main import main

    assert main(["conformance", str(log), "--json"]) == 1  # "odd" differs
    records = {(r["group"], r["generation"]): r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert {k: (r["protocol"], r["conforms"]) for k, r in records.items()} == {
        ("uni", 1): ("uniform", True), ("rng", 3): ("server-range", True), ("odd", 1): ("uniform", True),
        ("uni", 2): ("uniform", True), ("odd", 2): ("uniform", False)}
    assert records[("uni", 2)]["observed_moves"] == 1 and records[("uni", 2)]["expected_moves"] == 1
    assert records[("odd", 2)]["differences"] == {
        "m-1": {"observed_only": {"orders": [2]}, "expected_only": {"orders": [0]}},
        "m-2": {"observed_only": {"orders": [0]}, "expected_only": {"orders": [2]}}}
