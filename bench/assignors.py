"""Assignor benchmark: our strategies and kafka-python's, side by side on the same groups, in one run.

Every timing is end to end through each library's public call: `assignors.assign(...)` (validation,
flat layout, result tuples) against kafka-python's `Assignor.assign(cluster, members)`. "After leave"
scenarios first run a fresh round (not timed) and then time the round in which members have left, with
every survivor reporting what it owned (generation 1), as a real rebalance does. Each cell is timed
warm (the process has seen the topic layout before and gets the previous result back as `owned`: the
steady state of a service or a replay loop) and cold (`assignors.pairs.clear()` first: the first call
of a process, or `owned` read from JSON); see `assignors/pairs.py`.

Scenarios follow Kafka's own large tests: 1M partitions (500 topics x 2000) with 2000 members fresh
and after one member leaves, with every member on every topic and with each on a random half of them (the
sticky engine's general build); 100 topics x 100 partitions with 1000 members each on a random half of
the topics, fresh and after 10% leave; and 10k partitions x 100 members, the size where kafka-python
is still usable. kafka-python is skipped where one of its runs takes minutes: everywhere on the 1M
groups, and for sticky/cooperative-sticky on the 1000-member groups (100 members already take > 3 min).

    python -m bench.assignors                 # full run (minutes; the 1M groups dominate)
    python -m bench.assignors --quick         # tiny sizes, seconds (what the smoke test runs)
    python -m bench.assignors --only range --only roundrobin --scenario 1M
    python -m bench.assignors --plot bench.html   # also a bar chart (offline HTML page)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import resource
import sys
import time
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

if __package__ in (None, ""):  # run as `python bench/assignors.py`: this file must not shadow the package
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

from assignors import STRATEGIES, Member, assign, pairs

Result = dict[str, list[tuple[str, int]]]


@dataclass(frozen=True, order=True)
class Timing:
    """CPU seconds (what the ratios use: robust when other work shares the cores) and wall seconds."""

    cpu: float
    wall: float


def timed(call: Callable[[], object]) -> tuple[Timing, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return Timing(time.process_time() - cpu, time.perf_counter() - wall), out


@dataclass
class Scenario:
    name: str
    topics: dict[str, int]
    members: dict[str, Member]
    leave: list[str]  # members gone before the timed round; empty = a fresh group
    peers: frozenset[str]  # strategies kafka-python also runs here (it takes minutes on the others)
    racks: dict[str, list[list[str]]] | None = None  # kafka-python has no rack awareness

    @property
    def partitions(self) -> int:
        return sum(self.topics.values())


def uniform_group(num_topics: int, partitions: int, num_members: int) -> tuple[dict, dict]:
    topics = {f"topic-{t}": partitions for t in range(num_topics)}
    names = list(topics)
    return topics, {f"consumer-{m:05d}": Member(topics=names) for m in range(num_members)}


def halves_group(num_topics: int, partitions: int, num_members: int, seed: int = 42) -> tuple[dict, dict]:
    rng = random.Random(seed)
    topics = {f"topic-{t}": partitions for t in range(num_topics)}
    names = list(topics)
    members = {
        f"consumer-{m:05d}": Member(topics=sorted(rng.sample(names, num_topics // 2))) for m in range(num_members)
    }
    return topics, members


def rack_layout(topics: dict[str, int], num_racks: int = 3, replication: int = 2) -> dict[str, list[list[str]]]:
    """Replicas of partition p on racks p, p+1, ... (mod num_racks): every partition misses some rack."""
    racks = [f"rack-{r}" for r in range(num_racks)]
    return {t: [[racks[(p + j) % num_racks] for j in range(replication)] for p in range(n)] for t, n in topics.items()}


ALL_PEERS = frozenset({"range", "roundrobin", "sticky", "cooperative-sticky"})
EAGER_PEERS = frozenset({"range", "roundrobin"})  # kafka-python's sticky needs > 3 min for 100 members here


def scenarios(quick: bool) -> list[Scenario]:
    big = (20, 50, 20) if quick else (500, 2000, 2000)
    halves = (10, 10, 40) if quick else (100, 100, 1000)
    small = (4, 25, 10) if quick else (100, 100, 100)
    out = []
    topics, members = uniform_group(*small)
    label = f"{sum(topics.values()) // 1000}k" if not quick else str(sum(topics.values()))
    out.append(Scenario(f"{label} x {len(members)} fresh", topics, members, [], ALL_PEERS))
    out.append(Scenario(f"{label} x {len(members)} one leaves", topics, members, [next(iter(members))], ALL_PEERS))
    racked = {m: Member(topics=v.topics, rack=f"rack-{i % 3}") for i, (m, v) in enumerate(members.items())}
    out.append(Scenario(f"{label} x {len(members)} racks", topics, racked, [], frozenset(), rack_layout(topics)))
    topics, members = halves_group(*halves)
    gone = list(members)[::10]
    peers = ALL_PEERS if quick else EAGER_PEERS
    name = f"halves {len(topics)}x{halves[1]} x {len(members)}"
    out.append(Scenario(f"{name} fresh", topics, members, [], peers))
    out.append(Scenario(f"{name} 10% leave", topics, members, gone, peers))
    topics, members = halves_group(*big)  # the general build at scale: subscriptions differ
    name = f"halves {len(topics)}x{big[1]} x {len(members)}"
    out.append(Scenario(f"{name} fresh", topics, members, [], frozenset()))
    out.append(Scenario(f"{name} one leaves", topics, members, [next(iter(members))], frozenset()))
    topics, members = uniform_group(*big)
    label = "1M" if not quick else str(sum(topics.values()))
    peers = ALL_PEERS if quick else frozenset()
    out.append(Scenario(f"{label} x {len(members)} fresh", topics, members, [], peers))
    out.append(Scenario(f"{label} x {len(members)} one leaves", topics, members, [next(iter(members))], peers))
    return out


# --- kafka-python ------------------------------------------------------------------------------------------------

PEERS = {
    "range": ("kafka.coordinator.assignors.range", "RangePartitionAssignor"),
    "roundrobin": ("kafka.coordinator.assignors.roundrobin", "RoundRobinPartitionAssignor"),
    "sticky": ("kafka.coordinator.assignors.sticky.sticky_assignor", "StickyPartitionAssignor"),
    "cooperative-sticky": ("kafka.coordinator.assignors.cooperative_sticky", "CooperativeStickyAssignor"),
}
JoinMember = namedtuple("JoinMember", "member_id group_instance_id metadata")


class PeerCluster:
    """The two calls kafka-python's assignors make on `ClusterMetadata`."""

    def __init__(self, topics: dict[str, int]) -> None:
        self._partitions = {t: set(range(n)) for t, n in topics.items() if n > 0}

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)


def peer_runner(strategy: str) -> Callable[[dict, dict], Result] | None:
    if strategy not in PEERS:
        return None
    module, cls = PEERS[strategy]
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as Subscription

    assignor = getattr(importlib.import_module(module), cls)()

    def metadata(m: Member):
        by_topic: dict[str, list[int]] = {}
        for t, p in m.owned:
            by_topic.setdefault(t, []).append(p)
        if strategy == "cooperative-sticky":
            owned = [Subscription.TopicPartition(topic=t, partitions=sorted(ps)) for t, ps in by_topic.items()]
            return Subscription(
                version=2, topics=sorted(m.topics), user_data=b"", owned_partitions=owned, generation_id=m.generation
            )
        if strategy == "sticky" and m.owned:
            from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

            return Subscription(
                version=0, topics=list(m.topics), user_data=StickyAssignorUserData(list(by_topic.items()), m.generation)
            )
        return Subscription(version=0, topics=list(m.topics), user_data=b"")

    def run(topics: dict, members: dict) -> tuple[Timing, Result]:
        cluster = PeerCluster(topics)
        join = [JoinMember(mid, m.instance_id, metadata(m)) for mid, m in members.items()]
        timing, raw = timed(partial(assignor.assign, cluster, join))
        return timing, {mid: sorted((tp.topic, tp.partition) for tp in raw[mid].partitions()) for mid in members}

    return run


# --- running --------------------------------------------------------------------------------------------------


def survivors(members: dict[str, Member], leave: list[str], previous: Result) -> dict[str, Member]:
    gone = set(leave)
    return {
        mid: Member(topics=m.topics, owned=previous[mid], generation=1, rack=m.rack, instance_id=m.instance_id)
        for mid, m in members.items()
        if mid not in gone
    }


def ours(strategy: str, sc: Scenario, cold: bool = False) -> tuple[Timing, Result]:
    """Warm: the process has seen this topic layout and a fed-back `owned` is the previous result's lists
    (`assignors.pairs`). Cold: nothing cached, so every tuple is new and `owned` is read pair by pair,
    as for the first call of a process or `owned` parsed from JSON."""
    members = sc.members
    previous = assign(strategy, sc.topics, members, sc.racks)
    if sc.leave:
        members = survivors(members, sc.leave, previous)
    if cold:
        pairs.clear()
    return timed(partial(assign, strategy, sc.topics, members, sc.racks))


def theirs(run: Callable, sc: Scenario) -> tuple[Timing, Result]:
    members = sc.members
    if sc.leave:
        members = survivors(members, sc.leave, run(sc.topics, members)[1])
    return run(sc.topics, members)


def best_of(repeats: int, run: Callable[[], tuple[Timing, Result]]) -> tuple[Timing, Result]:
    """The fastest of up to `repeats` runs; a run over a second is not repeated (noise is small there)."""
    best = run()
    for _ in range(repeats - 1):
        if best[0].cpu > 1.0:
            break
        best = min(best, run(), key=lambda r: r[0])
    return best


def available(strategy: str) -> str | None:
    """None if the strategy runs, else why not (strategies are written concurrently by several people)."""
    try:
        assign(strategy, {"t": 1}, {"m": Member(["t"])})
    except (ImportError, AttributeError, NotImplementedError) as exc:
        return f"not implemented yet ({type(exc).__name__})"
    return None


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def fmt(timing: Timing | None) -> str:
    """CPU time, with wall time in brackets."""
    if timing is None:
        return "-"
    return f"{_seconds(timing.cpu)} ({_seconds(timing.wall)})"


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.assignors", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (seconds); used by the smoke test")
    parser.add_argument("--only", action="append", metavar="NAME", help="strategy to run (repeatable)")
    parser.add_argument("--scenario", action="append", metavar="TEXT", help="run scenarios whose name contains TEXT")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per cell (best kept; a run over a second is not repeated)"
    )
    parser.add_argument("--no-peer", action="store_true", help="skip kafka-python")
    parser.add_argument("--plot", metavar="OUT.html", help="bar chart of the times, one offline HTML page")
    args = parser.parse_args(argv)

    strategies = args.only or list(STRATEGIES)
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        parser.error(f"--only: unknown strategy {unknown[0]!r}; expected one of {', '.join(STRATEGIES)}")
    selected = [sc for sc in scenarios(args.quick) if not args.scenario or any(s in sc.name for s in args.scenario)]
    missing = {s: why for s in strategies if (why := available(s))}
    runnable = [s for s in strategies if s not in missing]

    rows: list[Row] = []
    cells = len(selected) * len(runnable)
    for sc in selected:
        repeats = args.repeat
        for strategy in runnable:
            print(f"[{len(rows) + 1}/{cells}] {sc.name} · {strategy} ...", file=sys.stderr, flush=True)
            row = measure(sc, strategy, repeats, None if args.no_peer else peer_runner(strategy))
            rows.append(row)
            print(
                f"    ours {fmt(row.ours)}  cold {fmt(row.cold)}  kafka-python {fmt(row.peer)}"
                f"  peak RSS {peak_rss_mib():.0f} MiB",
                file=sys.stderr,
                flush=True,
            )

    print_table(rows)
    for strategy, why in missing.items():
        print(f"{strategy}: {why}")
    print(f"peak RSS: {peak_rss_mib():.0f} MiB")
    if args.plot:
        plot(rows, args.plot)
    return 1 if any(row.error for row in rows) else 0


@dataclass
class Row:
    scenario: str
    strategy: str
    ours: Timing | None = None
    cold: Timing | None = None
    peer: Timing | None = None
    note: str = "-"  # why there is no kafka-python time
    same: bool | None = None  # kafka-python gave the same assignment
    error: str | None = None  # our strategy failed


def measure(sc: Scenario, strategy: str, repeats: int, peer: Callable | None) -> Row:
    row = Row(sc.name, strategy)
    try:
        row.ours, our_result = best_of(repeats, partial(ours, strategy, sc))
        row.cold, cold_result = best_of(repeats, partial(ours, strategy, sc, cold=True))
        if cold_result != our_result:
            raise AssertionError("cold and warm calls gave different assignments")
    except Exception as exc:  # report and go on: one broken strategy must not hide the others
        row.error = f"error: {type(exc).__name__}: {exc}"
        return row
    if peer is None:
        return row
    if strategy not in sc.peers:
        row.note = "n/a (no racks in kafka-python)" if sc.racks else "skipped (takes minutes)"
        return row
    try:
        row.peer, peer_result = best_of(repeats, partial(theirs, peer, sc))
        row.same = peer_result == our_result
    except Exception as exc:  # kafka-python's own bugs are data too
        row.note = f"kafka-python failed: {type(exc).__name__}"
    return row


def print_table(rows: list[Row]) -> None:
    header = (
        "scenario",
        "strategy",
        "ours: cpu (wall)",
        "ours cold: cpu (wall)",
        "kafka-python: cpu (wall)",
        "speed-up (cpu, vs cold)",
        "same result",
    )
    lines = [
        (
            r.scenario,
            r.strategy,
            r.error or fmt(r.ours),
            fmt(r.cold),
            fmt(r.peer),
            f"{r.peer.cpu / r.cold.cpu:.1f}x" if r.peer and r.cold else r.note,
            "-" if r.same is None else ("yes" if r.same else "no"),
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    for line in [header, tuple("-" * w for w in widths), *lines]:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


def plot(rows: list[Row], path: str) -> None:
    """Grouped bars of our CPU time per scenario and strategy, warm above and cold below (log scale), as
    one offline HTML page (plotly.js inside; any browser, no network)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("warm: layout seen before, previous result fed back",
                                        "cold: first call of a process, owned read pair by pair"))
    for i, strategy in enumerate(dict.fromkeys(r.strategy for r in rows)):
        cells = [r for r in rows if r.strategy == strategy and r.ours and r.cold]
        colour = PLOT_COLOURS[i % len(PLOT_COLOURS)]
        for row, times in ((1, [r.ours.cpu for r in cells]), (2, [r.cold.cpu for r in cells])):
            fig.add_bar(name=strategy, x=[r.scenario for r in cells], y=[t * 1000 for t in times],
                        marker_color=colour, legendgroup=strategy, showlegend=row == 1, row=row, col=1,
                        hovertemplate="%{x}<br>" + strategy + ": %{y:.1f} ms<extra></extra>")
    fig.update_yaxes(type="log", title_text="CPU ms (log)", dtick="D2")  # ticks at 1, 2, 5 × 10^n
    fig.update_layout(barmode="group", title="assign() per call, end to end", template="plotly_white",
                      height=900, legend={"orientation": "h", "y": -0.15})
    fig.write_html(path, include_plotlyjs=True, full_html=True)
    print(f"plot written to {path}")


PLOT_COLOURS = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#9d755d")


if __name__ == "__main__":
    sys.exit(main())
