"""The report renders in a real headless Chromium: chart elements with a size, and a screenshot with charts in it.

Chromium must be installed (Debian `chromium`; test.sh installs it): a missing browser fails these tests.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import struct
import subprocess
import zlib
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from streaming.cli.main import main as cli
from whatif.histories import HISTORIES, sample_path
from whatif.report import STRATEGY_COLOURS

pytestmark = pytest.mark.browser

# Writes what the browser laid out (figure sizes, traces, drawn lines and points) into the DOM.
PROBE = r"""<script>
window.addEventListener('load', () => setTimeout(() => {
  const figures = [...document.querySelectorAll('.js-plotly-plot')].map(div => {
    const svg = div.querySelector('.main-svg');
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    const lines = [...div.querySelectorAll('.scatterlayer path.js-line')]
      .filter(p => p.getBBox().width > 0 || p.getBBox().height > 0);
    return {id: div.id, width: box.width, height: box.height,
            traces: div.querySelectorAll('.scatterlayer .trace').length,
            lines: lines.length, points: div.querySelectorAll('.scatterlayer .point').length,
            bars: [...div.querySelectorAll('.barlayer .point path')].filter(p => p.getBBox().height > 0).length};
  });
  const tables = {};
  for (const t of document.querySelectorAll('table')) {
    const shown = [...t.querySelectorAll('tbody tr')].filter(r => r.getBoundingClientRect().height > 0).length;
    tables[t.className] = (tables[t.className] || 0) + shown;
  }
  const titles = [...document.querySelectorAll('.js-plotly-plot .infolayer text')]
    .filter(t => /^[xy]\d*title$/.test(t.getAttribute('class')) && t.textContent.trim()).length;
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({plotly: typeof Plotly, figures, tables, titles});
  document.body.appendChild(pre);
}, 300));
</script>"""


def chromium(*args: str, user_dir: Path) -> str:
    exe = shutil.which("chromium")
    assert exe, "headless Chromium is required for the report tests (Debian package `chromium`; test.sh installs it)"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", f"--user-data-dir={user_dir}", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True)
    return done.stdout


# Writes where the browser put each figure's x tick labels (per axis) and the events strip's marks.
AXIS_PROBE = r"""<script>
window.addEventListener('load', () => setTimeout(() => {
  const figures = [...document.querySelectorAll('.js-plotly-plot')].map(div => {
    const axes = [...div.querySelectorAll('g.xaxislayer-above')].map(layer =>
      [...layer.querySelectorAll('g[class$="tick"] > text')].map(t => {
        const b = t.getBoundingClientRect();
        return {left: b.left, right: b.right, text: [...t.childNodes].map(n => n.textContent).join('|')};
      }));
    const strip = div.querySelector('.scatterlayer .trace');
    const marks = [...strip.querySelectorAll('.point')].map(p => {
      const b = p.getBoundingClientRect();
      return b.left + b.width / 2;
    });
    const box = el => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
    return {axes, marks, legend: box(div.querySelector('g.legend')), modebar: box(div.querySelector('.modebar'))};
  });
  const own = [...document.querySelectorAll('table.summary tr.own span.own')].map(s => s.getBoundingClientRect().width);
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({figures, own});
  document.body.appendChild(pre);
}, 300));
</script>"""


def probe(report: Path, tmp_path: Path, script: str = PROBE) -> dict:
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    dom = chromium("--virtual-time-budget=10000", "--window-size=1400,4000", "--dump-dom", probed.as_uri(),
                   user_dir=tmp_path / "chrome-probe")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run: the page's scripts failed"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(report: Path, tmp_path: Path) -> np.ndarray:
    png = tmp_path / "report.png"
    chromium("--virtual-time-budget=10000", "--hide-scrollbars", f"--screenshot={png}", "--window-size=1400,4000",
             report.as_uri(), user_dir=tmp_path / "chrome-shot")
    return decode_png(png.read_bytes())


def decode_png(data: bytes) -> np.ndarray:
    """8-bit RGB/RGBA, non-interlaced PNG -> uint8[height, width, channels] (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
        elif kind == b"IDAT":
            idat.append(body)
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            cur = line.copy()
        elif kind == 1:  # Sub: a running sum per channel
            cur = (np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.int64) % 256).astype(np.uint8).ravel()
        elif kind == 2:  # Up
            cur = line + prev
        else:  # Average, Paeth: sequential along the row
            row, up = bytearray(line.tobytes()), prev.tobytes()
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0
                b = up[i]
                if kind == 3:
                    row[i] = (row[i] + ((a + b) >> 1)) & 255
                else:
                    c = up[i - bpp] if i >= bpp else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.frombuffer(bytes(row), dtype=np.uint8)
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]


def colour_pixels(image: np.ndarray, hex_colour: str) -> int:
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
    return int((np.abs(image.astype(np.int16) - rgb).sum(axis=2) <= 12).sum())


def assert_rendered(report: Path, tmp_path: Path, strategies: set[str]) -> None:
    html = report.read_text(encoding="utf-8")
    assert not re.search(r'<script[^>]+src="?https?:', html), "the page must not load scripts from the network"
    result = probe(report, tmp_path)
    assert result["plotly"] == "object"
    charts = [fig for fig in result["figures"] if fig["id"].startswith("fig-")]  # the load lane's: test_report_load
    assert charts, "no plotly figure in the page"
    for fig in charts:
        assert fig["width"] > 600 and fig["height"] > 600, fig
        assert fig["traces"] >= len(strategies) and fig["points"] > 0, fig
        assert fig["lines"] >= 3 * len(strategies), fig  # every strategy drawn in every panel (3 in the compact layout)
    assert result["titles"] >= 7 * len(charts), result["titles"]  # x titles on every row, y on every panel
    image = screenshot(report, tmp_path)
    assert image.std() > 10, "the screenshot is blank"
    assert (image.min(axis=2) < 128).mean() > 0.005, "the screenshot has almost nothing drawn on it"
    # strategies' lines are drawn in their colours (lines of equal values overlap, so count them together)
    drawn = {s: colour_pixels(image, STRATEGY_COLOURS[s]) for s in strategies}
    assert sum(drawn.values()) > 2_000 and max(drawn.values()) > 500, drawn


@pytest.mark.parametrize("name", list(HISTORIES))
def test_report_of_each_bundled_history_renders(name, history_diffs, history_records, tmp_path):
    report = tmp_path / f"{name}.html"
    assert cli(["report", str(history_diffs(name) / "diffs"), "--out", str(report)]) == 0
    strategies = {r["strategy"] for r in history_records(name)}
    assert_rendered(report, tmp_path, strategies)


@pytest.mark.spark
def test_replay_with_report_end_to_end(tmp_path):
    """`rebalance replay LOG --report` (the Spark pipeline) writes a report that renders."""
    report = tmp_path / "report.html"
    argv = ["replay", str(sample_path("topic-growth")), "--out", str(tmp_path / "out"),
            "--strategies", "range,cooperative-sticky", "--report", str(report), "--engine", "spark"]
    assert cli(argv) == 0  # in-process: shares the test session's SparkSession
    assert_rendered(report, tmp_path, {"range", "cooperative-sticky"})


def test_one_page_for_all_bundled_histories(history_diffs, history_records, tmp_path):
    """Many groups on one page (what `rebalance demo` shows): plotly.js once, every group's figure laid out."""
    diffs = tmp_path / "diffs"
    diffs.mkdir()
    for name in HISTORIES:
        shutil.copy(history_diffs(name) / "diffs" / "diffs.jsonl", diffs / f"{name}.jsonl")
    report = tmp_path / "all.html"
    assert cli(["report", str(diffs), "--out", str(report)]) == 0
    html = report.read_text(encoding="utf-8")
    assert len(re.findall(r"id=\"fig-", html)) == len(HISTORIES)  # one chart per group (load lanes: their own)
    assert html.count("window.PlotlyConfig") == 1  # the library is embedded once
    result = probe(report, tmp_path)
    charts = [f for f in result["figures"] if f["id"].startswith("fig-")]
    assert len(charts) == len(HISTORIES)
    assert all(f["width"] > 600 and f["height"] > 600 and f["points"] > 0 and f["lines"] > 0 for f in charts)
    assert result["tables"]["summary"] == sum(len({r["strategy"] for r in history_records(n)}) for n in HISTORIES)


def test_dead_letters_static_restarts_and_final_assignments_are_on_screen(history_diffs, tmp_path):
    """Two bundled histories as one replay's output: the header's dead letters, the static lane and the final
    assignment tables are laid out (visible rows), and the screenshot has them."""
    out = tmp_path / "out"
    for kind, name in (("diffs", "diffs.jsonl"), ("dead-letter", "dead-letters.jsonl")):
        (out / kind).mkdir(parents=True)
        for history in ("flapping-member", "static-restarts"):
            shutil.copy(history_diffs(history) / kind / name, out / kind / f"{history}.jsonl")
    report = tmp_path / "two.html"
    assert cli(["report", str(out), "--out", str(report)]) == 0
    result = probe(report, tmp_path)
    tables = result["tables"]
    assert tables["dead-letters"] == 1  # the two repeated leaves share one reason
    assert tables["static"] == 12  # two rolling restarts of six static members
    assert tables["final"] == 8 + 6  # every member of both groups, all strategies side by side
    assert tables["holdings"] >= 8 + 6  # the best strategy's partitions listed, open
    assert len([fig for fig in result["figures"] if fig["id"].startswith("fig-")]) == 2  # one chart per group


def test_conformance_lane_of_a_replayed_capture(tmp_path: Path) -> None:
    """Three recorded generations — Kafka's range result, a different one, an unknown protocol — replayed with
    a report: the lane lists the two without a clean verdict, its counts are the conformance records'."""
    def gen(n: int, protocol: str, assigned: dict[str, list[int]]) -> dict:
        return {"group": "captured", "type": "generation", "generation": n, "protocol": protocol,
                "ts": 1732200000000 + n * 1000,
                "members": {m: {"topics": ["orders"], "assigned": {"orders": ps}} for m, ps in assigned.items()}}

    events = [{"group": "captured", "type": "partitions", "partitions": {"orders": 4}},
              gen(1, "range", {"c-1": [0, 1], "c-2": [2, 3]}),
              gen(2, "range", {"c-1": [0, 1, 2], "c-2": [3]}),
              gen(3, "in-house", {"c-1": [0, 1], "c-2": [2, 3]})]
    log = tmp_path / "captured.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    out, report = tmp_path / "out", tmp_path / "captured.html"
    assert cli(["replay", str(log), "--out", str(out), "--strategies", "range,sticky", "--engine", "local",
                "--report", str(report)]) == 0
    records = [json.loads(line) for f in sorted((out / "conformance").glob("*.jsonl"))
               for line in f.read_text().splitlines()]
    assert [(r["generation"], r["conforms"]) for r in records] == [(1, True), (2, False), (3, None)]

    page = report.read_text(encoding="utf-8")
    counts = re.search(r'data-counts="(\d+),(\d+),(\d+)"', page)
    assert counts and tuple(map(int, counts.groups())) == (
        sum(r["conforms"] is True for r in records), sum(r["conforms"] is False for r in records),
        sum(r["conforms"] is None for r in records))
    assert 'data-strategy="observed"' in page  # what the group really got, ranked beside the strategies
    result = probe(report, tmp_path)
    assert result["tables"]["conformance"] == 2  # the differing generation and the one without a verdict
    shot = screenshot(report, tmp_path)
    assert shot.shape[0] > 0 and shot.std() > 0


def test_a_burst_of_rebalances_stays_readable(burst_capture, tmp_path):
    """A captured group's 14 generations, 13 of them in 37 s an hour after the first: every rebalance gets its
    own place on the axis (marks at least 40 px apart), every chart row labels each one with its number and
    time without two labels overlapping, the legend clear of the mode bar, and the group's own strategy is marked
    in its ranking."""
    report = tmp_path / "burst.html"
    assert cli(["report", str(burst_capture), "--out", str(report)]) == 0
    records = [json.loads(line) for f in (burst_capture / "diffs").glob("*.jsonl") for line in f.open()]
    events = sorted({(r["cause"]["source"]["line"], r["event_ts"]) for r in records})
    result = probe(report, tmp_path, AXIS_PROBE)
    (figure,) = result["figures"]
    marks = sorted(figure["marks"])
    assert len(marks) == len(events)
    assert min(b - a for a, b in itertools.pairwise(marks)) >= 40, marks
    clock = [datetime.fromtimestamp(ts / 1000, UTC).strftime("%H:%M:%S") for _, ts in events]
    assert len(figure["axes"]) == 6  # the events strip and five charts
    for labels in figure["axes"]:
        labels.sort(key=lambda t: t["left"])
        assert [t["text"] for t in labels] == [f"{n}|{c}" for n, c in enumerate(clock, 1)]
        assert all(a["right"] <= b["left"] for a, b in itertools.pairwise(labels)), labels
    legend, modebar = figure["legend"], figure["modebar"]  # [left, top, right, bottom]
    assert legend[3] <= modebar[1] or modebar[3] <= legend[1] or legend[2] <= modebar[0], (legend, modebar)
    assert len(result["own"]) == 1 and result["own"][0] > 0  # range, the group's strategy
    shot = screenshot(report, tmp_path)
    # observed's line and marks are drawn (the group's own range row, equal to it, is drawn over part of them)
    assert colour_pixels(shot, STRATEGY_COLOURS["observed"]) > 200
