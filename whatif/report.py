"""The what-if report: what each strategy did (or would have done) to each group, over time.

One self-contained HTML page (plotly.js embedded once, no network needed to view it) with, per group,
a summary table ranking the strategies and one figure whose rows share the rebalance axis: partitions
moved next to the fewest moves any assignment with the same loads could have made (`min_moves`, see
`assignors.optimality`), the optimality gap, partitions paused, load imbalance (max − min) and cumulative
movement. A *rebalance* is one triggering event: an eager round, or a cooperative revoke round with its
follow-ups; its numbers are the sums over its rounds (imbalance: after its last round).

`summarize` is the pure core (diff records in, one row per group and strategy out), shared by the page,
the tests and `summary_text` (the same table for terminals, e.g. the demo's printed summary). Importing
this module is cheap: plotly loads only when a page is drawn.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate
from pathlib import Path

# Strategy -> colour, fixed so a strategy looks the same in every group's figure.
STRATEGY_COLOURS = {
    "range": "#1f77b4", "roundrobin": "#ff7f0e", "sticky": "#2ca02c", "cooperative-sticky": "#d62728",
    "uniform": "#9467bd", "server-range": "#8c564b", "metaq-default": "#e377c2", "metaq-consistent-hash": "#17becf",
    "weighted-sticky": "#bcbd22",
}
_FALLBACK_COLOURS = ("#7f7f7f", "#bcbd22", "#393b79", "#637939")


@dataclass(frozen=True)
class Round:
    """The metrics of one diff record (one rebalance round of one strategy); `changes` are not kept."""

    phase: str
    event_ts: int | None
    cause: str
    moves: int
    min_moves: int | None
    assigned: int
    paused: int
    load_min: int
    load_max: int
    unassigned: int
    error: bool = False  # Kafka's assignor threw in this round (the record's `error`)


@dataclass
class Rebalance:
    """One triggering event under one strategy: its rounds summed (imbalance after the last round)."""

    number: int  # 1-based, in event order
    event_ts: int | None
    cause: str
    rounds: int = 0
    moves: int = 0
    min_moves: int | None = 0
    assigned: int = 0
    paused: int = 0
    imbalance: int = 0
    unassigned: int = 0

    def add(self, r: Round) -> None:
        self.rounds += 1
        self.moves += r.moves
        self.assigned += r.assigned
        self.min_moves = None if self.min_moves is None or r.min_moves is None else self.min_moves + r.min_moves
        self.paused += r.paused
        self.imbalance = r.load_max - r.load_min
        self.unassigned = r.unassigned


@dataclass
class Summary:
    """One row of a group's summary table."""

    group: str
    strategy: str
    rebalances: int
    rounds: int
    moves: int
    min_moves: int | None  # None when some record lacks the metric (diffs from before it existed)
    paused: int
    max_paused: int
    max_imbalance: int
    final_imbalance: int
    final_unassigned: int
    kafka_errors: int = 0
    rank: int = 0
    history: list[Rebalance] = field(default_factory=list, repr=False)

    @property
    def gap(self) -> int | None:
        return None if self.min_moves is None else self.moves - self.min_moves


def _cause_text(record: dict) -> str:
    cause = record.get("cause")
    if not isinstance(cause, dict):
        return "?"
    what = cause.get("member") or cause.get("topic") or " ".join(cause.get("members") or ()) or ""
    text = f"{cause.get('type', '?')} {what}".strip()
    error = record.get("error")
    if isinstance(error, dict):
        text += f" (Kafka throws {str(error.get('exception', '?')).rsplit('.', 1)[-1]})"
    return text


def collect_rounds(records: Iterable[dict]) -> dict[tuple[str, str], list[Round]]:
    """Diff records -> rounds per (group, strategy) in generation order; split parts count once."""
    seen: dict[tuple[str, str], dict[int, Round]] = defaultdict(dict)
    for n, rec in enumerate(records, 1):
        try:
            if rec["phase"] == "replace":  # a static member's new id took over: no round, nothing moved
                continue
            key, generation, metrics = _round(rec)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"diff record {n}: not a diff record (docs/events-and-diffs.md): {exc!r}") from None
        seen[key].setdefault(generation, metrics)  # later parts of a split record repeat the metrics
    return {key: [by_gen[g] for g in sorted(by_gen)] for key, by_gen in sorted(seen.items())}


def _round(rec: dict) -> tuple[tuple[str, str], int, Round]:
    return (str(rec["group"]), str(rec["strategy"])), int(rec["generation"]), Round(
        phase=str(rec["phase"]),
        event_ts=None if rec.get("event_ts") is None else int(rec["event_ts"]),
        cause=_cause_text(rec),
        moves=int(rec["moves"]),
        min_moves=None if rec.get("min_moves") is None else int(rec["min_moves"]),
        assigned=int(rec["assigned"]),
        paused=int(rec["paused"]),
        load_min=int(rec["load_min"]),
        load_max=int(rec["load_max"]),
        unassigned=int(rec["unassigned"]),
        error="error" in rec,
    )


def rebalances(rounds: list[Round]) -> list[Rebalance]:
    """Group rounds into rebalances: every round but a cooperative follow-up starts a new one."""
    out: list[Rebalance] = []
    for r in rounds:
        if r.phase != "followup" or not out:
            out.append(Rebalance(number=len(out) + 1, event_ts=r.event_ts, cause=r.cause))
        out[-1].add(r)
    return out


def summarize(records: Iterable[dict]) -> list[Summary]:
    """One row per (group, strategy), grouped by group and ranked within it by disruption: fewest
    partitions paused first (consumption stopped), then fewest moved, then smallest worst imbalance."""
    rows: list[Summary] = []
    for (group, strategy), rounds in collect_rounds(records).items():
        history = rebalances(rounds)
        min_moves = [r.min_moves for r in rounds]
        rows.append(Summary(
            group=group,
            strategy=strategy,
            rebalances=len(history),
            rounds=len(rounds),
            moves=sum(r.moves for r in rounds),
            min_moves=None if None in min_moves else sum(min_moves),
            paused=sum(r.paused for r in rounds),
            max_paused=max(b.paused for b in history),
            max_imbalance=max(b.imbalance for b in history),
            final_imbalance=history[-1].imbalance,
            final_unassigned=history[-1].unassigned,
            kafka_errors=sum(r.error for r in rounds),
            history=history,
        ))
    by_group: dict[str, list[Summary]] = defaultdict(list)
    for row in rows:
        by_group[row.group].append(row)
    ranked: list[Summary] = []
    for group_rows in by_group.values():
        group_rows.sort(key=lambda s: (s.paused, s.moves, s.max_imbalance, s.strategy))
        for rank, row in enumerate(group_rows, 1):
            row.rank = rank
        ranked.extend(group_rows)
    return ranked


def summary_text(summaries: list[Summary]) -> str:
    """`summarize`'s rows as a plain-text table per group (for terminals: `rebalance demo`)."""
    columns = [(h, attr) for h, attr, _ in _COLUMNS]
    lines: list[str] = []
    for group in dict.fromkeys(row.group for row in summaries):
        rows = [row for row in summaries if row.group == group]
        cells = [[h for h, _ in columns]] + [
            ["–" if getattr(row, attr) is None else str(getattr(row, attr)) for _, attr in columns] for row in rows
        ]
        widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
        lines.append(f"group {group}")
        for r in cells:  # the strategy name left-aligned, numbers right-aligned
            padded = [c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
            lines.append("  " + "  ".join(padded))
    return "\n".join(lines)


# --- the page ------------------------------------------------------------------------------------------

_PANELS = (  # (title, series, per rebalance: bars when there are few rebalances)
    ("partitions moved (dotted: fewest possible with the same loads)", "moves", True),
    ("optimality gap: moved − fewest possible with the same loads", "gap", True),
    ("partitions paused", "paused", True),
    ("load imbalance after the rebalance (max − min partitions per member)", "imbalance", False),
    ("cumulative partitions moved", "cumulative", False),
)
_MAX_BARS = 60  # rebalances up to which per-rebalance panels are grouped bars (equal values stay visible)

_COLUMNS = (  # (header, Summary attribute, tooltip)
    ("rank", "rank", "fewest partitions paused first, then fewest moved, then smallest max imbalance"),
    ("strategy", "strategy", ""),
    ("rebalances", "rebalances", "triggering events"),
    ("rounds", "rounds", "rebalance rounds, cooperative follow-ups counted"),
    ("moved", "moves", "partitions that left their previous owner, over all rebalances"),
    ("fewest possible", "min_moves", "sum over rounds of the minimum moves any assignment with the same loads needs"),
    ("gap", "gap", "moved − fewest possible"),
    ("paused", "paused", "partitions whose consumption stopped, over all rebalances"),
    ("max paused", "max_paused", "most partitions paused by one rebalance"),
    ("max imbalance", "max_imbalance", "largest max − min load after a rebalance"),
    ("final imbalance", "final_imbalance", "max − min load after the last rebalance"),
    ("unassigned at end", "final_unassigned", "partitions of subscribed topics nobody holds at the end"),
    ("Kafka errors", "kafka_errors", "rounds in which Kafka's own assignor throws (the group keeps its assignment)"),
)

_STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1300px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #ddd; }
table.summary { border-collapse: collapse; margin: 0.8em 0 1.2em; font-size: 0.92em; }
table.summary th, table.summary td { padding: 0.3em 0.7em; border-bottom: 1px solid #eee; text-align: right; }
table.summary th { background: #f6f6f6; cursor: help; }
table.summary td.strategy { text-align: left; font-weight: 600; white-space: nowrap; }
table.summary tr.best td { background: #eef8ee; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.4em; border-radius: 2px; }
p.note { color: #555; max-width: 75em; }
ul.index { columns: 2; }
"""


def _colour(strategy: str, strategies: list[str]) -> str:
    if strategy in STRATEGY_COLOURS:
        return STRATEGY_COLOURS[strategy]
    return _FALLBACK_COLOURS[strategies.index(strategy) % len(_FALLBACK_COLOURS)]


def _ts_text(ts: int | None) -> str:
    if ts is None:
        return "time unknown"
    return datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _figure(rows: list[Summary], strategies: list[str]):
    """One figure per group; rows share the rebalance axis, a legend entry toggles a strategy everywhere.

    Strategies often agree, so their marks must not hide each other: per-rebalance numbers are grouped
    bars while they fit, and lines get thinner from the first strategy to the last.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    shown = _eventful(rows)
    bars = len(shown) <= _MAX_BARS
    fig = make_subplots(rows=len(_PANELS), cols=1, shared_xaxes=True, vertical_spacing=0.045,
                        subplot_titles=[title.split(" (dotted")[0] if bars else title for title, _, _ in _PANELS])
    for n, row in enumerate(rows):
        colour = _colour(row.strategy, strategies)
        width = 1.2 + 2.4 * (len(rows) - 1 - n) / max(1, len(rows) - 1)
        history = [b for b in row.history if b.number in shown]
        x = [b.number for b in history]
        series = {
            "moves": [b.moves for b in history],
            "gap": [None if b.min_moves is None else b.moves - b.min_moves for b in history],
            "paused": [b.paused for b in history],
            "imbalance": [b.imbalance for b in history],
            "cumulative": list(accumulate(b.moves for b in history)),
        }
        hover = [[f"{html.escape(b.cause)} · {_ts_text(b.event_ts)}", b.rounds, b.moves,
                  "n/a" if b.min_moves is None else b.min_moves] for b in history]
        label = f"<b>{html.escape(row.strategy)}</b>"
        head = (f"{label} · rebalance %{{x}}: %{{customdata[0]}}<br>"
                "rounds %{customdata[1]} · moved %{customdata[2]} · fewest possible %{customdata[3]}<br>")
        for i, (title, key, per_rebalance) in enumerate(_PANELS, 1):
            name = title.split(" (")[0]
            common = {"x": x, "y": series[key], "name": row.strategy, "legendgroup": row.strategy, "showlegend": i == 1}
            if i == 1:  # the cause and the moves in the first panel only: the page stays small for long histories
                common.update(customdata=hover, hovertemplate=f"{head}{name}: %{{y}}<extra></extra>")
            else:
                common["hovertemplate"] = f"{label} · rebalance %{{x}}<br>{name}: %{{y}}<extra></extra>"
            if per_rebalance and bars:
                fig.add_trace(go.Bar(marker_color=colour, **common), row=i, col=1)
                continue
            shape = "hv" if key == "imbalance" else "linear"
            fig.add_trace(go.Scatter(mode="lines+markers", line={"color": colour, "width": width, "shape": shape},
                                     marker={"size": 3 + width}, **common), row=i, col=1)
        if not bars:
            fig.add_trace(go.Scatter(
                x=x, y=[b.min_moves for b in history], name=f"{row.strategy} fewest possible",
                legendgroup=row.strategy, showlegend=False, mode="lines", hoverinfo="skip",
                line={"color": colour, "width": 1.2, "dash": "dot"},
            ), row=1, col=1)
    quiet = max(len(row.history) for row in rows) - len(shown)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=sorted(shown))
    note = f"; {quiet} quiet rebalance(s) not shown" if quiet else ""
    fig.update_xaxes(title_text=f"rebalance # (in event order{note})", row=len(_PANELS), col=1)
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(height=230 * len(_PANELS), margin={"l": 60, "r": 20, "t": 40, "b": 50},
                      legend={"orientation": "h", "y": 1.04, "x": 0}, template="plotly_white",
                      hovermode="closest", barmode="group", bargap=0.15, bargroupgap=0.05)
    return fig


def _eventful(rows: list[Summary]) -> set[int]:
    """Rebalance numbers in which some strategy assigned, moved or paused a partition or changed its
    imbalance; the others (e.g. joins before any topic has metadata) would only stretch the axis."""
    shown = set()
    for row in rows:
        before = 0
        for b in row.history:
            if b.assigned or b.moves or b.paused or b.imbalance != before:
                shown.add(b.number)
            before = b.imbalance
    return shown or {b.number for row in rows for b in row.history}


def _cell(row: Summary, attr: str, strategies: list[str]) -> str:
    value = getattr(row, attr)
    if attr == "strategy":
        swatch = f'<span class="swatch" style="background:{_colour(value, strategies)}"></span>'
        return f'<td class="strategy" data-col="strategy">{swatch}{html.escape(value)}</td>'
    text = "–" if value is None else f"{value}"
    return f'<td data-col="{attr}">{text}</td>'


def _table(group: str, rows: list[Summary], strategies: list[str]) -> str:
    head = "".join(f'<th title="{html.escape(tip)}">{html.escape(h)}</th>' for h, _, tip in _COLUMNS)
    body = "".join(
        f'<tr class="{"best" if row.rank == 1 else ""}" data-strategy="{html.escape(row.strategy)}">'
        + "".join(_cell(row, attr, strategies) for _, attr, _ in _COLUMNS) + "</tr>"
        for row in rows
    )
    return (f'<table class="summary" data-group="{html.escape(group)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def render(summaries: list[Summary]) -> str:
    """The whole page for `summarize`'s rows (plotly.js embedded once, before the first figure)."""
    by_group: dict[str, list[Summary]] = defaultdict(list)
    for row in summaries:
        by_group[row.group].append(row)
    strategies = sorted({row.strategy for row in summaries})
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>rebalance-replay: what-if report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>What-if report: what each strategy did to each group</h1>",
        f"<p class='note'>{len(by_group)} group(s), strategies: {html.escape(', '.join(strategies))}. "
        "A rebalance is one triggering event (a cooperative revoke round and its follow-ups count as one "
        "rebalance of several rounds). <em>Fewest possible</em> is, per round, the minimum number of moves "
        "any assignment giving every member the same number of partitions (within its subscriptions) "
        "could have made, computed exactly; the <em>gap</em> is the movement a strategy spent beyond it. "
        "Strategies are ranked by disruption: fewest partitions paused, then fewest moved, then smallest "
        "worst imbalance.</p>",
    ]
    if not by_group:
        parts.append("<p>No diff records: nothing rebalanced.</p>")
    else:
        parts.append("<ul class='index'>" + "".join(
            f"<li><a href='#g{i}'>{html.escape(g)}</a> — best: {html.escape(rows[0].strategy)}</li>"
            for i, (g, rows) in enumerate(by_group.items())) + "</ul>")
    for i, (group, rows) in enumerate(by_group.items()):
        parts.append(f"<h2 id='g{i}'>{html.escape(group)}</h2>")
        parts.append(_table(group, rows, strategies))
        parts.append(_figure(rows, strategies).to_html(
            full_html=False, include_plotlyjs=i == 0, div_id=f"fig{i}",
            config={"displaylogo": False, "responsive": True},
        ))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(records: Iterable[dict], out_path: str | Path) -> None:
    """Summarize diff records and write the self-contained HTML report to `out_path`."""
    out = Path(out_path)
    if out.parent != Path():
        out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(summarize(records)), encoding="utf-8")
