"""The streaming pipeline's speed, side by side with the plain loop over the same log.

    python -m bench.pipeline [--events 100000] [--groups 1000] [--seed N] [--traffic SHARE] [--trickle 150]
                             [--strategies sticky,cooperative-sticky [--strategies range,roundrobin ...]]
                             [--big-partitions 1000000] [--big-members 2000]
                             [--skip throughput,latency,big | --skip spark] [--master spark://HOST:PORT]

0. The plain loop: the generated log through `local.replay` (the state machine alone: no Spark, no Kafka)
   once per `--strategies` set, in the order given, timed by CPU time (`time.process_time`, what the loop
   costs a core) and by wall time, with the process's peak RSS so far (`ru_maxrss`); where the install
   compiled the state machine's modules (setup.py), each set runs again on their pure-Python sources in a
   fresh process, with the ratio (`build` column: mypyc, python). `--skip spark` runs
   only this (Spark is not even imported): `python -m bench.pipeline --events 100000 --groups 1000 --skip
   spark --strategies sticky,cooperative-sticky --strategies range,roundrobin` prints docs/performance.md's loop
   figures.
   The Spark measurements below use the first set; `--skip loop` leaves the loop out unless throughput runs.
   `--traffic SHARE` adds `traffic` events to the generated log (docs/traffic.md): every group's topics get one
   after its first metadata, then one follows a membership event with probability SHARE; the membership events
   stay the same, so a run with and one without compare the cost of traffic; events/s then count every event
   of the log, traffic events included (CPU seconds compare the same membership events).
1. Throughput: one generated log (fixed seed) through `local.replay` (the state machine in a plain loop: no
   Spark, no Kafka), `rebalance replay` (Spark, JSONL files in and out) and `rebalance serve --once` (Spark,
   local Kafka broker in and out, exactly-once sink), each Spark run next to its *Spark floor*: the same
   query (source, group key, grouping, state blob read and written back, sink) with `passthrough_step` as
   the state function, i.e. what Spark itself costs. One table: events/s, the ratio to the plain loop and
   to the floor; Spark start-up and loading the topic are timed apart.
2. Latency: `serve` running back to back (processingTime 0) while one event arrives every 100 ms, each a
   membership change; event produced -> its diff readable (read_committed): p50/p95/max, for the job and
   for its Spark floor.
3. One huge group (1M partitions x 2000 members): the time of one rebalance (a member leaves) through the
   whole pipeline — as the micro-batch after the one that built the group, in the same running query (what a
   running `serve` spends per rebalance), and as a `replay` resumed from that checkpoint for one more leave
   (query start and state store load included) — next to `step` alone.
Progress goes to stderr; the tables to stdout. The last lines give the peak RSS of the Python driver, of
Spark's JVM (its `VmHWM`, read before Spark stops) and of the driver's waited-for children (`ru_maxrss`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from streaming.build import PURE_PYTHON_ENV, loaded_compiled
from streaming.core.config import PipelineConfig
from streaming.core.record_encoding import dumps
from streaming.core.records import DIFF, OutputRecord, SourceRecord

SEED = 20261121
TS0 = 1_732_200_000_000


def say(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---- logs ------------------------------------------------------------------------------------------------
class _Group:
    """A group with a random life: members join and leave, change subscriptions, topics grow."""

    def __init__(self, name: str, rng: random.Random) -> None:
        self.name, self.rng = name, rng
        self.topics = {f"{name}.t{i}": rng.randint(6, 48) for i in range(rng.randint(1, 3))}
        self.members: dict[str, list[str]] = {}
        self.serial = 0
        self.started = False

    def _subscription(self) -> list[str]:
        names = list(self.topics)
        return sorted(self.rng.sample(names, self.rng.randint(1, len(names))))

    def next_event(self) -> dict:
        r = self.rng
        if not self.started:
            self.started = True
            return {"type": "partitions", "partitions": dict(self.topics)}
        roll = r.random()
        if not self.members or (roll < 0.45 and len(self.members) < 24):
            self.serial += 1
            member = f"{self.name}-c{self.serial}"
            self.members[member] = self._subscription()
            return {"type": "join", "member": member, "topics": self.members[member]}
        if roll < 0.75 and len(self.members) > 1:
            member = r.choice(list(self.members))
            del self.members[member]
            return {"type": "leave", "member": member}
        if roll < 0.9:
            member = r.choice(list(self.members))
            self.members[member] = self._subscription()
            return {"type": "subscribe", "member": member, "topics": self.members[member]}
        topic = r.choice(list(self.topics))
        self.topics[topic] += r.randint(1, 8)
        return {"type": "partitions", "partitions": {topic: self.topics[topic]}}

    def traffic_event(self, topic: str, rng: random.Random) -> dict:
        """msgs/s of one of its topics: per-partition rates with a hot partition, or keyed with a hot key (drawn
        from `rng`, not the group's own, so its membership events stay the same)."""
        n = self.topics[topic]
        if rng.random() < 0.5:
            rates = [round(rng.uniform(50, 500), 1) for _ in range(n)]
            rates[rng.randrange(n)] = round(rng.uniform(2_000, 20_000), 1)
            return {"type": "traffic", "topic": topic, "rates": rates}
        keys = {f"k{i}": round(1 / i, 4) for i in range(1, 21)} | {"hot": round(rng.uniform(5, 50), 2)}
        return {"type": "traffic", "topic": topic, "rate": round(rng.uniform(1_000, 50_000)), "keys": keys,
                "null_share": round(rng.random(), 2)}


def group_events(groups: int, seed: int = SEED, traffic: float = 0.0) -> Iterator[dict]:
    """An endless stream of membership events over `groups` groups: every group starts early (in order),
    then random interleaving; no `ts` (the caller stamps it). With `traffic` > 0, `traffic` events follow: one
    per topic after a group's first metadata, then one after a membership event with that probability."""
    rng = random.Random(seed)
    traffic_rng = random.Random(seed + 1)
    gs = [_Group(f"g{i:05d}", random.Random(rng.getrandbits(64))) for i in range(groups)]
    n = 0
    while True:
        g = gs[n] if n < groups else rng.choice(gs)
        yield {"group": g.name, **g.next_event()}
        if traffic > 0:
            if n < groups:  # the group's first metadata: traffic for every topic
                for t in g.topics:
                    yield {"group": g.name, **g.traffic_event(t, traffic_rng)}
            elif traffic_rng.random() < traffic:
                yield {"group": g.name, **g.traffic_event(traffic_rng.choice(list(g.topics)), traffic_rng)}
        n += 1


def generate_log(path: Path, events: int, groups: int, seed: int = SEED, traffic: float = 0.0) -> Path:
    """`events` membership events over `groups` groups, interleaved at random, one JSON object per line; with
    `traffic` > 0, `traffic` events among them (`group_events`)."""
    membership = 0
    with path.open("w") as f:
        for line, event in enumerate(group_events(groups, seed, traffic)):
            if event["type"] != "traffic":
                if membership == events:
                    break
                membership += 1
            f.write(json.dumps({**event, "ts": TS0 + line * 10}, separators=(",", ":")))
            f.write("\n")
    return path


def big_group_events(partitions: int, members: int) -> Iterator[dict]:
    """Members join an empty group (cheap rounds), then one metadata event gives it `partitions`."""
    topics = [f"big.t{i:03d}" for i in range(100)]
    for m in range(members):
        yield {"group": "big", "type": "join", "member": f"big-c{m:05d}", "topics": topics}
    per, extra = divmod(partitions, len(topics))
    yield {"group": "big", "type": "partitions",
           "partitions": {t: per + (i < extra) for i, t in enumerate(topics)}}


def passthrough_step(group: str, state: bytes | None, records: Sequence[SourceRecord], config: PipelineConfig,
                     now_ms: int) -> tuple[bytes | None, list[OutputRecord]]:
    """The Spark floor's state function: no state machine. The group's blob goes back as it came (a fixed
    small one for a new group) and every event comes out once per strategy as a small diff naming its
    cause's source position (what the latency run matches on): the same rows per event into the sink as
    the job's one round per strategy, with none of the work behind them."""
    out = [OutputRecord(DIFF, group, dumps({"group": group, "strategy": name, "cause": {"source": rec.source}}),
                        (*rec.order, i))
           for rec in sorted(records, key=lambda r: r.order) for i, name in enumerate(config.strategies)]
    return (state if state is not None else _FLOOR_BLOB), out


_FLOOR_BLOB = bytes(256)


# ---- the measurements -------------------------------------------------------------------------------------
def _rate(n: int, secs: float) -> str:
    return f"{n / secs:,.0f}" if secs > 0 else "-"


LOOP_BATCH = 1_000  # the plain loop's micro-batches (events)
DEFAULT_STRATEGIES = "sticky,cooperative-sticky"
SKIPPABLE = ("throughput", "latency", "big")  # the Spark measurements; `spark` skips all three


class LoopRun(NamedTuple):
    """One strategy set's plain-loop run."""

    strategies: tuple[str, ...]
    records: int  # output records
    cpu_s: float  # `time.process_time` of the run
    wall_s: float
    peak_rss_mib: float  # the process's peak RSS after the run (a high-water mark: earlier runs count too)


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """`ru_maxrss` in MiB (Linux reports KiB)."""
    return resource.getrusage(who).ru_maxrss / 1024


def _time_loop(args: argparse.Namespace, log: Path) -> list[LoopRun]:
    """The log through `local.replay` once per strategy set."""
    from streaming.core.local import read_jsonl, replay

    runs = []
    for cfg in _configs(args):
        names = ",".join(cfg.strategies)
        say(f"plain loop (local.replay, {_build()}), {names}...")
        shown = time.perf_counter()
        wall, cpu = shown, time.process_time()
        n_out = 0
        for n_out, rec in enumerate(replay(read_jsonl(log), cfg, max_events_per_batch=LOOP_BATCH), 1):
            if time.perf_counter() - shown > 15:
                shown = time.perf_counter()
                say(f"  {n_out} records, at line {rec.order[1]} of {args.events}")
        run = LoopRun(cfg.strategies, n_out, time.process_time() - cpu, time.perf_counter() - wall, peak_rss_mib())
        say(f"  {run.cpu_s:.1f}s CPU ({_rate(args.events, run.cpu_s)} events/s)")
        runs.append(run)
    return runs


def _build() -> str:
    """`mypyc` where the state machine's modules run compiled (setup.py; `dumps`' module is imported above),
    else `python`."""
    return "mypyc" if loaded_compiled() else "python"


def _time_pure_loop(args: argparse.Namespace, log: Path) -> list[LoopRun]:
    """`_time_loop` on the pure-Python modules: in a fresh process, which the environment sends to the sources
    (`bench` calls `streaming.build.prefer_fresh_sources` there before the library loads)."""
    os.environ[PURE_PYTHON_ENV] = "1"
    try:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            return pool.apply(_time_loop, (args, log))
    finally:
        del os.environ[PURE_PYTHON_ENV]


def bench_loop(args: argparse.Namespace, log: Path) -> list[LoopRun]:
    """One table row per strategy set and build: the compiled modules and, side by side, the same sources
    interpreted (only the latter where the install did not compile)."""
    build = _build()
    runs = _time_loop(args, log)
    pure = _time_pure_loop(args, log) if build == "mypyc" else []
    print(f"\nPlain loop (local.replay, batches of {LOOP_BATCH:,}): {args.events:,} events, {args.groups:,} groups, "
          f"seed {args.seed}")
    print(f"{'strategies':32} {'build':>6} {'records':>9} {'CPU s':>8} {'events/s CPU':>13} {'wall s':>8} "
          f"{'events/s wall':>14} {'peak RSS so far':>16} {'vs python':>10}")
    for i, r in enumerate(runs):
        rows = [(build, r, f"{pure[i].cpu_s / r.cpu_s:9.2f}x" if pure else "")]
        rows += [("python", pure[i], "")] if pure else []
        for name, row, ratio in rows:
            print(f"{','.join(row.strategies):32} {name:>6} {row.records:9,} {row.cpu_s:8.2f} "
                  f"{_rate(args.events, row.cpu_s):>13} {row.wall_s:8.2f} {_rate(args.events, row.wall_s):>14} "
                  f"{row.peak_rss_mib:12.0f} MiB {ratio:>10}")
    return runs


def bench_throughput(args: argparse.Namespace, spark, work: Path, log: Path, loop: LoopRun
                     ) -> list[tuple[str, float, str]]:
    from streaming.spark.pipelines import replay_log

    cfg = _config(args)
    local_s = loop.wall_s
    rows: list[tuple[str, float, str, float | None]] = [  # name, seconds, note, floor seconds
        (f"local.replay (plain loop, {_build()})", local_s, f"{loop.records} records", None)]

    say("warming Spark up (a 200-event replay, not timed)...")
    replay_log(spark, generate_log(work / "warmup.jsonl", 200, 20, seed=SEED + 1), work / "warmup-out", cfg,
               progress=None)

    def timed_replay(label: str, out: str, **kwargs) -> float:
        say(f"{label}...")
        t = time.perf_counter()
        replay_log(spark, log, work / out, cfg, max_events_per_batch=args.max_events_per_batch, **kwargs)
        secs = time.perf_counter() - t
        say(f"  {secs:.1f}s ({_rate(args.events, secs)} events/s)")
        return secs

    batches = f"batches of {args.max_events_per_batch or 'all'}"
    floor_files = timed_replay("Spark floor, files (pass-through state function)", "floor-out",
                               step=passthrough_step)
    rows.append(("Spark floor, files (pass-through)", floor_files, batches, None))
    replay_s = timed_replay("replay (Spark, files)", "replay-out")
    rows.append(("rebalance replay (Spark, files)", replay_s, batches, floor_files))

    from streaming.demo.local_broker import LocalBroker
    from streaming.kafka.loader import load_log
    from streaming.kafka.topics import ServeTopics, ensure_serve_topics
    from streaming.spark.pipelines import serve_events

    with LocalBroker() as broker:
        topics = ServeTopics()
        floor_topics = ServeTopics(diffs="floor.diffs", dead_letter="floor.dead-letter")
        ensure_serve_topics(broker.bootstrap, topics)
        ensure_serve_topics(broker.bootstrap, floor_topics)
        say("loading the events topic...")
        t = time.perf_counter()
        load_log(log, broker.bootstrap, topics.events, progress=None)
        load_s = time.perf_counter() - t
        say(f"  loaded in {load_s:.1f}s")

        def timed_serve(label: str, ckpt: str, **kwargs) -> float:
            say(f"{label}...")
            t = time.perf_counter()
            serve_events(spark, broker.bootstrap, cfg, checkpoint=str(work / ckpt), once=True,
                         max_events_per_batch=args.max_events_per_batch, **kwargs)
            secs = time.perf_counter() - t
            say(f"  {secs:.1f}s ({_rate(args.events, secs)} events/s)")
            return secs

        floor_kafka = timed_serve("Spark floor, Kafka (pass-through state function)", "floor-ckpt",
                                  topics=floor_topics, step=passthrough_step)
        serve_s = timed_serve("serve --once (Spark, Kafka, exactly-once sink)", "serve-ckpt", topics=topics)
    rows.append(("Spark floor, Kafka (pass-through)", floor_kafka, "exactly-once sink", None))
    rows.append(("rebalance serve --once (Spark, Kafka)", serve_s, f"+ {load_s:.1f}s to load the topic",
                 floor_kafka))
    print(f"\nThroughput: {args.events:,} events, {args.groups:,} groups, strategies {','.join(cfg.strategies)}")
    print(f"{'path':40} {'seconds':>9} {'events/s':>10} {'vs plain loop':>14} {'vs its floor':>13}  note")
    for name, secs, note, floor in rows:
        vs_floor = f"{floor / secs:12.2f}x" if floor else f"{'':>13}"
        print(f"{name:40} {secs:9.1f} {_rate(args.events, secs):>10} {local_s / secs:13.2f}x {vs_floor}  {note}")
    return [(name, secs, note) for name, secs, note, _ in rows]


def bench_latency(args: argparse.Namespace, spark, work: Path, *, floor: bool = False) -> list[float]:
    """Latency of the job, or with `floor` of its Spark floor (`passthrough_step`)."""
    from kafka import KafkaConsumer, KafkaProducer

    from assignors.partitioner import partition_for_key
    from streaming.demo.local_broker import LocalBroker
    from streaming.kafka.topics import ServeTopics, ensure_serve_topics
    from streaming.spark.job import wait_started
    from streaming.spark.pipelines import start_serve

    cfg = _config(args)
    groups = [f"live-{i}" for i in range(10)]
    with LocalBroker() as broker:
        topics = ServeTopics()
        ensure_serve_topics(broker.bootstrap, topics)
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", linger_ms=0)
        parts = len(producer.partitions_for(topics.events))
        produced: dict[tuple[int, int], float] = {}

        def send(event: dict) -> tuple[int, int]:
            key = event["group"].encode()
            meta = producer.send(topics.events, key=key, value=json.dumps(event).encode(),
                                 partition=partition_for_key(key, parts)).get(timeout=30)
            produced[(meta.partition, meta.offset)] = time.perf_counter()
            return meta.partition, meta.offset

        for g in groups:
            send({"group": g, "type": "partitions", "partitions": {f"{g}.t": 12}})
        query = start_serve(spark, broker.bootstrap, cfg, checkpoint=str(work / f"latency-ckpt-{floor}"), topics=topics,
                            **({"step": passthrough_step} if floor else {}))
        arrived: dict[tuple[int, int], float] = {}
        measured: list[tuple[int, int]] = []
        stop = threading.Event()

        def consume() -> None:
            consumer = KafkaConsumer(topics.diffs, bootstrap_servers=broker.bootstrap, group_id=None,
                                     isolation_level="read_committed", auto_offset_reset="earliest")
            while not stop.is_set():
                for records in consumer.poll(timeout_ms=50).values():
                    now = time.perf_counter()
                    for r in records:
                        src = json.loads(r.value)["cause"]["source"]
                        arrived.setdefault((src["partition"], src["offset"]), now)
            consumer.close()

        reader = threading.Thread(target=consume, daemon=True)
        reader.start()
        try:
            wait_started(query)
            warm, total = args.trickle_warmup, args.trickle_warmup + args.trickle
            say(f"warming up ({warm} events)...")
            for i in range(total):
                if i == warm:
                    say(f"measuring {args.trickle} events, one every 100 ms...")
                g = groups[i % len(groups)]
                key = send({"group": g, "type": "join", "member": f"m{i}", "topics": [f"{g}.t"]})
                if i >= warm:
                    measured.append(key)
                if i % 50 == 49:
                    say(f"  {i + 1}/{total} sent, {len(arrived)} diffs seen")
                time.sleep(0.1)
            deadline = time.monotonic() + 60
            while not all(k in arrived for k in measured) and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            stop.set()
            query.stop()
            reader.join(10)
            producer.close()
    lat = [arrived[k] - produced[k] for k in measured if k in arrived]
    missing = len(measured) - len(lat)
    q = statistics.quantiles(lat, n=20, method="inclusive") if len(lat) >= 2 else [float("nan")] * 19
    print(f"\nLatency{' of the Spark floor (pass-through state function)' if floor else ''}, event produced -> "
          f"its diff readable (read_committed), one event / 100 ms, processingTime 0, "
          f"strategies {','.join(cfg.strategies)}:")
    print(f"  events {len(lat)} (missing {missing})   p50 {statistics.median(lat) * 1000:,.0f} ms   "
          f"p95 {q[18] * 1000:,.0f} ms   max {max(lat) * 1000:,.0f} ms")
    return lat


def bench_big_group(args: argparse.Namespace, spark, work: Path) -> None:
    """One rebalance of the big group, two ways: in a running query (the group is built by one micro-batch and
    a member leaves in the next, as a running `serve` would see it), and as a `replay` resumed from that
    query's checkpoint for one more leave (query start, state store load and first-batch planning included)."""
    from streaming.core.group_state import step
    from streaming.core.records import SourceRecord
    from streaming.spark.pipelines import replay_log

    cfg = _config(args)
    log = work / "big" / "big.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    events = list(big_group_events(args.big_partitions, args.big_members))
    leaves = [{"group": "big", "type": "leave", "member": f"big-c{m:05d}"} for m in range(2)]
    with log.open("w") as f:
        for e in [*events, leaves[0]]:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    say(f"big group: {args.big_members} joins, then {args.big_partitions:,} partitions (one rebalance), "
        "then one member leaves in the next micro-batch...")
    ckpt, out = work / "big-ckpt", work / "big-out"
    running = _batch_times()
    spark.streams.addListener(running)
    t = time.perf_counter()
    replay_log(spark, log, out, cfg, checkpoint=ckpt, max_events_per_batch=len(events))
    setup_s = time.perf_counter() - t
    running.wait(count=2)
    spark.streams.removeListener(running)
    say(f"  built and rebalanced in {setup_s:.1f}s; now another member leaves, through a resumed replay...")
    with log.open("a") as f:
        f.write(json.dumps(leaves[1]) + "\n")
    resumed = _batch_times()
    spark.streams.addListener(resumed)
    t = time.perf_counter()
    replay_log(spark, log, out, cfg, checkpoint=ckpt)
    leave_s = time.perf_counter() - t
    resumed.wait()
    spark.streams.removeListener(resumed)

    say("  the same events through step() alone (no Spark)...")
    records = [SourceRecord(json.dumps(e).encode(), None, {"file": "big.jsonl", "line": i + 1}, (0, i + 1), None)
               for i, e in enumerate(events)]
    state, _ = step("big", None, records, cfg, 0)
    t = time.perf_counter()
    step("big", state, [SourceRecord(json.dumps(leaves[0]).encode(), None, {}, (0, len(events) + 1), None)], cfg, 0)
    step_s = time.perf_counter() - t
    print(f"\nOne rebalance of a group of {args.big_partitions:,} partitions x {args.big_members:,} members "
          f"(a member leaves), strategies {','.join(cfg.strategies)}:")
    print(f"  its micro-batch in a running query (read, state, step, sink): {running.last_s():6.1f} s"
          "   <- what a running `serve` spends")
    print(f"  through a `replay` resumed from the checkpoint:               {leave_s:6.1f} s"
          f"   (its micro-batch {resumed.last_s():.1f} s)")
    print(f"  step() alone (state machine + assignors):                     {step_s:6.1f} s")
    print(f"  (building the group: {running.first_s():.1f} s, its micro-batch)")


def _batch_times():
    """Spark's own timing of each micro-batch that read events (`triggerExecution`): a resumed `replay`
    also starts and stops a query, which a running service does not pay per rebalance. Defined on call:
    importing pyspark costs ~20 MiB, which `--skip spark` keeps out of the loop's peak RSS."""
    from pyspark.sql.streaming import StreamingQueryListener

    class BatchTimes(StreamingQueryListener):
        def __init__(self) -> None:
            self.ms: list[int] = []

        def onQueryStarted(self, event) -> None:
            pass

        def onQueryProgress(self, event) -> None:
            if event.progress.numInputRows:
                self.ms.append(int(event.progress.durationMs.get("triggerExecution", 0)))

        def onQueryIdle(self, event) -> None:
            pass

        def onQueryTerminated(self, event) -> None:
            pass

        def wait(self, count: int = 1, timeout_s: float = 10.0) -> None:
            """Spark's listener bus reports asynchronously, possibly after the query returned."""
            deadline = time.monotonic() + timeout_s
            while len(self.ms) < count and time.monotonic() < deadline:
                time.sleep(0.1)

        def first_s(self) -> float:
            return self.ms[0] / 1000 if self.ms else float("nan")

        def last_s(self) -> float:
            return self.ms[-1] / 1000 if self.ms else float("nan")

    return BatchTimes()


def _configs(args: argparse.Namespace) -> list[PipelineConfig]:
    """One config per `--strategies` set, in the order given (default: the sticky pair)."""
    from streaming.core.config import Limits, parse_strategies

    return [PipelineConfig(parse_strategies(text), Limits()) for text in args.strategies or [DEFAULT_STRATEGIES]]


def _config(args: argparse.Namespace) -> PipelineConfig:
    """The Spark runs' config: the first strategy set."""
    return _configs(args)[0]


def _jvm_peak_rss_mib(spark) -> float | None:
    """Peak RSS (`VmHWM`) of the JVM Spark's driver runs in: the gateway's process, a child of this one
    (spark-submit execs java). None where it cannot be read (no /proc, a remote gateway)."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    try:
        with open(f"/proc/{proc.pid}/status") as f:
            return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))
    except (AttributeError, OSError, StopIteration):
        return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--groups", type=int, default=1_000)
    p.add_argument("--seed", type=int, default=SEED, help="seed of the generated log (default: %(default)s)")
    p.add_argument("--traffic", type=float, default=0.0,
                   help="share of membership events followed by a traffic event in the generated log (default: none)")
    p.add_argument("--max-events-per-batch", type=int, default=None)
    p.add_argument("--strategies", action="append", default=None,
                   help=f"comma-separated strategy names or 'all'; repeat for more sets (the plain loop runs each, "
                        f"Spark the first; default: {DEFAULT_STRATEGIES})")
    p.add_argument("--trickle", type=int, default=150, help="measured events of the latency run")
    p.add_argument("--trickle-warmup", type=int, default=20)
    p.add_argument("--big-partitions", type=int, default=1_000_000)
    p.add_argument("--big-members", type=int, default=2_000)
    p.add_argument("--skip", default="",
                   help="comma-separated: loop (unless throughput runs: it compares with the loop), and the "
                        "Spark measurements throughput, latency, big; spark = all three")
    p.add_argument("--workdir", default=None, help="keep logs and outputs here (default: a temp dir)")
    p.add_argument("--master", default="local[2]", help="Spark master, e.g. spark://HOST:PORT (default: %(default)s)")
    args = p.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - {*SKIPPABLE, "spark", "loop"}
    if unknown:
        p.error(f"--skip: unknown {', '.join(sorted(unknown))}; expected loop, {', '.join(SKIPPABLE)} or spark")
    if "spark" in skip:
        skip.update(SKIPPABLE)
    try:
        _configs(args)
    except ValueError as exc:
        p.error(str(exc))

    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        loop: list[LoopRun] = []
        if "loop" not in skip or "throughput" not in skip:  # the throughput table compares with the loop
            log = generate_log(work / "throughput.jsonl", args.events, args.groups, seed=args.seed,
                               traffic=args.traffic)
            if args.traffic > 0:  # the rates below are over every event of the log, traffic events included
                from streaming.core.local import line_count

                membership, args.events = args.events, line_count(log)
                say(f"log: {membership} membership and {args.events - membership} traffic events")
            say(f"log: {args.events} events over {args.groups} groups -> {log}")
            loop = bench_loop(args, log)
        jvm_mib = None
        if not set(SKIPPABLE) <= skip:
            from streaming.spark.session import build_spark

            say(f"starting Spark ({args.master})...")
            t = time.perf_counter()
            spark = build_spark(app_name="bench-pipeline", master=args.master)
            say(f"  Spark up in {time.perf_counter() - t:.1f}s")
            if "throughput" not in skip:
                bench_throughput(args, spark, work, log, loop[0])
            if "latency" not in skip:
                bench_latency(args, spark, work, floor=True)
                bench_latency(args, spark, work)
            if "big" not in skip:
                bench_big_group(args, spark, work)
            jvm_mib = _jvm_peak_rss_mib(spark)
            spark.stop()
    jvm = "not started" if set(SKIPPABLE) <= skip else "unknown" if jvm_mib is None else f"{jvm_mib:,.0f} MiB"
    print(f"\npeak RSS: Python driver {peak_rss_mib():,.0f} MiB, Spark JVM {jvm}, "
          f"waited-for children {peak_rss_mib(resource.RUSAGE_CHILDREN):,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
