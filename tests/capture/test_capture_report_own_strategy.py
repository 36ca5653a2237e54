"""Captured histories in the what-if report: each group's ranking names the strategy it ran (its recorded
protocol), marks that strategy's row and says whether it equals `observed` exactly as the records say — on the
multi-group offsets-topic history and on real `__consumer_offsets` records of a librdkafka group."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import offsets_history as hist
import pytest

from streaming.capture.coordinator_events import Translator, Undecodable
from streaming.capture.coordinator_records import decode_key, decode_value
from streaming.cli.main import main as cli
from tests.whatif.test_report import expected_row, rounds_of

FIXTURES = Path(__file__).parent / "fixtures" / "consumer-offsets" / "group_metadata"
STRATEGIES = "range,roundrobin,sticky,cooperative-sticky,server-range"


def translated(records: list[tuple[bytes, bytes]], counts: dict[str, int]) -> list[dict]:
    tr = Translator("__consumer_offsets", partition_count=counts.get)
    events = []
    for offset, (key, value) in enumerate(records):
        out = tr.record(key, value, 0, offset, 1_732_200_000_000 + offset * 1000)
        events.extend([] if isinstance(out, Undecodable) else out)
    return events


def real_records() -> tuple[list[tuple[bytes, bytes]], dict[str, int]]:
    """The real GroupMetadata records in the order the coordinator wrote them (their state timestamps), and
    each topic's partition count as its recorded assignments show it."""
    records = sorted(((k.read_bytes(), k.with_suffix(".payload").read_bytes()) for k in FIXTURES.glob("*.key")),
                     key=lambda kv: decode_value(decode_key(kv[0]), kv[1]).current_state_timestamp)
    counts: dict[str, int] = {}
    for ev in translated(records, {}):
        for member in ev.get("members", {}).values():
            for topic, parts in member.get("assigned", {}).items():
                counts[topic] = max(counts.get(topic, 0), max(parts, default=-1) + 1)
    return records, counts


def holdings(records: list[dict]) -> dict[tuple[str, str], dict[str, set]]:
    """(group, strategy) -> member -> (topic, partition) held after the strategy's last record."""
    held: dict[tuple[str, str], dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for r in records:
        for member, change in r["changes"].items():
            mine = held[(r["group"], r["strategy"])][member]
            mine.difference_update((t, p) for t, ps in change["revoked"].items() for p in ps)
            mine.update((t, p) for t, ps in change["assigned"].items() for p in ps)
    return {key: {m: tps for m, tps in members.items() if tps} for key, members in held.items()}


@pytest.mark.parametrize("source", ["offsets-history", "real-records"])
def test_the_ranking_names_the_groups_strategy_and_compares_it_with_observed(source: str, tmp_path: Path) -> None:
    if source == "real-records":
        events = translated(*real_records())
    else:
        events = translated(hist.history({t: t for t in ("orders", "payments", "legacy", "clicks")}),
                            {"orders": 3, "payments": 4, "legacy": 2})
    log, out, page = tmp_path / "captured.jsonl", tmp_path / "out", tmp_path / "report.html"
    log.write_text("".join(json.dumps(ev) + "\n" for ev in events))
    assert cli(["replay", str(log), "--out", str(out), "--strategies", STRATEGIES, "--engine", "local"]) == 0
    assert cli(["report", str(out / "diffs"), "--out", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    records = [json.loads(line) for f in sorted((out / "diffs").glob("*.jsonl")) for line in f.open()]
    rows = {key: expected_row(rounds) for key, rounds in rounds_of(records).items()}
    held = holdings(records)

    ran: dict[str, list[str]] = defaultdict(list)  # group -> its recorded protocols, in log order
    for ev in events:
        if ev["type"] == "generation" and ev["protocol"] and ev["protocol"] not in ran[ev["group"]]:
            ran[ev["group"]].append(ev["protocol"])
    assert ran and any(len(p) == 1 and p[0] in STRATEGIES.split(",") for p in ran.values())
    sections = {re.match(r"'g\d+' data-group='([^']*)'", s).group(1): s  # type: ignore[union-attr]
                for s in html.split("<section class='group' id=")[1:]}
    for group, protocols in ran.items():
        section = sections[group]
        note = re.search(r'<p class="note own-strategy" data-protocols="([^"]*)"(?: data-equals-observed="(\w+)")?>'
                         r"(.*?)</p>", section)
        assert note and note.group(1) == ",".join(protocols), (group, note)
        marked = re.findall(r'<tr class="[^"]*\bown\b[^"]*" data-strategy="([^"]+)"', section)
        assert marked == [p for p in protocols if (group, p) in rows], group
        if len(protocols) == 1 and (group, protocols[0]) in rows:
            same = (rows[(group, protocols[0])] == rows[(group, "observed")]
                    and held.get((group, protocols[0]), {}) == held.get((group, "observed"), {}))
            assert note.group(2) == str(same).lower(), (group, rows[(group, protocols[0])], rows[(group, "observed")])
            assert ("equals <code>observed</code>" in note.group(3)) is same
