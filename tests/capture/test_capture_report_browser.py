"""A captured history through the state machine into the what-if report: every group shows an `observed` row
beside the strategies, and the page lays out in headless Chromium."""

from __future__ import annotations

import json
import re

import offsets_history as hist
import pytest

from streaming.capture.coordinator_events import Translator, Undecodable
from streaming.core.config import Limits, PipelineConfig
from streaming.core.local import read_jsonl, replay
from tests.whatif.test_report_browser import probe
from whatif.report import write_report

pytestmark = pytest.mark.browser

TOPICS = {"orders": "orders", "payments": "payments", "legacy": "legacy", "clicks": "clicks"}


def test_report_of_a_captured_log_shows_observed_beside_the_strategies(tmp_path) -> None:
    tr = Translator("__consumer_offsets", partition_count={"orders": 3, "payments": 4, "legacy": 2}.get)
    log = tmp_path / "captured.jsonl"
    with open(log, "w") as f:
        for offset, (key, value) in enumerate(hist.history(TOPICS)):
            out = tr.record(key, value, 0, offset, 1_732_200_000_000 + offset * 1000)
            for ev in [] if isinstance(out, Undecodable) else out:
                f.write(json.dumps(ev) + "\n")
    config = PipelineConfig(("sticky", "cooperative-sticky", "range"), Limits())
    diffs = [json.loads(o.value) for o in replay(read_jsonl(log), config, lambda: 1) if o.kind == "diff"]
    report = tmp_path / "report.html"
    write_report(diffs, report)
    page = report.read_text(encoding="utf-8")
    for group in TOPICS:
        table = re.search(rf'<table class="summary" data-group="{group}">.*?</table>', page, re.S)
        assert table, group
        rows = re.findall(r'<tr [^>]*data-strategy="([^"]+)"', table.group(0))
        assert sorted(rows) == ["cooperative-sticky", "observed", "range", "sticky"], (group, rows)
    laid_out = probe(report, tmp_path)
    assert laid_out["plotly"] != "undefined"
    assert len(laid_out["figures"]) == 4 and all(f["width"] > 0 and f["height"] > 0 for f in laid_out["figures"])
