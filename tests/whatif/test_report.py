"""The report's numbers: min_moves on every rebalance, and the summary table against the raw diff records."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections import defaultdict
from html.parser import HTMLParser

import pytest

from assignors import STRATEGIES
from streaming.cli.main import main as cli
from whatif.histories import HISTORIES
from whatif.report import (
    STRATEGY_INFO,
    build,
    reason_pattern,
    strategy_lines,
    summarize,
    summary_text,
    write_report,
)


def rounds_of(records: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """Independent of whatif.report: one record per round (parts and static replacements left out); the
    records are in output order (generation order per group and strategy)."""
    out: dict[tuple[str, str], dict[int, dict]] = defaultdict(dict)
    for r in records:
        if r["phase"] != "replace" and r.get("part", 1) == 1:
            out[(r["group"], r["strategy"])][r["generation"]] = r
    return {k: [v[g] for g in sorted(v)] for k, v in out.items()}


def expected_row(rounds: list[dict]) -> dict[str, int]:
    starts = [i for i, r in enumerate(rounds) if r["phase"] != "followup"]
    ends = [s - 1 for s in starts[1:]] + [len(rounds) - 1]  # last round of each rebalance
    per_rebalance_paused = [sum(r["paused"] for r in rounds[a:b + 1]) for a, b in zip(starts, ends, strict=True)]
    imbalance = [rounds[e]["load_max"] - rounds[e]["load_min"] for e in ends]
    moves = sum(r["moves"] for r in rounds)
    min_moves = None if any(r.get("min_moves") is None for r in rounds) else sum(r["min_moves"] for r in rounds)
    return {
        "rebalances": len(starts), "rounds": len(rounds), "moves": moves, "min_moves": min_moves,
        "gap": None if min_moves is None else moves - min_moves, "paused": sum(r["paused"] for r in rounds),
        "max_paused": max(per_rebalance_paused),
        "max_imbalance": max(imbalance), "final_imbalance": imbalance[-1],
        "final_unassigned": rounds[-1]["unassigned"], "kafka_errors": sum("error" in r for r in rounds),
    }


class SummaryTables(HTMLParser):
    """{group: {strategy: {column: text}}} from the report's `table.summary` elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, dict[str, str]]] = {}
        self.group = self.strategy = self.col = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "summary" in (a.get("class") or ""):
            self.group = a["data-group"]
            self.tables[self.group] = {}
        elif tag == "tr" and self.group is not None and "data-strategy" in a:
            self.strategy = a["data-strategy"]
            self.tables[self.group][self.strategy] = {}
        elif tag == "td" and self.strategy is not None:
            self.col = a.get("data-col")

    def handle_data(self, data):
        if self.col is not None:
            row = self.tables[self.group][self.strategy]
            row[self.col] = row.get(self.col, "") + data

    def handle_endtag(self, tag):
        if tag == "td":
            self.col = None
        elif tag == "table":
            self.group = self.strategy = None


class Tables(HTMLParser):
    """Every `<table>` of the page: {(class, data-group): [(row attributes, [(cell attributes, text)])]}."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[tuple[str, str | None], list[tuple[dict, list[tuple[dict, str]]]]] = {}
        self.current: list | None = None
        self.cell: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.current = self.tables.setdefault((a.get("class") or "", a.get("data-group")), [])
        elif tag == "tr" and self.current is not None:
            self.current.append((a, []))
        elif tag in ("td", "th") and self.current is not None and self.current:
            self.cell = [a, ""]
            self.current[-1][1].append(self.cell)

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.cell = None
        elif tag == "table":
            self.current = None


def page_tables(path) -> dict:
    parser = Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tables


def final_loads(records: list[dict]) -> dict[tuple[str, str], dict[str, int]]:
    """Independent of whatif.report: each strategy's `changes` replayed in output order -> load per member."""
    held: dict[tuple[str, str], dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for r in records:
        for member, change in r["changes"].items():
            mine = held[(r["group"], r["strategy"])][member]
            for topic, parts in change["revoked"].items():
                mine.difference_update((topic, p) for p in parts)
            for topic, parts in change["assigned"].items():
                mine.update((topic, p) for p in parts)
    return {key: {m: len(tps) for m, tps in members.items() if tps} for key, members in held.items()}


@pytest.mark.parametrize("name", list(HISTORIES))
def test_new_lanes_equal_numbers_recomputed_from_records(name, history_diffs, history_records,
                                                        history_dead_letters, tmp_path):
    """Header, dead letters, static restarts and final assignments, from the raw records of a replay."""
    out = tmp_path / "report.html"
    assert cli(["report", str(history_diffs(name)), "--out", str(out)]) == 0
    tables = page_tables(out)
    records, dead = history_records(name), history_dead_letters(name)
    html = out.read_text(encoding="utf-8")

    # dead letters: one row per reason pattern, counts and the first example
    rows = tables.get(("dead-letters", None), [])[1:]
    by_reason: dict[str, list[dict]] = defaultdict(list)
    for d in dead:
        by_reason[reason_pattern(d["reason"])].append(d)
    assert {cells[0][1]: int(cells[1][1]) for _, cells in rows} == {k: len(v) for k, v in by_reason.items()}
    for _, cells in rows:
        first = by_reason[cells[0][1]][0]
        assert cells[3][1] == ", ".join(f"{k} {v}" for k, v in first["source"].items())
    if not dead:
        assert "No dead letters" in html

    # static restarts: one row per replacement (all strategies carry the same one), old and new ids
    (group,) = {r["group"] for r in records}
    replaced = {(r["cause"]["replaced"], r["cause"]["member"]) for r in records if r["phase"] == "replace"}
    static = tables.get(("static", group), [])[1:]
    assert {(cells[1][1], cells[2][1]) for _, cells in static} == replaced
    assert len(static) == len(replaced)

    # final assignment: every strategy's load per member, from `changes` replayed
    loads = final_loads(records)
    final = tables[("final", group)]
    strategies = [text.strip() for _, text in final[0][1][1:]]
    shown = {(group, s): {} for s in strategies}
    for attrs, cells in final[1:-1]:
        for (cell_attrs, text) in cells[1:]:
            if int(text):
                shown[(group, cell_attrs["data-strategy"])][attrs["data-member"]] = int(text)
    assert shown == {key: load for key, load in loads.items() if key[0] == group}
    last = {(r["group"], r["strategy"]): r for r in records}  # each strategy's last record: its load range
    for key, load in loads.items():
        members = last[key]["members"]
        assert max(load.values()) == last[key]["load_max"]
        assert (min(load.values()) if len(load) == members else 0) == last[key]["load_min"]

    # the strategies: each one named with what it is and the setting that enables it
    strategy_rows = {attrs["data-strategy"]: [c[1] for c in cells] for attrs, cells in tables[("strategies", None)][1:]}
    assert set(strategy_rows) == {r["strategy"] for r in records}
    for s, cells in strategy_rows.items():
        assert cells[1] == STRATEGY_INFO[s].kind and cells[3] == STRATEGY_INFO[s].enable
    assert "group.protocol=consumer" in strategy_rows["uniform"][3]


def test_header_counts_events_and_dead_letters(history_diffs, tmp_path):
    """Through `replay`'s own path: the events it read and the share that was dead-lettered."""
    from streaming.cli.report import report_from_replay

    out = tmp_path / "report.html"
    report_from_replay(history_diffs("flapping-member"), out, events=35)
    inputs = out.read_text(encoding="utf-8").split('<dl class="inputs">')[1].split("</dl>")[0]
    assert "<dt>events read</dt><dd>35</dd>" in inputs
    assert "2 (5.7% of the events)" in inputs


def test_cjk_names_are_escaped_and_fonts_for_them_declared(tmp_path):
    rows = [record("range", 1, "eager", 2, 6) | {"group": "订单-服务", "changes": {"消费者-1": {"assigned": {"t": [0]},
                                                                                          "revoked": {}}}}]
    from whatif.report import write_report

    write_report(rows, tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "订单-服务" in page and "消费者-1" in page and "<meta charset='utf-8'>" in page
    assert "Noto Sans CJK SC" in page and "Microsoft YaHei" in page


def test_strategy_lines_one_line_per_strategy():
    rows = summarize([record("range", 1, "eager", 2, 6, min_moves=1), record("sticky", 1, "eager", 1, 6)])
    lines = strategy_lines(rows).splitlines()
    assert lines[0] == "g (1 rebalances)"
    assert lines[1].split() == ["sticky", "moved", "1", "paused", "6", "gap", "to", "fewest", "moves", "1",
                                "worst", "imbalance", "0"]
    assert lines[2].split()[:5] == ["range", "moved", "2", "paused", "6"]


@pytest.mark.parametrize("name", list(HISTORIES))
def test_min_moves_on_every_rebalance(name, history_records):
    records = history_records(name)
    rounds = [r for r in records if r["phase"] != "replace"]
    assert rounds
    for r in rounds:
        assert 0 <= r["min_moves"] <= r["moves"], r


@pytest.mark.parametrize("name", list(HISTORIES))
def test_summary_table_equals_numbers_recomputed_from_records(name, history_diffs, history_records, tmp_path):
    out = tmp_path / "report.html"
    assert cli(["report", str(history_diffs(name) / "diffs"), "--out", str(out)]) == 0
    parser = SummaryTables()
    parser.feed(out.read_text(encoding="utf-8"))
    expected = {key: expected_row(rounds) for key, rounds in rounds_of(history_records(name)).items()}
    shown = {(g, s): row for g, rows in parser.tables.items() for s, row in rows.items()}
    assert set(shown) == set(expected)
    for key, row in expected.items():
        assert {col: int(shown[key][col]) for col in row} == row, key
    for rows in parser.tables.values():  # ranked: fewest paused first, then fewest moved, then max imbalance
        ranked = sorted(rows.values(), key=lambda r: int(r["rank"]))
        assert [int(r["rank"]) for r in ranked] == list(range(1, len(ranked) + 1))
        keys = [(int(r["paused"]), int(r["moves"]), int(r["max_imbalance"])) for r in ranked]
        assert keys == sorted(keys)


def record(strategy, generation, phase, moves, paused, load=(3, 3), min_moves=0, **extra):
    return {"group": "g", "strategy": strategy, "generation": generation, "phase": phase,
            "cause": {"type": "join", "member": "m"}, "changes": {}, "members": 2, "partitions": 6,
            "assigned": 0, "revoked": 0, "unassigned": 0, "paused": paused, "load_min": load[0],
            "load_max": load[1], "moves": moves, "min_moves": min_moves, "event_ts": 1_000 * generation, **extra}


def test_summarize_counts_split_parts_once_and_groups_followups():
    records = [
        record("cooperative-sticky", 1, "revoke", 4, 4, (0, 6), min_moves=3, part=1, parts=2),
        record("cooperative-sticky", 1, "revoke", 4, 4, (0, 6), min_moves=3, part=2, parts=2),
        record("cooperative-sticky", 2, "followup", 0, 0, (3, 3)),
        record("cooperative-sticky", 2, "replace", 0, 0, (3, 3)),
        record("sticky", 1, "eager", 3, 6, (2, 4), min_moves=3),
    ]
    coop, sticky = summarize(records)  # ranked: cooperative paused fewer
    assert (coop.strategy, coop.rank, sticky.rank) == ("cooperative-sticky", 1, 2)
    assert (coop.rebalances, coop.rounds, coop.moves, coop.min_moves, coop.gap) == (1, 2, 4, 3, 1)
    assert (coop.paused, coop.max_imbalance, coop.final_imbalance) == (4, 0, 0)
    assert (sticky.rebalances, sticky.rounds, sticky.paused, sticky.final_imbalance, sticky.gap) == (1, 1, 6, 2, 0)


def test_summarize_does_not_depend_on_record_order(history_records):
    """Diff records may be read from several files or partitions: rounds are ordered by generation."""
    records = history_records("rolling-deploy")
    shuffled = records[:]
    random.Random(3).shuffle(shuffled)
    assert summarize(shuffled) == summarize(records)


def test_summarize_without_min_moves_shows_no_gap():
    (row,) = summarize([record("range", 1, "eager", 2, 6, min_moves=None)])
    assert row.min_moves is None and row.gap is None


@pytest.mark.parametrize(
    ("argv", "setup"),
    [
        (["report", "--out", "x.html"], None),  # neither a directory nor a broker
        (["report", "DIR", "--bootstrap", "localhost:1", "--out", "x.html"], "ok"),  # both
        (["report", "DIR/missing", "--out", "x.html"], None),
        (["report", "DIR", "--out", "x.html"], "empty"),
        (["report", "DIR", "--out", "x.html"], "bad-json"),
        (["report", "DIR", "--out", "x.html"], "not-a-diff"),
    ],
)
def test_bad_usage_and_bad_input_exit_2(argv, setup, tmp_path, capsys):
    if setup == "ok":
        (tmp_path / "d.jsonl").write_text(json.dumps(record("range", 1, "eager", 0, 0)) + "\n")
    elif setup == "bad-json":
        (tmp_path / "d.jsonl").write_text("{not json\n")
    elif setup == "not-a-diff":
        (tmp_path / "d.jsonl").write_text('{"group": "g"}\n')
    argv = [a.replace("DIR", str(tmp_path)).replace("x.html", str(tmp_path / "x.html")) for a in argv]
    assert cli(argv) == 2
    assert "rebalance report:" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_reads_the_diffs_subdirectory_of_a_replay_output(tmp_path):
    (tmp_path / "diffs").mkdir()
    (tmp_path / "diffs" / "batch-0.jsonl").write_text(json.dumps(record("range", 1, "eager", 0, 0)) + "\n")
    assert cli(["report", str(tmp_path), "--out", str(tmp_path / "r.html")]) == 0
    assert 'data-group="g"' in (tmp_path / "r.html").read_text()


@pytest.mark.kafka
def test_report_from_a_diffs_topic_reads_committed_records_only(kafka_bootstrap, unique_topic, history_records,
                                                                   tmp_path):
    from kafka import KafkaProducer

    topic = unique_topic("diffs", partitions=2)
    records = history_records("topic-growth")
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"report-test-{topic}")
    producer.init_transactions()
    producer.begin_transaction()
    for r in records:
        producer.send(topic, key=r["group"].encode(), value=json.dumps(r).encode())
    producer.commit_transaction()
    producer.begin_transaction()  # an aborted batch of another group must not show up
    producer.send(topic, key=b"ghost", value=json.dumps({**records[0], "group": "ghost"}).encode())
    producer.flush()
    producer.abort_transaction()
    producer.close()

    out = tmp_path / "report.html"
    assert cli(["report", "--bootstrap", kafka_bootstrap, "--diffs-topic", topic, "--out", str(out)]) == 0
    parser = SummaryTables()
    parser.feed(out.read_text(encoding="utf-8"))
    assert set(parser.tables) == {"inventory-sync"}
    expected = {key: expected_row(rounds) for key, rounds in rounds_of(records).items()}
    shown = {(g, s): row for g, rows in parser.tables.items() for s, row in rows.items()}
    assert {key: {col: int(shown[key][col]) for col in row} for key, row in expected.items()} == expected


@pytest.mark.kafka
def test_missing_diffs_topic_is_a_usage_error(kafka_bootstrap, tmp_path, capsys):
    out = tmp_path / "report.html"
    argv = ["report", "--bootstrap", kafka_bootstrap, "--diffs-topic", "no-such-topic-4f2a", "--out", str(out)]
    assert cli(argv) == 2
    assert "no-such-topic-4f2a" in capsys.readouterr().err


def test_summary_text_lists_every_strategy_with_its_numbers():
    rows = summarize([record("range", 1, "eager", 2, 6, min_moves=1), record("sticky", 1, "eager", 1, 6)])
    lines = summary_text(rows).splitlines()
    assert lines[0] == "group g" and "fewest moves for its loads" in lines[1]
    assert lines[2].split()[:6] == ["1", "sticky", "1", "1", "1", "0"]
    assert lines[3].split()[:7] == ["2", "range", "1", "1", "2", "1", "1"]


def test_kafka_assignor_errors_are_counted_and_named():
    base = {"group": "g", "strategy": "sticky", "phase": "eager", "changes": {}, "moves": 0, "min_moves": 0,
            "assigned": 0, "revoked": 0, "paused": 0, "load_min": 1, "load_max": 1, "unassigned": 0, "members": 1,
            "partitions": 1, "event_ts": None}
    records = [
        {**base, "generation": 1, "cause": {"type": "join", "member": "a"}},
        {**base, "generation": 2, "cause": {"type": "join", "member": "b"},
         "error": {"exception": "java.lang.NullPointerException", "message": None, "detail": "..."}},
    ]
    (row,) = summarize(records)
    assert row.kafka_errors == 1 and row.rounds == 2
    assert row.history[-1].cause == "join b (Kafka throws NullPointerException)"


def swatches(page: str) -> dict[str, tuple[int, int, int]]:
    """Strategy -> the RGB of its swatch in the page's table of strategies."""
    table = page.split('<table class="strategies">')[1].split("</table>")[0]
    found = re.findall(r'<tr data-strategy="([^"]+)"><td class="strategy"><span class="swatch" '
                       r'style="background:#([0-9a-f]{6})">', table)
    return {s: tuple(int(c[i:i + 2], 16) for i in (0, 2, 4)) for s, c in found}


def test_every_strategy_and_observed_have_a_colour_of_their_own(tmp_path):
    """Every registered strategy, `observed` and three strategies the registry does not know yet (as a new one
    is before its colour is settled) on one page: no two swatches alike — at least 48 apart in RGB (of 441) —
    and a registered strategy keeps its colour on a page of its own."""
    names = [*STRATEGIES, "observed", *[n for n in ("rate-balanced", "custom-1", "custom-2") if n not in STRATEGIES]]
    assert len(names) >= len(STRATEGIES) + 3
    write_report([record(s, 1, "eager", 0, 0) for s in names], tmp_path / "all.html")
    colours = swatches((tmp_path / "all.html").read_text(encoding="utf-8"))
    assert set(colours) == set(names)
    for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2):
        assert math.dist(ca, cb) >= 48, (a, b, ca, cb)
    for s in ("sticky", "observed"):
        write_report([record(s, 1, "eager", 0, 0)], tmp_path / f"{s}.html")
        assert swatches((tmp_path / f"{s}.html").read_text(encoding="utf-8")) == {s: colours[s]}


def lines_in(directory) -> int:
    return sum(1 for f in directory.glob("*.jsonl") for _ in f.open())


def test_report_of_out_diffs_reads_the_conformance_and_dead_letters_beside_it(burst_capture, history_diffs, tmp_path,
                                                                                capsys):
    """`report OUT/diffs` and `report OUT/` write the same page: OUT's conformance records and dead letters in it,
    and say so."""
    for out, lane in ((burst_capture, 'data-counts="'), (history_diffs("flapping-member"), 'class="reason"')):
        said = (f"rebalance report: {lines_in(out / 'diffs')} diff records, {lines_in(out / 'dead-letter')} dead "
                f"letters, {lines_in(out / 'conformance')} conformance records -> ")
        pages = []
        for given in (out, out / "diffs"):
            page = tmp_path / "page.html"
            assert cli(["report", str(given), "--out", str(page)]) == 0
            pages.append(page.read_text(encoding="utf-8"))
            assert capsys.readouterr().err == f"{said}{page}\n"
        assert pages[0] == pages[1]
        assert lane in pages[1]


def test_rebalances_are_numbered_by_the_group_events_in_log_order(burst_capture, tmp_path):
    """One event, one number in every row: `observed`, which answers only the recorded generations, has the
    numbers of those generations' lines among all the lines that made any strategy rebalance — in a log that
    joins two members by hand before the group's generations are recorded, and in the burst capture."""
    gen = {"group": "g", "type": "generation", "protocol": "range"}
    log = tmp_path / "joins-then-generations.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in [
        {"group": "g", "type": "partitions", "partitions": {"orders": 4}},
        {"group": "g", "type": "join", "member": "a", "topics": ["orders"]},
        {"group": "g", "type": "join", "member": "b", "topics": ["orders"]},
        gen | {"generation": 1, "members": {"a": {"topics": ["orders"], "assigned": {"orders": [0, 1]}},
                                            "b": {"topics": ["orders"], "assigned": {"orders": [2, 3]}}}},
        gen | {"generation": 2, "members": {"a": {"topics": ["orders"], "assigned": {"orders": [0, 1, 2, 3]}}}},
    ]))
    assert cli(["replay", str(log), "--out", str(tmp_path / "out"), "--strategies", "range,cooperative-sticky",
                "--engine", "local"]) == 0
    numbers = {}
    for out in (tmp_path / "out", burst_capture):
        records = [json.loads(line) for f in sorted((out / "diffs").glob("*.jsonl")) for line in f.open()]
        lines = sorted({r["cause"]["source"]["line"] for r in records})
        (group,) = build(records).groups
        for row in group.rows:
            mine = [r for r in records if r["strategy"] == row.strategy and r["phase"] != "followup"]
            numbers[(out, row.strategy)] = [b.number for b in row.history]
            assert numbers[(out, row.strategy)] == [lines.index(r["cause"]["source"]["line"]) + 1 for r in mine]
    assert numbers[(tmp_path / "out", "observed")] == [3, 4]  # after the two joins


def own_strategy(page: str) -> tuple[re.Match | None, list[str]]:
    """The page's own-strategy note and the strategies of the summary rows marked as the group's own."""
    note = re.search(r'<p class="note own-strategy" data-protocols="([^"]*)"(?: data-equals-observed="(\w+)")?>'
                     r"(.*?)</p>", page)
    marked = re.findall(r'<tr class="[^"]*\bown\b[^"]*" data-strategy="([^"]+)"', page)
    return note, marked


def captured(protocol, moves=(2, 1), paused=(3, 3), conforms=(True, True), strategies=("range", "sticky")):
    """Diff records of a captured group (two recorded generations, `observed` following `protocol`) and the
    replayed strategies, all alike but for `moves`/`paused` of the first strategy; one conformance record per
    `conforms`."""
    rows = []
    for n in (1, 2):
        cause = {"type": "generation", "generation": n, "source": {"file": "c.jsonl", "line": n}}
        rows.append(record("observed", n, "eager", (2, 1)[n - 1], 3, protocol=protocol, cause=cause))
        rows.extend(record(s, n, "eager", moves[n - 1] if i == 0 else (2, 1)[n - 1],
                           paused[n - 1] if i == 0 else 3, cause=cause) for i, s in enumerate(strategies))
    verdicts = [{"group": "g", "generation": n, "protocol": protocol, "conforms": c} for n, c in enumerate(conforms, 1)]
    return rows, verdicts


@pytest.mark.parametrize(
    ("protocol", "case", "equal", "says"),
    [
        ("range", {}, "true", ["All 2 recorded generations got exactly what Kafka's range computes",
                               "Its row, marked, equals <code>observed</code>: replaying range gives what the group"]),
        ("range", {"paused": (6, 3)}, "false", ["differs from <code>observed</code>: paused 9 against 6, "
                                                 "max paused 6 against 3."]),
        ("range", {"conforms": (True, False)}, "true", ["1 of 2 recorded generation(s) did not get Kafka's range"]),
        ("range", {"conforms": ()}, "true", ["No conformance records were read"]),
        ("roundrobin", {}, None, ["roundrobin is not among the strategies replayed here"]),
        ("in-house", {}, None, ["It is not one of this library's strategies, so no row replays it."]),
    ],
)
def test_a_captured_group_names_its_strategy_and_compares_its_row_with_observed(protocol, case, equal, says, tmp_path):
    records, verdicts = captured(protocol, **case)
    write_report(records, tmp_path / "r.html", conformance=verdicts)
    note, marked = own_strategy((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert note and note.group(1) == protocol and note.group(2) == equal
    assert f"This group ran <b>{protocol}</b>" in note.group(3)
    for text in says:
        assert text in note.group(3), note.group(3)
    assert marked == ([protocol] if equal else [])


def test_a_group_that_changed_protocol_marks_every_strategy_it_ran(tmp_path):
    records, _ = captured("range")
    records[-3]["protocol"] = "sticky"  # the second generation's observed record
    write_report(records, tmp_path / "r.html")
    note, marked = own_strategy((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert note and note.group(1) == "range,sticky" and "no one strategy replays its whole history" in note.group(3)
    assert sorted(marked) == ["range", "sticky"]


def test_diff_records_without_observed_have_no_own_strategy_note(history_diffs, tmp_path):
    assert cli(["report", str(history_diffs("topic-growth")), "--out", str(tmp_path / "r.html")]) == 0
    assert own_strategy((tmp_path / "r.html").read_text(encoding="utf-8")) == (None, [])
