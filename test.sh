#!/usr/bin/env bash
# Sets up everything from scratch (a venv with the project, which brings its own Java; Chromium for the report's
# browser tests and Prometheus for the exporter's) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")"
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)   # the real-Prometheus exporter test
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[test]"
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
# the tests that patch a compiled module's internals, again on the pure-Python modules (tests/conftest.py);
# exit code 5 = the arguments selected none of them
REBALANCE_PURE_PYTHON=1 .venv/bin/python -m pytest -m pure_python -q "$@" || [ $? -eq 5 ]
