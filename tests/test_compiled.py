"""The compiled build (setup.py, streaming/build.py): the pure-Python fallback writes the same records, the
build is what runs when it was made, a stale build gives way to its edited source in the programs that ask,
and importing the library leaves the import system as it was."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from streaming.build import MANIFEST, PURE_PYTHON_ENV, Plan, built_modules, plan

ROOT = Path(__file__).resolve().parents[1]

# Every record of the bundled histories and a generated log with traffic under every strategy, hashed, with the
# modules that run compiled once every module the build compiled is imported: in a fresh process, so the
# environment decides.
_DIGEST = """
from streaming.build import MANIFEST, loaded_compiled, prefer_fresh_sources
prefer_fresh_sources()
import hashlib, importlib, json, tempfile
from pathlib import Path
from assignors.compiled import kernel
from assignors.registry import STRATEGIES
from bench.pipeline import generate_log
from streaming.core.config import Limits, PipelineConfig
from streaming.core.local import read_jsonl, replay
logs = [*sorted(Path("whatif/samples").glob("*.jsonl")),
        generate_log(Path(tempfile.mkdtemp()) / "log.jsonl", 600, 60, traffic=0.1)]
digest, records = hashlib.sha256(), 0
for strategy in STRATEGIES:
    for log in logs:
        for rec in replay(read_jsonl(log), PipelineConfig((strategy,), Limits()), lambda: 0, max_events_per_batch=7):
            digest.update(repr((rec.kind, rec.key, rec.value, rec.order)).encode())
            records += 1
for path in json.loads(Path(MANIFEST).read_text()) if Path(MANIFEST).exists() else []:
    name = ".".join(Path(path).with_suffix("").parts)
    kernel(name) if path.endswith(".pyx") else importlib.import_module(name)
print(json.dumps([digest.hexdigest(), records, loaded_compiled()]))
"""


def _digest(pure: bool) -> tuple[str, int, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON_ENV} | ({PURE_PYTHON_ENV: "1"} if pure else {})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", _DIGEST], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    digest, records, compiled = json.loads(out.splitlines()[-1])
    return digest, records, compiled


def test_pure_python_writes_what_the_build_writes() -> None:
    """The fallback is the same sources interpreted: every record must be byte-identical, and with
    REBALANCE_PURE_PYTHON=1 no compiled module may load. Where the install compiled (the manifest exists),
    every module it compiled must be the one that ran: a build that silently stopped loading fails here."""
    pure_digest, pure_records, pure_compiled = _digest(pure=True)
    digest, records, compiled = _digest(pure=False)
    assert pure_compiled == []
    assert records == pure_records > 10_000
    assert digest == pure_digest
    if (ROOT / MANIFEST).exists():
        built = {".".join(Path(path).with_suffix("").parts) for path in json.loads((ROOT / MANIFEST).read_text())}
        guarded = plan(ROOT, pure=False)
        fresh = built - set(guarded.sources) - guarded.blocked
        assert fresh <= set(compiled), f"built but not loaded: {sorted(fresh - set(compiled))}"
    else:
        print("no compiled build here (pure-Python install): compared pure Python with itself")


def _fake_build(root: Path, sources: dict[str, str], manifest: dict[str, str] | None) -> None:
    """A tree shaped like an editable install: sources (`.py`, or a kernel's `.pyx`), an (empty) extension beside
    each, and setup.py's manifest."""
    for path, text in sources.items():
        source = root / path
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text)
        source.with_name(source.stem + EXTENSION_SUFFIXES[0]).write_bytes(b"")
    if manifest is not None:
        (root / MANIFEST).write_text(json.dumps(manifest))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_an_edited_source_sends_the_whole_build_to_its_sources(tmp_path: Path) -> None:
    """Compiled modules call each other in C: with one of them edited, all must run from source."""
    sources = {"assignors/sticky_engine.py": "X = 1\n", "streaming/core/rounds.py": "Y = 2\n"}
    built = {"assignors/sticky_engine.py": _sha("X = 1\n"), "streaming/core/rounds.py": _sha("Y = 2\n")}
    _fake_build(tmp_path, sources, built)
    assert set(built_modules(tmp_path)) == {"assignors.sticky_engine", "streaming.core.rounds"}
    assert plan(tmp_path, pure=False) == Plan({}, frozenset(), [])  # fresh: the build runs
    (tmp_path / "streaming/core/rounds.py").write_text("Y = 3\n")
    assert plan(tmp_path, pure=False) == Plan({"assignors.sticky_engine": tmp_path / "assignors/sticky_engine.py",
                                               "streaming.core.rounds": tmp_path / "streaming/core/rounds.py"},
                                              frozenset(), ["streaming.core.rounds"])


def test_pure_python_prefers_every_source_and_a_wheel_trusts_its_build(tmp_path: Path) -> None:
    _fake_build(tmp_path, {"assignors/optimality.py": "Z = 3\n", "assignors/fast_kernel.pyx": "Z = 3\n"},
                manifest=None)
    assert plan(tmp_path, pure=True) == Plan({"assignors.optimality": tmp_path / "assignors/optimality.py"},
                                             frozenset({"assignors.fast_kernel"}), [])
    assert plan(tmp_path, pure=False) == Plan({}, frozenset(), [])  # no manifest: sources of a wheel cannot change


def test_a_module_missing_from_the_manifest_or_a_broken_manifest_is_stale(tmp_path: Path) -> None:
    _fake_build(tmp_path, {"assignors/sticky.py": "A = 1\n"}, {"assignors/other.py": _sha("A = 1\n")})
    assert plan(tmp_path, pure=False).stale == ["assignors.sticky"]
    for broken in ("{not json", "[1, 2]"):
        (tmp_path / MANIFEST).write_text(broken)
        assert plan(tmp_path, pure=False).stale == ["assignors.sticky"]


def test_an_edited_kernel_alone_gives_way(tmp_path: Path) -> None:
    """A kernel is built on its own and has no Python source to import instead: only it is held back (its
    caller runs the pure-Python function), and the mypyc-compiled modules keep running."""
    sources = {"assignors/fast_kernel.pyx": "def f(): return 1\n", "assignors/sticky.py": "A = 1\n"}
    _fake_build(tmp_path, sources, {path: _sha(text) for path, text in sources.items()})
    assert plan(tmp_path, pure=False) == Plan({}, frozenset(), [])
    (tmp_path / "assignors/fast_kernel.pyx").write_text("def f(): return 2\n")
    assert plan(tmp_path, pure=False) == Plan({}, frozenset({"assignors.fast_kernel"}), ["assignors.fast_kernel"])


_PROGRAM = """
from streaming.build import prefer_fresh_sources
prefer_fresh_sources()
prefer_fresh_sources()
import assignors.hot as h
from assignors.compiled import kernel
print(h.VALUE, kernel("assignors.fast_kernel"))
"""


def _fake_project(root: Path, hot: str) -> None:
    """The guard and the kernel loader, copied, over a build whose module and kernel cannot load (empty
    extensions) and whose sources changed since it was made."""
    for path in ("streaming/build.py", "assignors/compiled.py"):
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_bytes((ROOT / path).read_bytes())
        (root / path).with_name("__init__.py").write_text("")
    _fake_build(root, {"assignors/hot.py": hot, "assignors/fast_kernel.pyx": "def f(): return 2\n"},
                {"assignors/hot.py": _sha("old\n"), "assignors/fast_kernel.pyx": _sha("def f(): return 1\n")})


@pytest.mark.parametrize("pure", ["1", "0"])
def test_the_guard_imports_a_stale_module_from_source(tmp_path: Path, pure: str) -> None:
    """End to end in a fresh process: an extension that cannot load (an empty file) beside an edited source must
    never be imported, pure or not, a changed kernel is not loaded, and the stale build is named on stderr once."""
    _fake_project(tmp_path, "VALUE = 'from source'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), PURE_PYTHON_ENV: pure}
    run = subprocess.run([sys.executable, "-c", _PROGRAM], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True)
    assert run.stdout.strip() == "from source None"
    assert run.stderr.count("changed since compiled") == (pure != "1")


def test_the_guard_called_after_the_library_loaded_refuses(tmp_path: Path) -> None:
    """Too late to choose: a module already imported would keep running what it was loaded from."""
    _fake_project(tmp_path, "VALUE = 'from source'\n")
    late = ("import sys, types; sys.modules['assignors.hot'] = types.ModuleType('assignors.hot')\n"
            "from streaming.build import prefer_fresh_sources\nprefer_fresh_sources()\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), PURE_PYTHON_ENV: "1"}
    run = subprocess.run([sys.executable, "-c", late], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode != 0
    assert "prefer_fresh_sources() called after assignors.hot was imported" in run.stderr


@pytest.mark.parametrize("pure", ["1", "0"])
def test_importing_the_library_leaves_the_import_system_alone(pure: str) -> None:
    """`import assignors` (or `streaming`, or the state machine) installs no import hook, writes nothing, and
    reads no environment variable: which build runs is the program's choice (streaming.build)."""
    probe = ("import sys; before = list(sys.meta_path); import assignors, streaming, streaming.core.local; "
             "print(sys.meta_path == before, len(sys.meta_path))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           PURE_PYTHON_ENV: pure}
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    assert run.stdout.split()[0] == "True"
    assert "rebalance-replay" not in run.stderr


@pytest.mark.spark
def test_spark_workers_run_the_build_the_driver_runs(spark) -> None:
    """The speed-up must reach the state function: Spark's Python workers import the same modules, compiled
    where the driver's are (both follow the install and REBALANCE_PURE_PYTHON)."""
    import pandas as pd

    from streaming.build import is_compiled
    from streaming.core import group_state

    def compiled_in_worker(batches):
        from streaming.build import is_compiled
        from streaming.core import group_state

        for _ in batches:
            yield pd.DataFrame({"compiled": [is_compiled(group_state)]})

    (row,) = spark.range(1).mapInPandas(compiled_in_worker, "compiled boolean").collect()
    assert row.compiled == is_compiled(group_state)
