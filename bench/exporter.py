"""`rebalance exporter`'s memory over a long diffs topic, and its serving through a broker restart.

    python -m bench.exporter [--records 100000] [--step 10000] [--groups 5000] [--max-groups 1000]

A local broker with its own data directory; the diffs topic is filled `--step` records at a time (diff
records of the bundled histories, regrouped over `--groups` group ids, each step one committed transaction
like the sink's) while one exporter process reads it. After each step, once the exporter has read it:
its resident memory (VmRSS), what it serves and how long a scrape takes. Then the broker is stopped,
scraped through the outage, started again on the same port and data, and one more step is read.
Progress goes to stderr; the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

BENCH_HISTORIES = ("autoscaling", "flapping-member", "mixed-subscriptions", "rack-aware", "rolling-deploy",
                   "static-restarts", "topic-growth")  # large-group left out: its 100k-partition records


def say(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class ExporterProcess:
    """`rebalance exporter` as a child process on a free loopback port; stderr goes to `log`."""

    def __init__(self, bootstrap: str, log: Path, *args: str) -> None:
        exe = Path(sys.executable).with_name("rebalance")
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen([str(exe), "exporter", "--bootstrap", bootstrap, "--host", "127.0.0.1",
                                             "--port", "0", *args], stderr=out)
        self.url, self.port = "", 0
        wait_for(self._listening, "exporter listening", 60)

    def _listening(self) -> bool:
        assert self.process.poll() is None, f"exporter exited: {self.log.read_text()}"
        listening = re.search(r"metrics on (https?://127\.0\.0\.1:(\d+)/metrics)", self.log.read_text())
        if listening:  # https with --web-config
            self.url, self.port = listening[1], int(listening[2])
        return listening is not None

    def scrape(self) -> bytes:
        with urllib.request.urlopen(self.url, timeout=30) as r:
            return r.read()

    def samples(self) -> dict[str, float]:
        """Every sample served now: 'name{label="value",...}' (as served) -> value."""
        out = {}
        for line in self.scrape().decode().splitlines():
            if line and not line.startswith("#"):
                key, _, value = line.rpartition(" ")
                out[key] = float(value)
        return out

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def stop(self) -> str:
        self.process.terminate()
        self.process.wait(timeout=30)
        return self.log.read_text()


def wait_for(condition: Callable[[], object], what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout_s:.0f} s: {what}")
        time.sleep(1.0)


def produce_transaction(bootstrap: str, topic: str, values: list[bytes], *, commit: bool = True) -> None:
    """One transaction, committed (or aborted), records keyed by their group as the exactly-once sink writes
    them (a value without a readable group: no key)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"bench-{time.time_ns()}",
                             linger_ms=20, max_request_size=8 * 1024 * 1024)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for value in values:
            try:
                key = json.loads(value)["group"].encode()
            except (ValueError, KeyError, TypeError, AttributeError):
                key = None
            producer.send(topic, key=key, value=value)
        producer.flush()
        if commit:
            producer.commit_transaction()
        else:
            producer.abort_transaction()
    finally:
        producer.close()


def regrouped_diffs(groups: int) -> Iterator[bytes]:
    """Diff records of the bundled histories, endlessly, every 8 consecutive ones (about one event under
    each strategy) under the next of `groups` group ids, round-robin: the per-group numbers mean nothing,
    the point is many groups with every strategy, so that --max-groups is reached early."""
    from streaming.core.config import PipelineConfig, parse_strategies
    from streaming.core.local import read_jsonl, replay
    from whatif.histories import sample_path

    config = PipelineConfig(strategies=parse_strategies("all"))
    records = [json.loads(r.value) for name in BENCH_HISTORIES
               for r in replay(read_jsonl(sample_path(name)), config, max_events_per_batch=None) if r.kind == "diff"]
    n = 0
    while True:
        for r in records:
            yield json.dumps({**r, "group": f"group-{n // 8 % groups}"}, separators=(",", ":")).encode()
            n += 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.exporter", description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=100_000)
    p.add_argument("--step", type=int, default=10_000)
    p.add_argument("--groups", type=int, default=5_000, help="distinct group ids in the topic")
    p.add_argument("--max-groups", type=int, default=1_000, help="the exporter's --max-groups")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the broker and the exporter on the way out
    from streaming.demo.local_broker import LocalBroker, free_port
    from streaming.kafka.topics import ensure_topics

    topic = "rebalance.diffs"
    with tempfile.TemporaryDirectory(prefix="bench-exporter-") as tmp:
        (Path(tmp) / "broker").mkdir()
        broker = LocalBroker(port=free_port(), data_dir=Path(tmp) / "broker").start()
        exporter = None
        try:
            ensure_topics(broker.bootstrap, {topic: 2})
            exporter = ExporterProcess(broker.bootstrap, Path(tmp) / "exporter.log", "--max-groups",
                                       str(args.max_groups))
            records = regrouped_diffs(args.groups)
            print(f"{'records read':>12} {'RSS MiB':>8} {'series':>7} {'scrape ms':>9} {'read s':>7}")
            written = 0
            read = "rebalance_exporter_records_total{topic=\"rebalance.diffs\"}"
            while written < args.records:
                batch = [next(records) for _ in range(min(args.step, args.records - written))]
                produce_transaction(broker.bootstrap, topic, batch)
                written += len(batch)
                started = time.monotonic()
                wait_for(lambda n=written: exporter.samples().get(read, 0) >= n, f"{written} records read")
                read_s = time.monotonic() - started
                t0 = time.perf_counter()
                exporter.scrape()  # rendered once after a change, then served from the cache
                scrape_ms = (time.perf_counter() - t0) * 1000
                samples = exporter.samples()
                print(f"{int(samples[read]):>12,} {exporter.rss_mib():>8.1f} {len(samples):>7,} {scrape_ms:>9.1f} "
                      f"{read_s:>7.1f}", flush=True)
            say("stopping the broker")
            broker.stop()
            before = exporter.samples()
            scrapes, down_seen, started = 0, False, time.monotonic()
            while time.monotonic() - started < 30:
                samples = exporter.samples()  # raises if the exporter stops answering
                scrapes += 1
                down_seen |= samples["rebalance_exporter_broker_up"] == 0
                time.sleep(0.5)
            same = samples[read] == before[read]
            print(f"broker down 30 s: {scrapes} scrapes answered, broker_up 0 seen: {down_seen}, "
                  f"counters unchanged: {same}, RSS {exporter.rss_mib():.1f} MiB")
            say("starting the broker again")
            broker.start()
            started = time.monotonic()
            produce_transaction(broker.bootstrap, topic, [next(records) for _ in range(args.step)])
            written += args.step
            wait_for(lambda: exporter.samples().get(read, 0) >= written, "records after the restart", 180)
            wait_for(lambda: exporter.samples()["rebalance_exporter_broker_up"] == 1, "broker_up 1 again")
            print(f"broker back: {args.step:,} more records produced and read "
                  f"{time.monotonic() - started:.1f} s after the restart; RSS {exporter.rss_mib():.1f} MiB")
        finally:
            if exporter is not None:
                log = exporter.stop()
                say("exporter log (last lines):\n" + "\n".join(log.splitlines()[-6:]))
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
