"""Capture lag: time from a coordinator record being acknowledged in the offsets topic (an ordinary topic on
the local broker standing in for ``__consumer_offsets``) to its `generation` event being written by a
tailing `rebalance capture` (not `--once`).

    python -m bench.capture_lag              # 50 generations, one every 0.2 s
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import threading
import time
import uuid

from kafka import KafkaProducer

from bench.capture_decode import classic
from streaming.capture.capture import CaptureSettings, capture_offsets
from streaming.demo.local_broker import LocalBroker
from streaming.kafka.topics import ensure_topics


class _Stamped:
    """A text sink that notes when each generation event was written."""

    def __init__(self) -> None:
        self.written: dict[int, float] = {}

    def write(self, text: str) -> None:
        now = time.monotonic()
        for line in text.splitlines():
            ev = json.loads(line)
            if ev["type"] == "generation":
                self.written[ev["generation"]] = now

    def flush(self) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generations", type=int, default=50)
    ap.add_argument("--every", type=float, default=0.2, metavar="SECONDS")
    args = ap.parse_args()
    with LocalBroker() as broker:
        topic = f"offsets-{uuid.uuid4().hex[:8]}"
        ensure_topics(broker.bootstrap, {topic: 1, "topic-0": 40})
        sink, done = _Stamped(), threading.Event()
        settings = CaptureSettings(broker.bootstrap, topic, poll_interval=1.0)
        worker = threading.Thread(target=capture_offsets, args=(settings, sink, io.StringIO()),
                                  kwargs={"stop": done.is_set}, daemon=True)
        worker.start()
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", linger_ms=0)
        acked: dict[int, float] = {}
        for g in range(1, args.generations + 1):
            key, value = classic("lag-group", g, 10, "topic-0")
            producer.send(topic, key=key, value=value).get(timeout=30)
            acked[g] = time.monotonic()
            time.sleep(args.every)
        deadline = time.monotonic() + 30
        while len(sink.written) < args.generations and time.monotonic() < deadline:
            time.sleep(0.05)
        done.set()
        worker.join(timeout=30)
        producer.close()
    lags = sorted((sink.written[g] - acked[g]) * 1000 for g in acked if g in sink.written)
    print(f"{len(lags)}/{args.generations} generations captured; lag ms: median {statistics.median(lags):.0f}, "
          f"p90 {lags[int(len(lags) * 0.9) - 1]:.0f}, max {lags[-1]:.0f}")


if __name__ == "__main__":
    main()
