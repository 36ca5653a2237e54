"""`rebalance serve` as an operator runs it (a subprocess against the session's broker): Ctrl-C."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_helpers import interrupt, serve_topics, spark_jvm_booting

from streaming.kafka.loader import load_log

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

SAMPLES = Path(__file__).parents[2] / "whatif" / "samples"


@pytest.mark.parametrize("moment", ["jvm-starting", "state"])
def test_ctrl_c_during_serve_exits_130_with_one_line(kafka_bootstrap, unique_topic, tmp_path: Path,
                                                     moment: str) -> None:
    """Ctrl-C as a terminal sends it (SIGINT to the whole process group) while Spark's JVM boots, or in the
    middle of a micro-batch (held there by `streaming.spark.faults`): the query is stopped, its tasks are
    cancelled without Spark's task-abort reports or any traceback, one line, exit code 130 (mirrors
    replay's test)."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(f.read_bytes() for f in sorted(SAMPLES.glob("*.jsonl"))))
    topics = serve_topics(unique_topic)
    load_log(log, kafka_bootstrap, topics.events, progress=None)
    marker = tmp_path / "in-batch-1"
    env = dict(os.environ)
    if moment == "state":
        env.update(REBALANCE_FAULT="state:1", REBALANCE_FAULT_MARKER=str(marker))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streaming.cli.main", "serve", "--bootstrap", kafka_bootstrap,
         "--events-topic", topics.events, "--diffs-topic", topics.diffs, "--dead-letter-topic", topics.dead_letter,
         "--checkpoint", str(tmp_path / "ckpt"), "--max-events-per-batch", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=tmp_path, env=env)
    line = "rebalance serve: interrupted; the next start with the same --checkpoint resumes after the last " \
           "completed batch"
    if moment == "state":
        code, after = interrupt(proc, "serve", marker.exists)  # batch 1 is inside the state function
        assert code == 130, after
        assert after == [line], after
    else:  # all of stderr: the JVM's boot lines come before the one line, and no trace of any kind
        code, after = interrupt(proc, "serve", lambda: spark_jvm_booting(proc.pid), after_batch=False)
        assert code == 130, after
        assert after[-1] == line and after.count(line) == 1, after
        assert not [text for text in after if re.search(r"Traceback|Exception|Error|\tat ", text)], after
