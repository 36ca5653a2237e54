"""The benchmarks (`python -m bench.pipeline`, `bench.assignors`, ...): each one runs the build that matches the
sources, or the sources themselves with REBALANCE_PURE_PYTHON=1, including the processes it spawns."""

from streaming.build import prefer_fresh_sources

prefer_fresh_sources()
