"""`replay` of a file and `serve` of the same log through Kafka give the same diffs and dead letters.

Everything but `emitted_ts` and the source positions (file/line vs topic/partition/offset) must match,
per group in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pipeline_helpers import by_group, config, run_replay, run_serve_once, serve_topics, write_log

from streaming.kafka.loader import load_log

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

SAMPLES = Path(__file__).parents[2] / "whatif" / "samples"


def test_replay_and_serve_agree(spark, kafka_bootstrap, unique_topic, tmp_path: Path) -> None:
    lines = [line for name in ("rolling-deploy.jsonl", "static-restarts.jsonl")
             for line in (SAMPLES / name).read_bytes().splitlines() if line.strip()]
    lines[10:10] = [b'{"group": "broken', b'{"group": "payments-app", "type": "leave", "member": "nobody"}']
    log = write_log(tmp_path / "log.jsonl", lines)
    cfg = config("sticky,cooperative-sticky,roundrobin")

    replay_diffs, replay_dead = run_replay(spark, log, tmp_path / "out", cfg)
    topics = serve_topics(unique_topic)
    load_log(log, kafka_bootstrap, topics.events, progress=None)
    serve_diffs, serve_dead = run_serve_once(spark, kafka_bootstrap, topics, tmp_path / "ckpt", cfg, max_events=40)

    assert len(replay_diffs) > 50 and len(replay_dead) == 2
    assert by_group(serve_diffs, positions=False) == by_group(replay_diffs, positions=False)
    # bad lines have no `ts`: their event time is the Kafka record's timestamp in serve, none in a file
    assert all(d["event_ts"] is not None for d in serve_dead) and all(d["event_ts"] is None for d in replay_dead)
    untimed = [{**d, "event_ts": None} for d in serve_dead]
    assert by_group(untimed, positions=False) == by_group(replay_dead, positions=False)
