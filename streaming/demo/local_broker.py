"""A throw-away local Kafka-protocol broker (noida-db) for the demo, the tests and the benchmarks.

`LocalBroker` runs the noida-db *binary* itself (not the ``noida-db`` console script, which is a Python wrapper
that would leave the real server orphaned when terminated) on a free loopback port with a temporary data dir, so
``rebalance demo`` and the tests never collide with a broker somebody else runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from importlib.resources import files
from pathlib import Path

from kafka import KafkaAdminClient
from kafka.errors import KafkaError


def noida_binary() -> str:
    """Path of the noida-db server binary shipped in the noida_db wheel (fallback: the console script)."""
    try:
        path = files("noida_db").joinpath("noida-db")
        if path.is_file():
            os.chmod(str(path), 0o755)
            return str(path)
    except ModuleNotFoundError:
        pass
    found = shutil.which("noida-db")
    if not found:
        raise FileNotFoundError("noida-db not found: pip install noida-db==0.2.3")
    return found


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class LocalBroker:
    """``with LocalBroker() as b: b.bootstrap`` -> "127.0.0.1:PORT"; the broker and its data vanish on exit."""

    def __init__(self, port: int | None = None, data_dir: str | Path | None = None, *,
                 host: str = "127.0.0.1", startup_timeout: float = 60.0) -> None:
        self.host = host
        self.port = port or free_port(host)
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="noida-kafka-"))
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self._log = self.data_dir / "broker.log"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> LocalBroker:
        cmd = [noida_binary(), "start", "--only", "kafka", "--kafka-port", str(self.port),
               "--data-dir", str(self.data_dir / "data"), "--host", self.host]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self._log, "wb")  # noqa: SIM115 - handed to the child, closed in stop()
        self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._logfile = log
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"noida-db exited with {self.process.returncode}: {self._tail()}")
            try:
                socket.create_connection((self.host, self.port), timeout=1).close()  # quiet until it listens
                admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=5000)
                try:
                    admin.list_topics()
                    return
                finally:
                    admin.close()
            except (KafkaError, OSError) as exc:
                last = exc
                time.sleep(0.2)
        raise TimeoutError(f"noida-db kafka on {self.bootstrap} not ready after {self.startup_timeout}s: "
                           f"{last}; log: {self._tail()}")

    def _tail(self) -> str:
        try:
            return self._log.read_text(errors="replace")[-800:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if getattr(self, "_logfile", None) is not None:
            self._logfile.close()
            self._logfile = None
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
