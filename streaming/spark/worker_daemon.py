"""Spark's Python worker daemon (`pyspark.daemon`), quiet when a run is interrupted: Spark starts it by this
name (`spark.python.daemon.module`, set in `streaming.spark.session`).

Ctrl-C at a terminal sends SIGINT to the whole foreground process group: the command, the Spark JVM (which
PySpark starts ignoring it) and the daemon and workers the JVM forks. The command alone handles Ctrl-C: it
stops the query, Spark cancels its tasks, and the JVM ends the daemon when the command exits. Two things here
keep the workers out of it:

- SIGINT is blocked in the daemon, so every worker it forks inherits the mask: `pyspark.daemon` reinstalls
  Python's SIGINT handler in each worker, which made a worker mid-task raise KeyboardInterrupt; a blocked
  signal stays pending whatever handler is installed. SIGTERM, SIGHUP and SIGKILL, which Spark uses to end
  workers, are untouched.
- A worker whose socket the JVM closed (its task was cancelled, or the JVM is gone) ends without a report:
  `pyspark.daemon` prints the BrokenPipeError of its last flush as a traceback, after the command's own
  "interrupted" line, although nobody is left to read the result. Any other error is reported as before.
"""

from __future__ import annotations

import signal
import socket

from pyspark import daemon

from streaming.build import prefer_fresh_sources

_pyspark_worker = daemon.worker


def worker(sock: socket.socket, authenticated: bool) -> int:
    """`pyspark.daemon.worker`; a connection the JVM dropped ends the worker (a non-zero code: not reused)."""
    try:
        return _pyspark_worker(sock, authenticated)
    except (BrokenPipeError, ConnectionResetError):
        return 1


if __name__ == "__main__":
    prefer_fresh_sources()  # the workers run the build the driver runs (they fork from here)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    daemon.worker = worker  # `daemon.manager` calls the module's `worker` for each forked process
    daemon.manager()
