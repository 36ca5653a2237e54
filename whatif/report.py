"""The what-if report: what each strategy did (or would have done) to each group, over time.

One self-contained HTML page (plotly.js embedded once, no network needed to view it). Its header says what
was read (events, diff records, dead letters grouped by reason with the first example of each, groups) and
what each strategy is (client-side eager or cooperative, broker-side KIP-848, MetaQ) with the configuration
that enables it. Then, per group, one *lane* per concern, in `GROUP_LANES` order: the ranking table (for a
captured group, first the strategy it ran and whether replaying it gives its `observed` row), the time stopped
and lag added per strategy (docs/cost.md, `whatif.costs`), conformance with Kafka's assignor, static membership
(restarts that took a member's place without a rebalance), the charts (partitions moved next to the fewest
moves any assignment with the strategy's own loads could have made — `min_moves`, see `assignors.optimality` —
the optimality gap, partitions paused, load imbalance and cumulative movement, per rebalance number with its
time), the load lane of a group with traffic (msgs/s from the least loaded to the hottest member after each
rebalance, the rate imbalance per strategy, the keys a growing keyed topic moved: contract §7) and the final
assignment per strategy. A new concern is a new lane function.

A *rebalance* is one triggering event: an eager or KIP-848 round, or a cooperative revoke round with its
follow-ups; its numbers are the sums over its rounds (imbalance: after its last round). Rebalances are
numbered by the group's triggering events in log order, so one event has one number in every strategy's row.

Adding a section: a function `(GroupReport, strategies) -> HTML` ("" when it has nothing to say) placed in
`GROUP_LANES` (a page-wide one, `(Report) -> HTML`, in `HEADER_LANES`); what it needs from the records goes
into `build` (the `_Collector` pass and a `GroupReport` field), so the page stays a function of the `Report`.

`build` is the pure core (diff records and dead letters in, a `Report` out) shared by the page, the tests
and the terminal summaries (`summary_text`, `strategy_lines`). Importing this module is cheap: plotly loads
only when a page is drawn.
"""

from __future__ import annotations

import html
import re
import zlib
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from itertools import accumulate
from pathlib import Path

from assignors.registry import OBSERVED, STRATEGIES
from whatif.costs import CostCollector, GroupCost

# The one palette: the registry's strategies take its colours in registry order, the spares after them go to
# strategies the registry does not know (yet), in page order; `observed`, the group's real history, is near-black.
# Fixed, so a strategy looks the same in every group's figure and every page; shapes and dashes keep strategies
# that agree (equal values, overlapping lines) apart.
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
            "#393b79", "#005f5f", "#b8860b", "#7f7f7f", "#5f005f", "#00a087")
STRATEGY_COLOURS = {**dict(zip(STRATEGIES, _PALETTE, strict=False)), OBSERVED: "#111111"}
_SPARE_COLOURS = _PALETTE[len(STRATEGIES):]  # never empty: tests/whatif keep room for new strategies
_SYMBOLS = ("circle-open", "square-open", "diamond-open", "triangle-up-open", "x-open", "star-open",
            "pentagon-open", "hexagon-open", "triangle-down-open", "cross-open")
_DASHES = ("solid", "dot", "dash", "longdash", "dashdot", "longdashdot")


@dataclass(frozen=True)
class StrategyInfo:
    """What a strategy is and how a Kafka (or MetaQ) deployment gets it."""

    kind: str
    pauses: str
    enable: str


_CLIENT = "consumer config (classic protocol, group.protocol=classic): partition.assignment.strategy="
STRATEGY_INFO = {
    "range": StrategyInfo("Kafka client-side, eager", "everything held, every rebalance",
                          _CLIENT + "org.apache.kafka.clients.consumer.RangeAssignor"),
    "roundrobin": StrategyInfo("Kafka client-side, eager", "everything held, every rebalance",
                               _CLIENT + "org.apache.kafka.clients.consumer.RoundRobinAssignor"),
    "sticky": StrategyInfo("Kafka client-side, eager", "everything held, every rebalance",
                           _CLIENT + "org.apache.kafka.clients.consumer.StickyAssignor"),
    "cooperative-sticky": StrategyInfo(
        "Kafka client-side, cooperative (KIP-429)", "only the partitions it revokes",
        _CLIENT + "org.apache.kafka.clients.consumer.CooperativeStickyAssignor — alone: while RangeAssignor is "
        "still listed (the default list is range, cooperative-sticky) the group rebalances eagerly"),
    "uniform": StrategyInfo(
        "Kafka broker-side, KIP-848 consumer protocol (Kafka 4.0+)", "only the partitions it revokes",
        "consumer config: group.protocol=consumer (group.remote.assignor=uniform, the broker's default); "
        "broker: group.consumer.assignors lists uniform (default: uniform, range)"),
    "server-range": StrategyInfo(
        "Kafka broker-side, KIP-848 consumer protocol (Kafka 4.0+)", "only the partitions it revokes",
        "consumer config: group.protocol=consumer, group.remote.assignor=range; "
        "broker: group.consumer.assignors lists range (it does by default)"),
    "metaq-default": StrategyInfo(
        "MetaQ (Metamorphosis) client — not available in Kafka", "everything held (each consumer rebalances alone)",
        "MetaQ consumer: DefaultLoadBalanceStrategy (for comparison only; no Kafka setting)"),
    "metaq-consistent-hash": StrategyInfo(
        "MetaQ (Metamorphosis) client — not available in Kafka", "everything held (each consumer rebalances alone)",
        "MetaQ consumer: ConsisHashStrategy (for comparison only; no Kafka setting)"),
    "weighted-sticky": StrategyInfo(
        "custom client-side assignor (this project's), eager", "everything held, every rebalance",
        "a ConsumerPartitionAssignor that sends each member's weight in Subscription userData "
        "(format: docs/assignors.md); not shipped with Kafka"),
    "rate-balanced": StrategyInfo(
        "what-if assignor (this project's), eager: balances msgs/s, not partition counts",
        "everything held, every rebalance",
        "a ConsumerPartitionAssignor fed each partition's msgs/s (algorithm: docs/traffic.md); not shipped with Kafka"),
    OBSERVED: StrategyInfo(
        "what the group really got: the assignments its recorded generations carry (rebalance capture)",
        "per the recorded protocol", "– (recorded, not computed)"),
}
_UNKNOWN_STRATEGY = StrategyInfo("not a strategy of this library", "as its records say", "–")


# --- from records to numbers ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Load:
    """A round's load in messages per second (contract §7: `rate_total`, `rate_min`, `rate_max`, `keys_moved`)."""

    total: float  # into the partitions of the topics the group's members subscribe to
    least: float  # the least loaded member (0 when a member holds nothing)
    hottest: float  # the most loaded member
    members: int
    keys_moved: tuple[tuple[str, float], ...] = ()  # (topic, share of its key weight that changed partition)

    @staticmethod
    def of(rec: dict) -> Load | None:
        if rec.get("rate_total") is None:
            return None
        moved = rec.get("keys_moved") or {}
        return Load(float(rec["rate_total"]), float(rec["rate_min"]), float(rec["rate_max"]), int(rec["members"]),
                    tuple((str(t), float(v)) for t, v in sorted(moved.items())))

    @property
    def even_share(self) -> float:
        """msgs/s per member were the traffic spread evenly over the members."""
        return self.total / self.members if self.members else 0.0

    @property
    def over_even(self) -> float | None:
        """The hottest member's msgs/s in even shares (1: balanced); None without traffic."""
        return self.hottest / self.even_share if self.even_share > 0 else None

    @property
    def hottest_over_least(self) -> float | None:
        """The hottest member's msgs/s over the least loaded one's; inf when one holds no traffic."""
        if self.hottest == 0:
            return None
        return self.hottest / self.least if self.least > 0 else float("inf")


@dataclass(frozen=True)
class Round:
    """The metrics of one diff record (one rebalance round of one strategy); `changes` are kept apart."""

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
    source: tuple[str, int, int]  # the triggering event's place in the log (`_source_key`)
    error: bool = False  # Kafka's assignor threw in this round (the record's `error`)
    load: Load | None = None  # msgs/s after the round, in the records of a group with traffic


@dataclass
class Rebalance:
    """One triggering event under one strategy: its rounds summed (imbalance after the last round)."""

    number: int  # the group's triggering event it answers, 1-based in log order: the same in every strategy's row
    event_ts: int | None
    cause: str
    source: tuple[str, int, int]
    rounds: int = 0
    moves: int = 0
    min_moves: int | None = 0
    assigned: int = 0
    paused: int = 0
    imbalance: int = 0
    unassigned: int = 0
    load: Load | None = None  # msgs/s after its last round (None: the group had no traffic then)
    keys_moved: dict[str, float] = field(default_factory=dict)  # topic -> share, when a keyed topic grew

    def add(self, r: Round) -> None:
        self.rounds += 1
        self.moves += r.moves
        self.assigned += r.assigned
        self.min_moves = None if self.min_moves is None or r.min_moves is None else self.min_moves + r.min_moves
        self.paused += r.paused
        self.imbalance = r.load_max - r.load_min
        self.unassigned = r.unassigned
        self.load = r.load
        if r.load is not None:
            self.keys_moved.update(r.load.keys_moved)


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
    def worst_rate(self) -> tuple[float, float] | None:
        """(max, min) msgs/s per member after the rebalance whose spread (max - min) was largest; None without
        traffic."""
        loaded = [(b.load.hottest - b.load.least, b.load.hottest, b.load.least) for b in self.history
                  if b.load is not None]
        if not loaded:
            return None
        _, high, low = max(loaded)
        return high, low

    @property
    def gap(self) -> int | None:
        return None if self.min_moves is None else self.moves - self.min_moves


@dataclass
class StaticRestart:
    """A join whose `group.instance.id` another member held: the new id took the old one's place, no rebalance."""

    event_ts: int | None
    member: str
    replaced: str
    source: tuple[str, int, int]
    kept: dict[str, int] = field(default_factory=dict)  # strategy -> partitions the new id took over
    after: int = 0  # the group's triggering events before it in the log


@dataclass
class FinalAssignment:
    """Who holds what after a strategy's last record (its `changes` replayed), and the group's size then."""

    strategy: str
    members: int
    holdings: dict[str, dict[str, list[int]]]  # member -> topic -> partitions ascending

    @property
    def loads(self) -> dict[str, int]:
        return {m: sum(len(p) for p in topics.values()) for m, topics in self.holdings.items()}


@dataclass
class DeadLetterReason:
    """Dead letters whose reasons differ only in names and numbers, with the first one as the example."""

    reason: str
    count: int
    first: dict


@dataclass
class GroupReport:
    group: str
    rows: list[Summary]  # ranked
    restarts: list[StaticRestart]
    finals: dict[str, FinalAssignment]
    conformance: list[dict] = field(default_factory=list)  # its conformance records, in generation order
    protocols: list[str] = field(default_factory=list)  # the protocols its recorded generations carry, in log order
    cost: GroupCost | None = None  # time stopped and lag added per strategy (whatif.costs)


@dataclass
class Report:
    groups: list[GroupReport]
    strategies: list[str]
    diff_records: int
    dead_letters: int
    reasons: list[DeadLetterReason]
    events: int | None  # events read, when the caller knows (a replay does)
    sources: int  # distinct source positions among the records: events that produced any output


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


def _source_key(record: dict) -> tuple[str, int, int]:
    """A record's source position, comparable within a group (file/topic, partition, line/offset)."""
    cause = record.get("cause")
    src = (cause.get("source") if isinstance(cause, dict) else None) or record.get("source") or {}
    return (str(src.get("file", src.get("topic", ""))), int(src.get("partition", 0)),
            int(src.get("line", src.get("offset", 0))))


def _round(rec: dict) -> Round:
    return Round(
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
        source=_source_key(rec),
        error="error" in rec,
        load=Load.of(rec),
    )


class _Collector:
    """One pass over diff records (in any order): rounds, static restarts and final owners per strategy.

    Final owners come from replaying `changes` with last-writer-wins per partition on the record's place in
    the strategy's history — (generation, replacement after the round, source position) — so records may
    arrive shuffled (several files or partitions) and only one entry per partition is kept."""

    def __init__(self) -> None:
        self.rounds: dict[tuple[str, str], dict[int, Round]] = defaultdict(dict)
        self.owners: dict[tuple[str, str], dict[tuple[str, int], tuple[tuple, str | None]]] = defaultdict(dict)
        self.size: dict[tuple[str, str], tuple[tuple, int]] = {}
        self.restarts: dict[str, dict[tuple, StaticRestart]] = defaultdict(dict)
        self.protocols: dict[str, dict[tuple, str]] = defaultdict(dict)  # group -> source -> recorded protocol
        self.sources: set[tuple] = set()
        self.count = 0

    def add(self, rec: dict) -> None:
        self.count += 1
        try:
            key = (str(rec["group"]), str(rec["strategy"]))
            generation, phase = int(rec["generation"]), str(rec["phase"])
            source = _source_key(rec)
            order = (generation, phase == "replace", source)
            if phase == "replace":  # a static member's new id took over: no round, nothing moved
                restart = self.restarts[key[0]].setdefault(source, StaticRestart(
                    None if rec.get("event_ts") is None else int(rec["event_ts"]),
                    str(rec["cause"].get("member")), str(rec["cause"].get("replaced")), source))
                restart.kept[key[1]] = int(rec["assigned"])
            else:
                self.rounds[key].setdefault(generation, _round(rec))  # later parts of a split record repeat it
            if key[1] == OBSERVED and rec.get("protocol") is not None:
                self.protocols[key[0]][source] = str(rec["protocol"])
            self._apply(key, order, rec["changes"])
            if order >= self.size.get(key, (order, 0))[0]:
                self.size[key] = (order, int(rec["members"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"diff record {self.count}: not a diff record (docs/events-and-diffs.md §2): "
                             f"{exc!r}") from None
        self.sources.add((key[0], source))

    def _apply(self, key: tuple[str, str], order: tuple, changes: dict) -> None:
        owners = self.owners[key]
        for member, change in changes.items():
            for topic, partitions in change.get("revoked", {}).items():
                for p in partitions:
                    held = owners.get((topic, p))
                    if held is None or order > held[0]:  # in the same record an assignment wins
                        owners[(topic, p)] = (order, None)
            for topic, partitions in change.get("assigned", {}).items():
                for p in partitions:
                    held = owners.get((topic, p))
                    if held is None or order >= held[0]:
                        owners[(topic, p)] = (order, member)

    def final(self, key: tuple[str, str]) -> FinalAssignment:
        holdings: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for (topic, p), (_, member) in sorted(self.owners[key].items()):
            if member is not None:
                holdings[member][topic].append(p)
        return FinalAssignment(key[1], self.size[key][1], {m: dict(t) for m, t in sorted(holdings.items())})


def rebalances(rounds: list[Round]) -> list[Rebalance]:
    """Group rounds into rebalances: every round but a cooperative follow-up starts a new one."""
    out: list[Rebalance] = []
    for r in rounds:
        if r.phase != "followup" or not out:
            out.append(Rebalance(number=len(out) + 1, event_ts=r.event_ts, cause=r.cause, source=r.source))
        out[-1].add(r)
    return out


def _event_keys(history: list[Rebalance]) -> list[tuple[tuple[str, int, int], int]]:
    """Each rebalance's triggering event: its source position, and which of that event's rebalances it is (a
    consumer that rejects its assignment rejoins at once: a second rebalance from the same event; records
    without a source are told apart by their order alone)."""
    seen: dict[tuple[str, int, int], int] = defaultdict(int)
    keys = []
    for b in history:
        keys.append((b.source, seen[b.source]))
        seen[b.source] += 1
    return keys


def _group_events(group_rows: list[Summary]) -> list[tuple[tuple[str, int, int], int]]:
    """The keys of a group's triggering events (`_event_keys`) over all its rows, in log order."""
    return sorted({key for row in group_rows for key in _event_keys(row.history)})


def _number_events(group_rows: list[Summary]) -> None:
    """Number every row's rebalances by the group's triggering events in log order, so one event has one number
    in every row (`observed` answers only the recorded generations)."""
    number = {key: n for n, key in enumerate(_group_events(group_rows), 1)}
    for row in group_rows:
        for b, key in zip(row.history, _event_keys(row.history), strict=True):
            b.number = number[key]


def _summaries(collector: _Collector) -> list[Summary]:
    rows: list[Summary] = []
    for (group, strategy), by_gen in sorted(collector.rounds.items()):
        rounds = [by_gen[g] for g in sorted(by_gen)]
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
        _number_events(group_rows)
        group_rows.sort(key=lambda s: (s.paused, s.moves, s.max_imbalance, s.strategy))
        for rank, row in enumerate(group_rows, 1):
            row.rank = rank
        ranked.extend(group_rows)
    return ranked


def summarize(records: Iterable[dict]) -> list[Summary]:
    """One row per (group, strategy), grouped by group and ranked within it by disruption: fewest
    partitions paused first (consumption stopped), then fewest moved, then smallest worst imbalance."""
    collector = _Collector()
    for rec in records:
        collector.add(rec)
    return _summaries(collector)


def reason_pattern(reason: str) -> str:
    """A dead letter's reason with quoted names and numbers blanked, so one cause reads as one line
    ("leave of unknown member '…'"); field names stay."""
    return re.sub(r"\d+", "N", re.sub(r"(?<!field )'[^']*'", "'…'", reason))


def build(records: Iterable[dict], dead_letters: Iterable[dict] = (), *, events: int | None = None,
          conformance: Iterable[dict] = ()) -> Report:
    """Diff records (any order), dead letters and conformance records -> everything the page shows."""
    verdicts: dict[str, list[dict]] = defaultdict(list)
    for rec in conformance:
        verdicts[str(rec.get("group"))].append(rec)
    collector = _Collector()
    costs = CostCollector()
    for rec in records:
        collector.add(rec)
        costs.add(rec)
    reasons: dict[str, DeadLetterReason] = {}
    dead = 0
    for letter in dead_letters:
        dead += 1
        pattern = reason_pattern(str(letter.get("reason", "?")))
        if pattern in reasons:
            reasons[pattern].count += 1
        else:
            reasons[pattern] = DeadLetterReason(pattern, 1, letter)
        collector.sources.add((str(letter.get("group") or ""), _source_key(letter)))
    rows = _summaries(collector)
    by_group: dict[str, list[Summary]] = defaultdict(list)
    for row in rows:
        by_group[row.group].append(row)
    groups = []
    for group, group_rows in by_group.items():
        triggers = _group_events(group_rows)
        restarts = sorted(collector.restarts.get(group, {}).values(), key=lambda r: r.source)
        for r in restarts:
            r.after = bisect_left(triggers, (r.source, 0))
        protocols = collector.protocols.get(group, {})
        groups.append(GroupReport(
            group, group_rows, restarts, {row.strategy: collector.final((group, row.strategy)) for row in group_rows},
            sorted(verdicts.get(group, []), key=lambda r: r.get("generation") or 0),
            list(dict.fromkeys(protocols[source] for source in sorted(protocols))), costs.groups.get(group)))
    known = list(STRATEGY_COLOURS)  # Kafka's client strategies, then broker-side, then MetaQ, then others
    strategies = sorted({row.strategy for row in rows}, key=lambda s: (known.index(s) if s in known else len(known), s))
    return Report(groups, strategies, collector.count, dead,
                  sorted(reasons.values(), key=lambda r: -r.count), events, len(collector.sources))


# --- for terminals ---------------------------------------------------------------------------------------

def summary_text(summaries: list[Summary]) -> str:
    """`summarize`'s rows as a plain-text table per group."""
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


def strategy_lines(summaries: list[Summary]) -> str:
    """Per group, one line per strategy (ranked): moved, paused, gap to the fewest moves for its loads, and the worst
    imbalance — what `rebalance demo` ends with. The worst imbalance of a group with traffic is in msgs/s: the
    most and the least a member consumes after the rebalance where they were furthest apart (`worst_rate`);
    without traffic, the largest max - min partitions per member."""
    lines: list[str] = []
    width = max((len(row.strategy) for row in summaries), default=0)
    for group in dict.fromkeys(row.group for row in summaries):
        rows = [row for row in summaries if row.group == group]
        lines.append(f"{group} ({rows[0].rebalances} rebalances)")
        for row in rows:
            gap = "–" if row.gap is None else f"{row.gap:,}"
            worst = row.worst_rate
            imbalance = (f"worst imbalance {row.max_imbalance:>4,}" if worst is None else
                         f"worst msgs/s per member {worst[0]:>9,.0f} max / {worst[1]:>9,.0f} min")
            lines.append(f"  {row.strategy:<{width}}  moved {row.moves:>7,}  paused {row.paused:>7,}  "
                         f"gap to fewest moves {gap:>6}  {imbalance}")
    return "\n".join(lines)


# --- the page ------------------------------------------------------------------------------------------

_FEWEST = "fewest moves for its loads"
_PANELS = (  # (title, y axis title, series, kept in the compact layout of short histories)
    ("partitions moved (dotted: the fewest moves that could have produced the strategy's own loads)",
     "partitions", "moves", True),
    ("optimality gap: moved − fewest moves for its loads", "partitions", "gap", False),
    ("partitions paused", "partitions", "paused", True),
    ("load imbalance after the rebalance (max − min partitions per member)", "partitions", "imbalance", True),
    ("cumulative partitions moved", "partitions", "cumulative", False),
)
_TICKS = 15  # labelled rebalances on the x axis, at most
_LEGEND_ROW = 8  # legend entries per row, about
_STRIP_PX, _GAP_PX = 60, 100  # heights of the events strip and of the space under each row (its x labels and title)
_SHORT = 3  # eventful rebalances up to which a group gets the compact layout
_PLAIN_MEMBERS = 24  # members up to which the final loads table is shown open
_LISTED_MEMBERS = 100  # members per strategy whose partitions are listed
_LIST_CHARS = 240  # characters of one member's partition list

_COLUMNS = (  # (header, Summary attribute, tooltip)
    ("rank", "rank", "fewest partitions paused first, then fewest moved, then smallest max imbalance"),
    ("strategy", "strategy", ""),
    ("rebalances", "rebalances", "triggering events"),
    ("rounds", "rounds", "rebalance rounds, cooperative follow-ups counted"),
    ("moved", "moves", "partitions that left their previous owner, over all rebalances"),
    (_FEWEST, "min_moves", "per strategy: sum over its rounds of the fewest moves any assignment giving every "
     "member the load THIS strategy gave it could have made; strategies with different loads have different "
     "bounds, so compare gaps, not bounds"),
    ("gap", "gap", "moved − fewest moves for its loads: movement the strategy spent beyond what its loads needed"),
    ("paused", "paused", "partitions whose consumption stopped, over all rebalances"),
    ("max paused", "max_paused", "most partitions paused by one rebalance"),
    ("max imbalance", "max_imbalance", "largest max − min load after a rebalance"),
    ("final imbalance", "final_imbalance", "max − min load after the last rebalance"),
    ("unassigned at end", "final_unassigned", "partitions of subscribed topics nobody holds at the end"),
    ("Kafka errors", "kafka_errors", "rounds in which Kafka's own assignor throws (the group keeps its assignment)"),
)

# Fonts with CJK glyphs come before the generic family, so group and member names in Chinese, Japanese or
# Korean render where one of them is installed instead of as boxes.
_FONTS = ("system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', 'Noto Sans CJK JP', "
          "'Source Han Sans SC', 'PingFang SC', 'Hiragino Sans', 'Microsoft YaHei', 'WenQuanYi Micro Hei', "
          "sans-serif")
_STYLE = f"""
body {{ font-family: {_FONTS}; margin: 2em auto; max-width: 1300px; color: #222; padding: 0 1em; }}
h1 {{ font-size: 1.6em; }} h2 {{ margin-top: 2.2em; border-bottom: 1px solid #ddd; }}
h3 {{ font-size: 1.05em; margin: 1.4em 0 0.4em; color: #333; }}
table {{ border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.9em; }}
th, td {{ padding: 0.28em 0.65em; border-bottom: 1px solid #eee; text-align: right; vertical-align: top; }}
th {{ background: #f6f6f6; }} th[title] {{ cursor: help; }}
td.text, th.text {{ text-align: left; }}
td.strategy {{ text-align: left; font-weight: 600; white-space: nowrap; }}
td.member {{ text-align: left; font-family: ui-monospace, monospace; font-size: 0.92em; white-space: nowrap; }}
td.parts {{ text-align: left; font-family: ui-monospace, monospace; font-size: 0.9em; }}
td.example {{ text-align: left; font-family: ui-monospace, monospace; font-size: 0.88em; max-width: 48em;
              overflow-wrap: anywhere; }}
tr.best td {{ background: #eef8ee; }} tr.own td {{ border-top: 2px solid #555; border-bottom: 2px solid #555; }}
span.own {{ margin-left: 0.5em; padding: 0 0.35em; border-radius: 3px; background: #555; color: #fff;
            font-size: 0.78em; font-weight: 600; }} td.min {{ background: #eef3fb; }} td.max {{ background: #fbeeee; }}
.swatch {{ display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.4em; border-radius: 2px; }}
p.note {{ color: #555; max-width: 80em; }}
section.lane {{ margin: 0.4em 0 1.2em; }}
dl.inputs {{ display: grid; grid-template-columns: max-content auto; gap: 0.2em 1.2em; }}
dl.inputs dt {{ color: #555; }} dl.inputs dd {{ margin: 0; font-weight: 600; }}
.warn {{ color: #a33; }}
ul.index {{ columns: 2; }}
details > summary {{ cursor: pointer; color: #335; margin: 0.3em 0; }}
"""


def _colour(strategy: str, strategies: list[str]) -> str:
    """The strategy's palette colour; strategies outside the registry share the spares in page order."""
    if strategy in STRATEGY_COLOURS:
        return STRATEGY_COLOURS[strategy]
    unknown = [s for s in strategies if s not in STRATEGY_COLOURS]
    return _SPARE_COLOURS[unknown.index(strategy) % len(_SPARE_COLOURS)]


def _style_index(strategy: str, strategies: list[str]) -> int:
    known = list(STRATEGY_COLOURS)
    return known.index(strategy) if strategy in known else len(known) + strategies.index(strategy)


def _ts_text(ts: int | None) -> str:
    if ts is None:
        return "time unknown"
    return datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _esc(value: object) -> str:
    return html.escape(str(value))


def _swatch(strategy: str, strategies: list[str]) -> str:
    return f'<span class="swatch" style="background:{_colour(strategy, strategies)}"></span>{_esc(strategy)}'


def _eventful(rows: list[Summary]) -> set[int]:
    """Rebalance numbers in which some strategy assigned, moved or paused a partition or changed its
    imbalance (joins before any topic has metadata change nothing)."""
    shown = set()
    for row in rows:
        before = 0
        for b in row.history:
            if b.assigned or b.moves or b.paused or b.imbalance != before:
                shown.add(b.number)
            before = b.imbalance
    return shown


def _timeline(rows: list[Summary]) -> list[Rebalance]:
    """The group's triggering events in log order, one per rebalance number (as the first row that has it
    saw it: every strategy answers the same event)."""
    events: dict[int, Rebalance] = {}
    for row in rows:
        for b in row.history:
            events.setdefault(b.number, b)
    return [events[n] for n in sorted(events)]


def _x_axis(timeline: list[Rebalance]) -> dict:
    """The rebalance-number axis: at most `_TICKS` labelled rebalances, each with its event time (UTC; the date
    in the title when all fall on one day). Numbers, not times: a real group rebalances in bursts (a dozen
    generations in under a minute, then nothing for hours), which a time axis would draw as one smudge."""
    step = -(-len(timeline) // _TICKS)
    shown = timeline[::step]
    days = {datetime.fromtimestamp(b.event_ts / 1000, UTC).date() for b in shown if b.event_ts is not None}
    clock = "%H:%M:%S" if len(days) == 1 else "%m-%d %H:%M"
    text = [str(b.number) if b.event_ts is None
            else f"{b.number}<br>{datetime.fromtimestamp(b.event_ts / 1000, UTC).strftime(clock)}" for b in shown]
    title = ("rebalance # (the log has no event times)" if not days
             else f"rebalance # · event time UTC, {min(days)}" if len(days) == 1 else "rebalance # · event time UTC")
    return {"title_text": title, "tickmode": "array", "tickvals": [b.number for b in shown], "ticktext": text,
            "range": [0.3, len(timeline) + 0.7], "showticklabels": True, "title_standoff": 4}


def _series(history: list[Rebalance], timeline: list[Rebalance]) -> tuple[list[Rebalance | None], dict[str, list]]:
    """A row's rebalance and chart values at each of the group's events: None (a gap in its lines) where the row
    did not rebalance — `observed` at an event that was not a recorded generation."""
    at = {b.number: b for b in history}
    done = dict(zip(at, accumulate(b.moves for b in history), strict=True))
    points = [at.get(t.number) for t in timeline]

    def of(value: Callable[[Rebalance], int | None]) -> list[int | None]:
        return [None if b is None else value(b) for b in points]

    return points, {
        "moves": of(lambda b: b.moves),
        "fewest": of(lambda b: b.min_moves),
        "gap": of(lambda b: None if b.min_moves is None else b.moves - b.min_moves),
        "paused": of(lambda b: b.paused),
        "imbalance": of(lambda b: b.imbalance),
        "cumulative": of(lambda b: done[b.number]),
    }


def _figure(g: GroupReport, strategies: list[str]):
    """One figure per group: an events strip (rebalances, static restarts) over the metric panels, all on the
    rebalance-number axis (`_x_axis`; the hover tells each rebalance's cause and time); a legend entry toggles
    a strategy everywhere. Short histories get fewer, lower panels."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows = g.rows
    short = len(_eventful(rows)) <= _SHORT
    panels = [p for p in _PANELS if p[3] or not short]
    panel_px = 170 if short else 230
    plot_px = _STRIP_PX + len(panels) * (panel_px + _GAP_PX)
    fig = make_subplots(rows=len(panels) + 1, cols=1, shared_xaxes=True, vertical_spacing=_GAP_PX / plot_px,
                        row_heights=[_STRIP_PX] + [panel_px] * len(panels),
                        subplot_titles=[""] + [p[0] for p in panels])

    # the events strip: one mark per rebalance and one between two rebalances per static restart
    timeline = _timeline(rows)
    fig.add_trace(go.Scatter(
        x=[b.number for b in timeline], y=["rebalance"] * len(timeline), mode="markers",
        marker={"symbol": "line-ns-open", "size": 14, "color": "#444", "line": {"width": 2}},
        name="rebalance", showlegend=False,
        customdata=[[b.number, _esc(b.cause), _ts_text(b.event_ts)] for b in timeline],
        hovertemplate="rebalance %{customdata[0]}: %{customdata[1]}<br>%{customdata[2]}<extra></extra>",
    ), row=1, col=1)
    if g.restarts:
        fig.add_trace(go.Scatter(
            x=[r.after + 0.5 for r in g.restarts], y=["static restart"] * len(g.restarts), mode="markers",
            marker={"symbol": "diamond", "size": 10, "color": "#2a7"}, name="static restart", showlegend=False,
            customdata=[[_esc(r.member), _esc(r.replaced), _ts_text(r.event_ts)] for r in g.restarts],
            hovertemplate="static restart, no rebalance: %{customdata[0]}<br>took the place of %{customdata[1]}"
                          "<br>%{customdata[2]}<extra></extra>",
        ), row=1, col=1)
    for n, row in enumerate(rows):
        colour = _colour(row.strategy, strategies)
        style = _style_index(row.strategy, strategies)
        width = 1.2 + 1.8 * (len(rows) - 1 - n) / max(1, len(rows) - 1)
        points, series = _series(row.history, timeline)
        x = [b.number for b in timeline]
        info = [[t.number, "", "", 0, 0, 0] if b is None else
                [b.number, _esc(b.cause), _ts_text(b.event_ts), b.rounds, b.moves,
                 "n/a" if b.min_moves is None else b.min_moves] for t, b in zip(timeline, points, strict=True)]
        label = f"<b>{_esc(row.strategy)}</b>"
        head = (f"{label} · rebalance %{{customdata[0]}}: %{{customdata[1]}}<br>%{{customdata[2]}}<br>"
                "rounds %{customdata[3]} · moved %{customdata[4]} · fewest for its loads %{customdata[5]}<br>")
        for i, (title, _, key, _) in enumerate(panels, 2):
            name = title.split(" (")[0]
            fig.add_trace(go.Scatter(
                x=x, y=series[key], name=row.strategy, legendgroup=row.strategy, showlegend=i == 2,
                mode="lines+markers", customdata=info, hovertemplate=f"{head}{name}: %{{y}}<extra></extra>",
                line={"color": colour, "width": width, "dash": _DASHES[style % len(_DASHES)],
                      "shape": "hv" if key in ("imbalance", "cumulative") else "linear"},
                marker={"symbol": _SYMBOLS[style % len(_SYMBOLS)], "size": 6 + 1.5 * width, "color": colour,
                        "line": {"width": 1.5}},
            ), row=i, col=1)
        fig.add_trace(go.Scatter(
            x=x, y=series["fewest"], name=f"{row.strategy}: {_FEWEST}", legendgroup=row.strategy,
            showlegend=False, mode="lines", hoverinfo="skip", line={"color": colour, "width": 1, "dash": "dot"},
        ), row=2, col=1)
    fig.update_xaxes(**_x_axis(timeline))
    for i, (_, y_title, _, _) in enumerate(panels, 2):
        fig.update_yaxes(title_text=y_title, rangemode="tozero", row=i, col=1)
    fig.update_yaxes(title_text="", row=1, col=1, fixedrange=True)
    top = 36 + 26 * -(-len(rows) // _LEGEND_ROW)  # the legend's rows above the charts, below the mode bar
    fig.update_layout(height=plot_px + top + 40, margin={"l": 70, "r": 20, "t": top, "b": 40},
                      legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0}, template="plotly_white",
                      hovermode="closest", font={"family": _FONTS})
    return fig


def differences_from_observed(g: GroupReport, strategy: str) -> list[str]:
    """Where a strategy's row and final assignment differ from `observed`'s ("paused 9 against 6"); empty when
    replaying the strategy gives what the group did."""
    rows = {row.strategy: row for row in g.rows}
    mine, real = rows[strategy], rows[OBSERVED]
    out = [f"{header} {_cell(getattr(mine, attr))} against {_cell(getattr(real, attr))}"
           for header, attr, _ in _COLUMNS if attr not in ("rank", "strategy")
           and getattr(mine, attr) != getattr(real, attr)]
    if g.finals[strategy].holdings != g.finals[OBSERVED].holdings:
        out.append("a different final assignment")
    return out


def _cell(value: object) -> str:
    return "–" if value is None else str(value)


def _own_strategy_note(g: GroupReport) -> str:
    """For a captured group (it has an `observed` row): the strategy it ran — the protocol its recorded
    generations carry —, whether Kafka's assignor gives what it got (its conformance records), and whether
    replaying that strategy gives its `observed` row, compared here rather than assumed."""
    if OBSERVED not in g.finals or not g.protocols:
        return ""
    ran = ", then ".join(f"<b>{_esc(p)}</b>" for p in g.protocols)
    if len(g.protocols) > 1:
        return (f'<p class="note own-strategy" data-protocols="{_esc(",".join(g.protocols))}">This group ran {ran} '
                "(the protocols its recorded generations carry): no one strategy replays its whole history; the "
                "rows of those replayed here are marked.</p>")
    (protocol,) = g.protocols
    text = [f"This group ran {ran} (the protocol its recorded generations carry)."]
    if protocol not in STRATEGIES:
        text.append("It is not one of this library's strategies, so no row replays it.")
    else:
        counts, judged = conformance_counts(g.conformance), len(g.conformance)
        if not judged:
            text.append("No conformance records were read with these diff records, so whether the group got "
                        f"Kafka's {_esc(protocol)} result is not known here.")
        elif counts["conform"] == judged:
            every = "Its one recorded generation" if judged == 1 else f"All {judged} recorded generations"
            text.append(f"{every} got exactly what Kafka's {_esc(protocol)} computes from the recorded inputs.")
        else:
            unjudged = f", {counts['no verdict']} could not be judged" if counts["no verdict"] else ""
            text.append(f"{counts['differ']} of {judged} recorded generation(s) did not get Kafka's {_esc(protocol)} "
                        f"result{unjudged} (see the conformance lane below).")
    equal = ""
    if protocol not in g.finals:
        if protocol in STRATEGIES:
            text.append(f"{_esc(protocol)} is not among the strategies replayed here (<code>--strategies</code>).")
    else:
        differ = differences_from_observed(g, protocol)
        equal = f' data-equals-observed="{str(not differ).lower()}"'
        text.append(f"Its row, marked, equals <code>observed</code>: replaying {_esc(protocol)} gives what the "
                    "group did." if not differ else
                    f"Its row, marked, differs from <code>observed</code>: {_esc(', '.join(differ))}.")
    return (f'<p class="note own-strategy" data-protocols="{_esc(protocol)}"{equal}>' + " ".join(text) + "</p>")


def _ranking_lane(g: GroupReport, strategies: list[str]) -> str:
    """The group's strategies ranked by disruption; for a captured group, first what it really ran."""
    head = "".join(f'<th title="{_esc(tip)}">{_esc(h)}</th>' if tip else f"<th>{_esc(h)}</th>"
                   for h, _, tip in _COLUMNS)
    body = []
    for row in g.rows:
        own = row.strategy in g.protocols
        cells = []
        for _, attr, _ in _COLUMNS:
            value = getattr(row, attr)
            if attr == "strategy":
                tag = ('<span class="own" title="the strategy this group ran: its recorded protocol">'
                       "the group's</span>") if own else ""
                cells.append(f'<td class="strategy" data-col="strategy">{_swatch(value, strategies)}{tag}</td>')
            else:
                cells.append(f'<td data-col="{attr}">{_cell(value)}</td>')
        marks = " ".join(m for m, on in (("best", row.rank == 1), ("own", own)) if on)
        body.append(f'<tr class="{marks}" data-strategy="{_esc(row.strategy)}">' + "".join(cells) + "</tr>")
    return (_own_strategy_note(g) + f'<table class="summary" data-group="{_esc(g.group)}"><thead><tr>{head}'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table>')


def _static_lane(g: GroupReport, strategies: list[str]) -> str:
    if not g.restarts:
        return ""
    rebalances = max(row.rebalances for row in g.rows)
    rows = []
    for r in g.restarts:
        kept = sorted(set(r.kept.values()))
        kept_text = str(kept[0]) if len(kept) == 1 else f"{kept[0]}–{kept[-1]} (by strategy)"
        rows.append(f'<tr class="restart"><td class="text">{_esc(_ts_text(r.event_ts))}</td>'
                    f'<td class="member">{_esc(r.replaced)}</td><td class="member">{_esc(r.member)}</td>'
                    f'<td data-col="kept">{kept_text}</td></tr>')
    return (
        f'<h3>Static membership</h3><p class="note">{len(g.restarts)} static restart(s): a member rejoined with '
        "the <code>group.instance.id</code> of a member in the group and took its place and partitions — no "
        f"rebalance, nothing paused. The {rebalances} rebalance(s) above do not include them; with dynamic "
        "membership each restart would have been a leave and a join, i.e. two rebalances per strategy.</p>"
        f'<table class="static" data-group="{_esc(g.group)}"><thead><tr><th class="text">time</th>'
        '<th class="text">old member id</th><th class="text">new member id</th><th>partitions taken over</th>'
        f'</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _charts_lane(g: GroupReport, strategies: list[str]) -> str:
    return _figure(g, strategies).to_html(full_html=False, include_plotlyjs=False, div_id=f"fig-{_slug(g.group)}",
                                          config={"displaylogo": False, "responsive": True})


def _ranges(partitions: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0–2, 5, 7–8"."""
    out: list[str] = []
    start = prev = partitions[0]
    for p in [*partitions[1:], None]:
        if p is not None and p == prev + 1:
            prev = p
            continue
        out.append(str(start) if start == prev else f"{start}–{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(out)


def _holding_text(topics: dict[str, list[int]]) -> str:
    text = "; ".join(f"{topic} {_ranges(parts)}" for topic, parts in topics.items())
    return text if len(text) <= _LIST_CHARS else text[:_LIST_CHARS].rsplit(" ", 1)[0] + " …"


def _final_lane(g: GroupReport, strategies: list[str]) -> str:
    order = [row.strategy for row in g.rows]
    finals = [g.finals[s] for s in order]
    loads = [f.loads for f in finals]
    members = sorted({m for f in finals for m in f.holdings})
    head = "".join(f'<th class="text">{_swatch(s, strategies)}</th>' for s in order)
    body = []
    for m in members:
        cells = []
        for s, load in zip(order, loads, strict=True):
            n = load.get(m, 0)
            low, high = min(load.values(), default=0), max(load.values(), default=0)
            mark = "" if low == high else " min" if n == low else " max" if n == high else ""
            cells.append(f'<td class="load{mark}" data-strategy="{_esc(s)}">{n}</td>')
        body.append(f'<tr data-member="{_esc(m)}"><td class="member">{_esc(m)}</td>{"".join(cells)}</tr>')
    idle = [f.members - len(f.holdings) for f in finals]
    totals = "".join(f'<td data-strategy="{_esc(s)}">{sum(load.values())} in {len(load)}'
                     f'{f" (+{n} with none)" if n > 0 else ""}</td>'
                     for s, load, n in zip(order, loads, idle, strict=True))
    table = (f'<table class="final" data-group="{_esc(g.group)}"><thead><tr><th class="text">member</th>{head}</tr>'
             f'</thead><tbody>{"".join(body)}</tbody><tfoot><tr><td class="text">partitions held, members holding'
             f"</td>{totals}</tr></tfoot></table>")
    if len(members) > _PLAIN_MEMBERS:
        table = f"<details><summary>loads of all {len(members)} members</summary>{table}</details>"
    lists = []
    for n, f in enumerate(finals):
        listed = list(f.holdings.items())[:_LISTED_MEMBERS]
        rows = "".join(f'<tr data-member="{_esc(m)}" data-strategy="{_esc(f.strategy)}"><td class="member">'
                       f'{_esc(m)}</td><td>{sum(len(p) for p in topics.values())}</td>'
                       f'<td class="parts">{_esc(_holding_text(topics))}</td></tr>' for m, topics in listed)
        more = len(f.holdings) - len(listed)
        note = f"<p class='note'>{more} more member(s) not listed.</p>" if more > 0 else ""
        lists.append(f"<details{' open' if n == 0 and len(members) <= _PLAIN_MEMBERS else ''}><summary>"
                     f"{_esc(f.strategy)}: who holds what</summary><table class='holdings'><thead><tr>"
                     "<th class='text'>member</th><th>load</th><th class='text'>partitions</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>{note}</details>")
    return ("<h3>Final assignment per strategy</h3><p class='note'>Partitions per member after each strategy's "
            "last rebalance (its <code>changes</code> replayed); blue: the least loaded, red: the most.</p>"
            + table + "".join(lists))


def conformance_counts(records: list[dict]) -> dict[str, int]:
    """Generations that got Kafka's assignment, that did not, and those without a verdict."""
    return {"conform": sum(r.get("conforms") is True for r in records),
            "differ": sum(r.get("conforms") is False for r in records),
            "no verdict": sum(r.get("conforms") is None for r in records)}


def _conformance_lane(g: GroupReport, strategies: list[str]) -> str:
    """What the real group got against what Kafka's Java assignor computes from the same recorded inputs."""
    if not g.conformance:
        return ""
    counts = conformance_counts(g.conformance)
    rows = []
    for r in g.conformance:
        if r.get("conforms") is True:
            continue
        if r.get("conforms") is None:
            detail = _esc(r.get("reason", ""))
        elif r.get("error"):
            detail = "Kafka's assignor throws: " + _esc(r["error"])
        else:
            detail = "; ".join(
                f"{_esc(member)}: got {_esc(_holding_text(d.get('observed_only', {})) or '–')}, Kafka: "
                f"{_esc(_holding_text(d.get('expected_only', {})) or '–')}"
                for member, d in sorted(r.get("differences", {}).items()))
        verdict = "no verdict" if r.get("conforms") is None else "differs"
        rows.append(f'<tr class="verdict"><td>{_esc(r.get("generation"))}</td><td class="text">'
                    f'{_esc(r.get("protocol"))}</td><td class="text">{verdict}</td>'
                    f'<td data-col="observed_moves">{_esc(r.get("observed_moves", "–"))}</td>'
                    f'<td data-col="expected_moves">{_esc(r.get("expected_moves", "–"))}</td>'
                    f'<td data-col="min_moves">{_esc(r.get("min_moves", "–"))}</td>'
                    f'<td class="text">{detail}</td></tr>')
    table = ('<table class="conformance" data-group="' + _esc(g.group) + '"><thead><tr><th>generation</th>'
             '<th class="text">protocol</th><th class="text">verdict</th><th>moved (observed)</th>'
             '<th>moved (Kafka)</th><th>fewest possible</th><th class="text">partitions that differ</th></tr>'
             f'</thead><tbody>{"".join(rows)}</tbody></table>') if rows else ""
    return ('<h3>Conformance with Kafka\'s assignor</h3><p class="note" data-counts="'
            f'{counts["conform"]},{counts["differ"]},{counts["no verdict"]}">Of {len(g.conformance)} recorded '
            f'generation(s), {counts["conform"]} got exactly what Kafka\'s Java client computes from the recorded '
            f'inputs, {counts["differ"]} did not, {counts["no verdict"]} could not be judged. The '
            "<code>observed</code> row above is what the group really got.</p>" + table)


def _seconds(ms: Fraction) -> str:
    return f"{float(ms / 1000):,.1f}"


def _stop_times(values: set[Fraction], what: str) -> str:
    if not values:
        return f"{what}: not seen (no round of it paused anything)"
    low, high = min(values), max(values)
    if low == high:
        return f"{what}: {float(low):,g} ms per paused partition"
    return f"{what}: {float(low):,g} to {float(high):,g} ms per paused partition (the captured durations)"


def _cost_lane(g: GroupReport, strategies: list[str]) -> str:
    """Time stopped and lag added per strategy (docs/cost.md), the move to the consumer protocol in one line,
    and the timing the records were computed with (read back from them, `whatif.costs`)."""
    cost = g.cost
    if cost is None or not cost.strategies:
        return ""
    rows = []
    for name, row in cost.strategies.items():
        lag = row.lag_added
        rows.append(f'<tr data-strategy="{_esc(name)}"><td class="strategy">{_swatch(name, strategies)}</td>'
                    f'<td data-col="partition_seconds">{"–" if row.missing else _seconds(row.stopped_ms)}</td>'
                    f'<td data-col="lag_added">{"–" if lag is None else f"{lag:,.0f}"}</td>'
                    f'<td data-col="rounds">{row.rounds}</td></tr>')
    notes = []
    if any(row.missing for row in cost.strategies.values()):
        notes.append("Some records carry no <code>stopped_ms</code> (written before the cost model): replay the "
                     "log again to see their cost.")
    base, target = cost.baseline(), cost.target()
    if target is None:
        move = ("No consumer-protocol strategy was replayed: replay with <code>--strategies</code> including "
                "<code>uniform</code> to see what moving to <code>group.protocol=consumer</code> would change.")
    elif base is None:
        move = "Only consumer-protocol strategies were replayed: there is no classic strategy to weigh them against."
    else:
        name, why = base
        mine, theirs = cost.strategies[target], cost.strategies[name]
        move = (f"Moving to <code>group.protocol=consumer</code> ({_esc(target)}) would have stopped "
                f"<strong>{_seconds(mine.stopped_ms)}</strong> partition-seconds instead of "
                f"<strong>{_seconds(theirs.stopped_ms)}</strong> ({_esc(name)}: {_esc(why)})")
        if mine.lag_added is not None and theirs.lag_added is not None:
            move += f", and added {mine.lag_added:,.0f} messages of lag instead of {theirs.lag_added:,.0f}"
        move += "."
    timing = (f"{_stop_times(cost.classic_ms, 'classic rebalance (rebalance_ms)')}; "
              f"{_stop_times(cost.consumer_ms, 'consumer protocol (heartbeat_ms / 2)')}. Change them with "
              "<code>--timing rebalance_ms=N,heartbeat_ms=N</code> on <code>rebalance replay</code> or "
              "<code>serve</code> (<code>rebalance_ms=observed</code>: each group's captured durations; defaults "
              "3000 and 5000 ms); the model and where it is wrong: docs/cost.md.")
    return ('<h3>Time stopped and lag added</h3>'
            f'<p class="migration" data-group="{_esc(g.group)}">{move}</p>'
            f'<table class="cost" data-group="{_esc(g.group)}"><thead><tr><th class="text">strategy</th>'
            '<th title="sum of stopped_ms / 1000: each paused partition times how long it stopped">'
            'partition-seconds stopped</th><th title="messages that piled up meanwhile (groups with traffic)">'
            'lag added (messages)</th><th>rounds</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>"
            + "".join(f'<p class="note">{n}</p>' for n in notes)
            + f'<p class="note timing">Timing: {timing}</p>')  # numbers and fixed text only


# --- the load lane: msgs/s per member (groups with traffic, contract §7) ----------------------------------

@dataclass(frozen=True)
class LoadSummary:
    """One strategy's load in a group: after its last rebalance with traffic, and the worst over all of them."""

    strategy: str
    final: Load
    final_number: int  # the rebalance it is after
    worst_over_even: float | None  # the largest hottest ÷ even share after any rebalance
    worst_hottest: float  # the most msgs/s one member had after any rebalance


def loaded(history: list[Rebalance]) -> list[tuple[Rebalance, Load]]:
    """The rebalances after which the group had traffic, with their load."""
    return [(b, b.load) for b in history if b.load is not None]


def load_summary(row: Summary) -> LoadSummary | None:
    """None when no rebalance of the strategy carried msgs/s (the group has no traffic)."""
    points = loaded(row.history)
    if not points:
        return None
    ratios = [r for _, load in points if (r := load.over_even) is not None]
    return LoadSummary(row.strategy, points[-1][1], points[-1][0].number, max(ratios, default=None),
                       max(load.hottest for _, load in points))


def growths(g: GroupReport) -> list[tuple[Rebalance, str, float]]:
    """(rebalance, topic, share of its key weight that changed partition) for each growth of a topic with keyed
    traffic; the partitioner moves the keys whatever the strategy, so the first strategy's records say it."""
    return [(b, topic, share) for b in g.rows[0].history for topic, share in sorted(b.keys_moved.items())]


def _msgs(value: float) -> str:
    return f"{value:,.1f}"


def _times(value: float | None) -> str:
    return "–" if value is None else "∞" if value == float("inf") else f"{value:.2f}×"


def _load_lane(g: GroupReport, strategies: list[str]) -> str:
    summaries = [s for s in map(load_summary, g.rows) if s is not None]
    if not summaries:
        return ""
    columns = (("group msgs/s", "total", "messages per second into the topics the group's members subscribe to"),
               ("even share", "even", "msgs/s per member, were they spread evenly: total ÷ members"),
               ("hottest member", "hottest", "msgs/s of the most loaded member: the sum over the partitions it holds"),
               ("least loaded", "least", "msgs/s of the least loaded member (0: a member without traffic)"),
               ("hottest ÷ even share", "over_even", "rate imbalance: how many even shares the hottest member carries"),
               ("hottest ÷ least", "over_least", "∞: some member holds no traffic"),
               ("worst hottest ÷ even", "worst_over_even", "the largest hottest ÷ even share after any rebalance"),
               ("worst hottest", "worst_hottest", "the most msgs/s one member had after any rebalance"))
    head = "".join(f'<th title="{_esc(tip)}">{_esc(h)}</th>' for h, _, tip in columns)
    body = []
    for s in summaries:
        f = s.final
        cells = {"total": _msgs(f.total), "even": _msgs(f.even_share), "hottest": _msgs(f.hottest),
                 "least": _msgs(f.least), "over_even": _times(f.over_even), "over_least": _times(f.hottest_over_least),
                 "worst_over_even": _times(s.worst_over_even), "worst_hottest": _msgs(s.worst_hottest)}
        body.append(f'<tr data-strategy="{_esc(s.strategy)}"><td class="strategy">{_swatch(s.strategy, strategies)}'
                    "</td>" + "".join(f'<td data-col="{key}">{cells[key]}</td>' for _, key, _ in columns) + "</tr>")
    table = (f'<table class="load" data-group="{_esc(g.group)}"><thead><tr><th class="text">strategy</th>{head}'
             f'</tr></thead><tbody>{"".join(body)}</tbody></table>')
    grown = growths(g)
    moved = "".join(
        f'<tr class="growth"><td>{b.number}</td><td class="text">{_esc(_ts_text(b.event_ts))}</td>'
        f'<td class="text">{_esc(b.cause)}</td><td class="text">{_esc(topic)}</td>'
        f'<td data-col="keys_moved">{share:.1%}</td></tr>' for b, topic, share in grown)
    moved_table = ('<p class="note">A topic with keyed traffic grew: the producer\'s partitioner sends these shares '
                   "of its key weight to another partition from then on, so per-key ordering breaks for those keys "
                   "while the group catches up (whatever the strategy).</p><table class='keys-moved' data-group='"
                   f"{_esc(g.group)}'><thead><tr><th>rebalance</th><th class='text'>time</th><th class='text'>cause"
                   "</th><th class='text'>topic</th><th>key weight moved</th></tr></thead><tbody>"
                   f"{moved}</tbody></table>") if grown else ""
    figure = _load_figure(g, strategies).to_html(full_html=False, include_plotlyjs=False,
                                                 div_id=f"load-{_slug(g.group)}",
                                                 config={"displaylogo": False, "responsive": True})
    return ("<h3>Load in messages per second</h3><p class='note'>From the group's traffic: every strategy balances "
            "partition counts, not messages, so a member holding the hot partitions carries more than its share. "
            f"After rebalance {summaries[0].final_number} (the last with traffic); the even share is msgs/s ÷ "
            "members. Which member is hottest differs by strategy; the diff records give its msgs/s, not its "
            "name.</p>" + table + moved_table + figure)


def _load_figure(g: GroupReport, strategies: list[str]):
    """Per rebalance and strategy, a bar from the least loaded to the hottest member's msgs/s (every member is
    in that span; a grey line: the even share); below, the hottest member in even shares. Bars side by side per
    rebalance keep strategies that agree apart. x: rebalance number, its cause and time in the hover."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16, row_heights=[1.4, 1.0],
                        subplot_titles=["msgs/s per member: a bar from the least loaded to the hottest; grey line: "
                                        "the even share", "rate imbalance: the hottest member's msgs/s in even shares"])
    for b, load in loaded(g.rows[0].history):  # the same for every strategy: total ÷ members
        fig.add_shape(type="line", x0=b.number - 0.42, x1=b.number + 0.42, y0=load.even_share, y1=load.even_share,
                      line={"color": "#666", "width": 2}, row=1, col=1)
    for row in g.rows:
        points = loaded(row.history)
        if not points:
            continue
        colour = _colour(row.strategy, strategies)
        x = [b.number for b, _ in points]
        loads = [load for _, load in points]
        info = [[_esc(b.cause), _ts_text(b.event_ts), _msgs(load.hottest), _msgs(load.least), _msgs(load.even_share),
                 _times(load.over_even)] for b, load in points]
        hover = (f"<b>{_esc(row.strategy)}</b> · rebalance %{{x}}: %{{customdata[0]}}<br>%{{customdata[1]}}<br>"
                 "hottest member %{customdata[2]} msgs/s · least loaded %{customdata[3]} · even share "
                 "%{customdata[4]}<br>hottest ÷ even share %{customdata[5]}<extra></extra>")
        common = {"name": row.strategy, "legendgroup": row.strategy, "offsetgroup": row.strategy, "customdata": info,
                  "hovertemplate": hover, "marker": {"color": colour, "line": {"color": colour, "width": 1}}}
        fig.add_trace(go.Bar(x=x, y=[load.hottest - load.least for load in loads], base=[load.least for load in loads],
                             **common), row=1, col=1)
        symbol = _SYMBOLS[_style_index(row.strategy, strategies) % len(_SYMBOLS)].removesuffix("-open")
        fig.add_trace(go.Scatter(  # the hottest member, seen also where all members carry the same
            x=x, y=[load.hottest for load in loads], mode="markers", showlegend=False,
            **common | {"marker": {"color": colour, "symbol": symbol, "size": 9, "line": {"color": "#fff",
                                                                                      "width": 1}}}), row=1, col=1)
        fig.add_trace(go.Bar(x=x, y=[load.over_even or 0 for load in loads], showlegend=False, **common), row=2, col=1)
    for b, topic, share in growths(g):
        fig.add_vline(x=b.number - 0.5, line={"color": "#a33", "dash": "dash", "width": 1})
        fig.add_annotation(x=b.number - 0.5, y=1.0, yref="y domain", text=f"{_esc(topic)} grew: {share:.0%} of its "
                           "key weight moved partition", showarrow=False, xanchor="left", yanchor="top",
                           font={"color": "#a33", "size": 11}, bgcolor="rgba(255,255,255,0.85)")
    fig.add_hline(y=1, line={"color": "#777", "width": 1, "dash": "dot"}, row=2, col=1)
    fig.update_xaxes(title_text="rebalance #", dtick=1 if len(g.rows[0].history) <= 30 else None, title_standoff=4,
                     showticklabels=True)
    top = max((load.hottest for row in g.rows for _, load in loaded(row.history)), default=0.0)
    fig.update_yaxes(title_text="msgs/s", range=[0, top * 1.15 or 1], row=1, col=1)  # room for the markers on top
    fig.update_yaxes(title_text="× even share", rangemode="tozero", row=2, col=1)
    fig.update_layout(height=600, margin={"l": 70, "r": 20, "t": 70, "b": 40}, template="plotly_white",
                      barmode="group", scattermode="group", bargap=0.25, bargroupgap=0.05, hovermode="closest",
                      font={"family": _FONTS},
                      legend={"orientation": "h", "y": 1.08, "yanchor": "bottom", "x": 0})
    return fig


# The lanes of a group's section, in page order: each returns its HTML ("" when it has nothing to say).
GROUP_LANES: tuple[Callable[[GroupReport, list[str]], str], ...] = (
    _ranking_lane, _cost_lane, _conformance_lane, _static_lane, _charts_lane, _load_lane, _final_lane,
)


def _inputs_lane(report: Report) -> str:
    events = (f"{report.events:,}" if report.events is not None
              else f"at least {report.sources:,} (those that produced a record)")
    dead = f"{report.dead_letters:,}"
    if report.dead_letters and report.events:
        dead += f" ({report.dead_letters / report.events:.1%} of the events)"
    restarts = sum(len(g.restarts) for g in report.groups)
    items = [("events read", events), ("diff records", f"{report.diff_records:,}"),
             ("dead letters (rejected events)", dead), ("groups", f"{len(report.groups):,}"),
             ("static restarts (no rebalance)", f"{restarts:,}"), ("strategies", ", ".join(report.strategies))]
    body = "".join(f"<dt>{_esc(k)}</dt><dd{' class=warn' if k.startswith('dead') and report.dead_letters else ''}>"
                   f"{_esc(v)}</dd>" for k, v in items)
    return f'<section class="lane inputs"><h2>What was read</h2><dl class="inputs">{body}</dl></section>'


def _dead_letter_lane(report: Report) -> str:
    if not report.reasons:
        return ('<section class="lane dead-letters"><p class="note">No dead letters: every event was valid.</p>'
                "</section>")
    rows = []
    for r in report.reasons:
        first = r.first
        src = first.get("source") or {}
        where = ", ".join(f"{k} {v}" for k, v in src.items())
        original = str(first.get("original", ""))
        rows.append(f'<tr class="reason"><td class="text">{_esc(r.reason)}</td><td data-col="count">{r.count}</td>'
                    f'<td class="text">{_esc(first.get("group") or "–")}</td><td class="text">{_esc(where)}</td>'
                    f'<td class="example">{_esc(first.get("reason", ""))}<br>{_esc(original[:300])}'
                    f'{"…" if len(original) > 300 else ""}</td></tr>')
    return ('<section class="lane dead-letters"><h3>Dead letters by reason</h3><p class="note">Rejected events '
            "changed nothing; the first of each reason is shown (all are in the dead-letter output).</p>"
            '<table class="dead-letters"><thead><tr><th class="text">reason</th><th>count</th>'
            '<th class="text">first: group</th><th class="text">source</th><th class="text">first: reason and '
            f'event</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def _strategies_lane(report: Report) -> str:
    rows = "".join(
        f'<tr data-strategy="{_esc(s)}"><td class="strategy">{_swatch(s, report.strategies)}</td>'
        f'<td class="text">{_esc(info.kind)}</td><td class="text">{_esc(info.pauses)}</td>'
        f'<td class="text"><code>{_esc(info.enable)}</code></td></tr>'
        for s in report.strategies for info in [STRATEGY_INFO.get(s, _UNKNOWN_STRATEGY)]
    )
    return ('<section class="lane strategies"><h3>The strategies</h3><table class="strategies"><thead><tr>'
            '<th class="text">strategy</th><th class="text">what it is</th><th class="text">a rebalance pauses</th>'
            f'<th class="text">how to enable it</th></tr></thead><tbody>{rows}</tbody></table></section>')


def _reading_lane(report: Report) -> str:
    return (
        '<section class="lane reading"><p class="note">A rebalance is one triggering event (a cooperative revoke '
        "round and its follow-ups count as one rebalance of several rounds). Strategies are ranked per group by "
        "disruption: fewest partitions paused, then fewest moved, then smallest worst imbalance. "
        f"<em>{_FEWEST.capitalize()}</em> is a bound <em>per strategy</em>: per round, the fewest moves any "
        "assignment giving every member the load this strategy gave it (within its subscriptions) could have "
        "made, computed exactly; strategies that balance differently have different bounds, so compare their "
        "<em>gaps</em> (movement spent beyond their own bound), not the bounds. A best strategy in this report "
        "may need a different protocol or client (see the table above).</p></section>"
    )


# The lanes of the page's header, in page order.
HEADER_LANES: tuple[Callable[[Report], str], ...] = (_inputs_lane, _dead_letter_lane, _strategies_lane, _reading_lane)


def _slug(group: str) -> str:
    """An HTML id for a group's figure: readable, and unique even when names differ only in other characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", group) + f"-{zlib.crc32(group.encode()):08x}"


def render(report: Report) -> str:
    """The whole page (plotly.js embedded once, in the head)."""
    from plotly.offline import get_plotlyjs

    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>rebalance-replay: what-if report</title>",
        f"<style>{_STYLE}</style>",
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>",
        f"<script>{get_plotlyjs()}</script></head><body>",
        "<h1>What-if report: what each strategy did to each group</h1>",
    ]
    parts.extend(lane(report) for lane in HEADER_LANES)
    if not report.groups:
        parts.append("<p>No diff records: nothing rebalanced.</p>")
    else:
        parts.append("<h2>Groups</h2><ul class='index'>" + "".join(
            f"<li><a href='#g{i}'>{_esc(g.group)}</a> — {g.rows[0].rebalances} rebalance(s), least disruptive: "
            f"{_esc(g.rows[0].strategy)}</li>" for i, g in enumerate(report.groups)) + "</ul>")
    for i, g in enumerate(report.groups):
        parts.append(f"<section class='group' id='g{i}' data-group='{_esc(g.group)}'><h2>{_esc(g.group)}</h2>")
        lanes = (lane(g, report.strategies) for lane in GROUP_LANES)
        parts.extend(f"<section class='lane'>{text}</section>" for text in lanes if text)
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(records: Iterable[dict], out_path: str | Path, *, dead_letters: Iterable[dict] = (),
                 events: int | None = None, conformance: Iterable[dict] = ()) -> Report:
    """Build the report from diff records (and dead letters, conformance records) and write the
    self-contained page to `out_path`."""
    report = build(records, dead_letters, events=events, conformance=conformance)
    out = Path(out_path)
    if out.parent != Path():
        out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(report), encoding="utf-8")
    return report

