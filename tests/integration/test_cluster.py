"""The unchanged job on a Spark standalone cluster: a master and two workers on loopback, started from the
pyspark wheel's own launcher (its package directory is a SPARK_HOME), and `rebalance replay --master
spark://...` writing the same diffs as local mode (every field but `emitted_ts`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from pipeline_helpers import by_group

from streaming.cli.main import main
from streaming.spark.pipelines import read_output

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "whatif" / "samples" / "mixed-subscriptions.jsonl"
STARTUP_S = 300  # JVM start-up on a loaded 2-core machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_env(tmp: Path) -> dict[str, str]:
    import pyspark

    return {**os.environ, "SPARK_HOME": str(Path(pyspark.__file__).parent), "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(tmp / "logs"), "SPARK_WORKER_DIR": str(tmp / "work"),
            "PYSPARK_PYTHON": sys.executable}


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except OSError:
        return -1


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(`spark://127.0.0.1:PORT`, its directory) of a standalone master with two one-core workers (work
    directories `work1`, `work2` there), all from the wheel."""
    tmp = tmp_path_factory.mktemp("standalone")
    env = _spark_env(tmp)
    spark_class = str(Path(env["SPARK_HOME"]) / "bin" / "spark-class")
    port, ui_port = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    logs = []

    def start(name: str, *args: str) -> None:
        log = (tmp / f"{name}.log").open("wb")
        logs.append(log)
        procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL))

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui_port))
        for i in (1, 2):
            start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                  "--memory", "2g", "--webui-port", str(_free_port()), "--work-dir", str(tmp / f"work{i}"), url)
        deadline = time.monotonic() + STARTUP_S
        while _alive_workers(ui_port) < 2:
            dead = [p.args[1] for p in procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                output = "\n".join((tmp / f"{n}.log").read_text()[-2000:] for n in ("master", "worker1", "worker2"))
                pytest.fail(f"standalone cluster not up (exited: {dead}):\n{output}")
            time.sleep(1)
        yield url, tmp
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()


def test_replay_on_a_standalone_cluster_matches_local_mode(spark, standalone: tuple[str, Path],
                                                           tmp_path: Path) -> None:
    master, cluster_dir = standalone
    local_out, cluster_out = tmp_path / "local", tmp_path / "cluster"
    assert main(["replay", str(SAMPLE), "--out", str(local_out), "--strategies", "all"]) == 0

    # A new process: a SparkContext's master is fixed for the life of the process (the session fixture's is local).
    proc = subprocess.run(
        [sys.executable, "-m", "streaming.cli.main", "replay", str(SAMPLE), "--out", str(cluster_out),
         "--strategies", "all", "--master", master,
         "--spark-conf", "spark.executor.memory=1g", "--spark-conf", "spark.driver.memory=1g"],
        cwd=tmp_path, env=_spark_env(tmp_path), capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]

    local, cluster = read_output(local_out), read_output(cluster_out)
    assert local, "the sample produced no diffs"
    assert len(cluster) == len(local)
    assert by_group(cluster) == by_group(local)  # every field but emitted_ts, in each group's order
    # the job ran on the cluster: both workers started an executor for it
    assert all(list((cluster_dir / w).glob("app-*")) for w in ("work1", "work2"))


def test_master_and_spark_conf_are_checked() -> None:
    assert main(["replay", str(SAMPLE), "--master", "localhost:7077"]) == 2
    assert main(["replay", str(SAMPLE), "--spark-conf", "executor.memory"]) == 2
