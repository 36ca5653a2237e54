"""Memory soak of `rebalance serve`: a trickle of membership events over many groups for a long time, with the
resident memory of every process sampled, to see whether each one levels off.

    python -m bench.soak --minutes 30 --groups 2000 --rate 4 --samples soak.json --plot docs/soak-rss.png
    python -m bench.soak --replot docs/soak-rss.png soak.json bounded.json   # redraw saved runs, one panel each

A local broker (its own data dir) and `rebalance serve` as a subprocess (its own checkpoint, the default
topics); a thread produces `--rate` events per second from `bench.pipeline.group_events` (every group
starts within the first `groups / rate` seconds, then random groups; one line in 200 is not JSON, so the
dead-letter path runs too). Every `--every` seconds: RSS (and PSS) of the serve process (the Python
driver), of its JVM, of the Python workers (PySpark's daemon and the workers it forks; RSS counts their
shared pages once per process, PSS shares them out) and of the broker, read from /proc; the JVM's heap
after its last GC (from its GC log) and the events serve has reported. Samples go to `--samples` (JSON,
rewritten at every sample, so a cut-short run keeps its data); the table printed at the end gives each
process at start and every 10 minutes. `--spark-conf` passes settings to serve (e.g. a memory bound),
`--label` names the run in the plot. Linux only (/proc). The plot needs matplotlib
(`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.pipeline import group_events, say
from streaming.demo.local_broker import LocalBroker
from streaming.kafka.topics import ServeTopics, ensure_serve_topics

KINDS = ("driver", "jvm", "workers", "broker")
LABELS = {"driver": "Python driver (serve)", "jvm": "JVM (Spark driver + executor)",
          "workers": "Python workers", "broker": "broker (noida-db)"}
_GC = re.compile(rb"(\d+)M->(\d+)M\((\d+)M\)")
_BATCH = re.compile(r"\] batch \d+: (\d+) events")


# ---- /proc ---------------------------------------------------------------------------------------------------
def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        ppid = int(text[text.rindex(")") + 2:].split()[1])  # the name may hold spaces and parentheses
        tree[ppid].append(int(stat.parent.name))
    return tree


def _descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(tree.get(p, ()))
    return out


def _memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in kB; (0, 0) for a process that is gone."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    fields = dict(line.split(":", 1) for line in rollup.splitlines()[1:])
    return int(fields["Rss"].split()[0]), int(fields["Pss"].split()[0])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def classify(serve_pid: int, broker_pid: int) -> dict[str, list[int]]:
    """The PIDs of each kind: the serve process itself, the java under it, the Python processes under the
    JVM (PySpark's worker daemon and its workers), the broker and anything it started."""
    tree = _children()
    kinds: dict[str, list[int]] = {k: [] for k in KINDS}
    kinds["driver"] = [serve_pid]
    for pid in _descendants(serve_pid, tree)[1:]:
        cmd = _cmdline(pid)
        if "java" in cmd.split(" ", 1)[0]:
            kinds["jvm"].append(pid)
        elif "pyspark" in cmd or "python" in cmd:
            kinds["workers"].append(pid)
    kinds["broker"] = _descendants(broker_pid, tree)
    return kinds


def sample(kinds: dict[str, list[int]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind, pids in kinds.items():
        mem = [_memory_kb(p) for p in pids]
        out[kind] = round(sum(r for r, _ in mem) / 1024, 1)
        out[f"{kind}_pss"] = round(sum(p for _, p in mem) / 1024, 1)
        out[f"{kind}_n"] = sum(1 for r, _ in mem if r)
    return out


def heap_after_gc(gc_log: Path) -> tuple[int, int] | None:
    """(heap used after the last GC, heap committed) in MiB, from a `-Xlog:gc` file."""
    try:
        with gc_log.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
            tail = f.read()
    except OSError:
        return None
    found = _GC.findall(tail)
    return (int(found[-1][1]), int(found[-1][2])) if found else None


# ---- the trickle -----------------------------------------------------------------------------------------------
def trickle(bootstrap: str, topic: str, groups: int, rate: float, stop: threading.Event, sent: list[int]) -> None:
    """`rate` events per second into `topic`, keyed by group (Kafka's murmur2 partitioning keeps a group's
    events in order on one partition); one line in 200 is not JSON."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)
    events = group_events(groups)
    start = time.monotonic()
    try:
        while not stop.is_set():
            event = next(events)
            value = json.dumps({**event, "ts": int(time.time() * 1000)}, separators=(",", ":")).encode()
            if sent[0] % 200 == 199:
                value = value[: len(value) // 2]  # a cut line: invalid JSON, dead-lettered
            producer.send(topic, key=event["group"].encode(), value=value)
            sent[0] += 1
            stop.wait(max(0.0, start + sent[0] / rate - time.monotonic()))
        producer.flush()
    finally:
        producer.close()


# ---- the run ---------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    gc_log = work / "gc.log"
    conf = [f"spark.driver.extraJavaOptions=-Xlog:gc:file={gc_log}", *args.spark_conf]
    with LocalBroker(data_dir=work / "broker") as broker:
        assert broker.process is not None
        topics = ServeTopics()
        ensure_serve_topics(broker.bootstrap, topics)
        cmd = [sys.executable, "-m", "streaming.cli.main", "serve", "--bootstrap", broker.bootstrap,
               "--checkpoint", str(work / "ckpt"), "--strategies", args.strategies,
               *(x for c in conf for x in ("--spark-conf", c))]
        serve_log = work / "serve.log"
        say(f"serve: {' '.join(cmd)} (log {serve_log})")
        with serve_log.open("wb") as out:
            serve = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        stop, sent = threading.Event(), [0]
        producer = threading.Thread(target=trickle, args=(broker.bootstrap, topics.events, args.groups, args.rate,
                                                          stop, sent), daemon=True)
        producer.start()
        run_data: dict[str, Any] = {"label": args.label, "groups": args.groups, "rate": args.rate,
                                    "spark_conf": args.spark_conf, "samples": []}
        start = time.monotonic()
        try:
            while time.monotonic() - start < args.minutes * 60:
                if serve.poll() is not None:
                    raise RuntimeError(f"serve exited with {serve.returncode}: "
                                       f"{serve_log.read_text(errors='replace')[-2000:]}")
                row = {"t": round(time.monotonic() - start, 1),
                       **sample(classify(serve.pid, broker.process.pid)),
                       "produced": sent[0],
                       "processed": sum(int(m) for m in _BATCH.findall(serve_log.read_text(errors="replace")))}
                heap = heap_after_gc(gc_log)
                if heap:
                    row["heap_used"], row["heap_committed"] = heap
                run_data["samples"].append(row)
                Path(args.samples).write_text(json.dumps(run_data, indent=1))
                say("  ".join(f"{k} {row[k]:.0f} MiB" for k in KINDS)
                    + f"  heap {row.get('heap_used', '?')}/{row.get('heap_committed', '?')} MiB"
                    + f"  workers {row['workers_n']}  produced {row['produced']}  processed {row['processed']}")
                time.sleep(max(0.0, start + len(run_data["samples"]) * args.every - time.monotonic()))
        finally:
            stop.set()
            producer.join(timeout=30)
            if serve.poll() is None:
                os.killpg(serve.pid, signal.SIGINT)  # a clean stop, as Ctrl-C
                try:
                    serve.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(serve.pid, signal.SIGKILL)
                    serve.wait()
    return run_data


def summary(run_data: dict[str, Any], every_min: int = 10) -> str:
    """RSS per process kind at the start and every `every_min` minutes (the nearest sample)."""
    rows = run_data["samples"]
    marks = range(0, round(rows[-1]["t"] / 60) + 1, every_min)
    lines = [f"{run_data['label']}: {run_data['groups']} groups, {run_data['rate']} events/s "
             f"{' '.join(run_data['spark_conf'])}".rstrip(),
             f"{'minute':>6}  " + "  ".join(f"{k:>9}" for k in (*KINDS, "heap")) + "  processed"]
    for m in marks:
        row = min(rows, key=lambda r: abs(r["t"] - m * 60))
        heap = f"{row['heap_used']}/{row['heap_committed']}" if "heap_used" in row else "-"
        lines.append(f"{row['t'] / 60:6.1f}  " + "  ".join(f"{row[k]:9.0f}" for k in KINDS)
                     + f"  {heap:>9}  {row['processed']}")
    return "\n".join(lines)


def plot(runs: list[dict[str, Any]], path: str) -> None:
    """One panel per run: RSS of each process kind (MiB) over minutes, the JVM heap after GC dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(runs), 1, figsize=(10, 3.6 * len(runs)), sharex=True, squeeze=False)
    top = max(r[k] for run in runs for r in run["samples"] for k in KINDS) * 1.1
    for ax, run_data in zip(axes[:, 0], runs, strict=True):
        rows = run_data["samples"]
        minutes = [r["t"] / 60 for r in rows]
        for kind in KINDS:
            ax.plot(minutes, [r[kind] for r in rows], label=LABELS[kind])
        heap = [(r["t"] / 60, r["heap_used"]) for r in rows if "heap_used" in r]
        if heap:
            ax.plot(*zip(*heap, strict=True), linestyle="--", color="grey", label="JVM heap after the last (young) GC")
        conf = "".join(f"; {c}" for c in run_data["spark_conf"])
        ax.set_title(f"{run_data['label']}: {run_data['groups']} groups, {run_data['rate']} events/s{conf}",
                     fontsize=9)
        ax.set_ylabel("RSS (MiB)")
        ax.set_ylim(0, top)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    axes[-1, 0].set_xlabel("minutes")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--groups", type=int, default=2000)
    p.add_argument("--rate", type=float, default=4.0, help="events per second (default: %(default)s)")
    p.add_argument("--every", type=float, default=10.0, help="seconds between samples (default: %(default)s)")
    p.add_argument("--strategies", default="sticky,cooperative-sticky")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="passed to serve")
    p.add_argument("--label", default="soak")
    p.add_argument("--samples", default="soak.json", metavar="FILE.json", help="where the samples go")
    p.add_argument("--plot", default=None, metavar="FILE.png")
    p.add_argument("--replot", nargs="+", default=None, metavar="SAMPLES.json",
                   help="only draw --plot from saved runs")
    p.add_argument("--workdir", default=None, help="keep broker data, checkpoint and logs here")
    args = p.parse_args(argv)
    if args.replot:
        runs = [json.loads(Path(f).read_text()) for f in args.replot]
    else:
        with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
            work = Path(args.workdir or tmp)
            work.mkdir(parents=True, exist_ok=True)
            runs = [run(args, work)]
    for run_data in runs:
        print(summary(run_data))
    if args.plot:
        plot(runs, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
