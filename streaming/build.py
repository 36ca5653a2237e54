"""Which build a program runs: the compiled extensions `pip install` made, or their Python sources.

An editable install leaves each extension (`rounds.cpython-311-x86_64-linux-gnu.so`, `reassign_kernel...so`)
beside its source, and Python imports the extension first, so after an edit the old build would silently run.
Importing the library changes nothing; a program calls `prefer_fresh_sources()` before its first import of
`assignors` or `streaming.core` (the `rebalance` command, the benchmarks, the tests, Spark's worker daemon):

- a module compiled by mypyc whose source no longer has the hash setup.py recorded (`compiled-sources.json` at
  the project root) sends every mypyc-compiled module to its source: they are one group that calls each other
  in C, so a compiled caller would still run the old build of an edited module;
- a Cython kernel whose `.pyx` changed is not imported, so the pure-Python function it mirrors runs;
- with `REBALANCE_PURE_PYTHON=1` every module runs from source and no kernel loads: the pure-Python run, which
  gives the same results (tests/test_compiled.py).

Either is said once on stderr. Without a manifest (a wheel install, whose sources do not change) the build runs.
This module imports nothing of the project, so calling it comes before any compiled module loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

PURE_PYTHON_ENV = "REBALANCE_PURE_PYTHON"
MANIFEST = "compiled-sources.json"  # written by setup.py: source path -> sha256 of what was compiled
PACKAGES = ("assignors", "streaming")
ROOT = Path(__file__).resolve().parent.parent


def built_modules(root: Path) -> dict[str, Path]:
    """Module name -> source (`.py` for mypyc's modules, `.pyx` for the kernels) of every extension built beside
    its source under `root`'s packages."""
    found = {}
    for package in PACKAGES:
        for suffix in EXTENSION_SUFFIXES:
            for ext in (root / package).rglob(f"*{suffix}"):
                for source_suffix in (".py", ".pyx"):
                    source = ext.with_name(ext.name[: -len(suffix)] + source_suffix)
                    if source.exists():
                        found[_name(root, source)] = source
    return found


def _name(root: Path, source: Path) -> str:
    return ".".join(source.relative_to(root).with_suffix("").parts)


class Plan(NamedTuple):
    """What the guard does: modules imported from their `.py` source, kernels not imported, and the built
    modules whose source changed since the build (what the stderr line names)."""

    sources: dict[str, Path]
    blocked: frozenset[str]
    stale: list[str]


def plan(root: Path, pure: bool) -> Plan:
    """The guard's plan for the build under `root` (see the module's docstring)."""
    modules = built_modules(root)
    python = {name: source for name, source in modules.items() if source.suffix == ".py"}
    kernels = frozenset(name for name, source in modules.items() if source.suffix == ".pyx")
    if pure:  # every kernel, built here or not: one may be found on the path of another install
        every_kernel = frozenset(_name(root, pyx) for package in PACKAGES for pyx in (root / package).rglob("*.pyx"))
        return Plan(python, every_kernel, [])
    manifest_path = root / MANIFEST
    if not modules or not manifest_path.exists():
        return Plan({}, frozenset(), [])
    try:
        built = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        built = {}
    if not isinstance(built, dict):
        built = {}
    stale = sorted(name for name, source in modules.items()
                   if built.get(source.relative_to(root).as_posix()) != hashlib.sha256(source.read_bytes()).hexdigest())
    return Plan(python if any(name in python for name in stale) else {},
                frozenset(name for name in stale if name in kernels), stale)


class _FreshSources(MetaPathFinder):
    """Ahead of the path finder (which would load the extensions): the planned modules from their sources, and
    no module for a blocked kernel (its caller then runs the pure-Python function)."""

    def __init__(self, fresh: Plan) -> None:
        self.plan = fresh

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname in self.plan.blocked:
            raise ModuleNotFoundError(f"{fullname} runs as pure Python here", name=fullname)
        source = self.plan.sources.get(fullname)
        return None if source is None else spec_from_file_location(fullname, source)


def prefer_fresh_sources() -> None:
    """Install the guard in front of the import system (a second call does nothing). Called after a planned
    module was imported, it raises: that module would keep running its old build."""
    if any(isinstance(finder, _FreshSources) for finder in sys.meta_path):
        return
    fresh = plan(ROOT, os.environ.get(PURE_PYTHON_ENV) == "1")
    early = sorted(name for name in (*fresh.sources, *fresh.blocked) if name in sys.modules)
    if early:
        raise RuntimeError(f"prefer_fresh_sources() called after {', '.join(early)} was imported")
    if fresh.stale:
        runs = [*(["every mypyc-compiled module runs from its source"] if fresh.sources else []),
                *(["the changed kernels' Python functions run"] if fresh.blocked else [])]
        print(f"rebalance-replay: {', '.join(fresh.stale)} changed since compiled: {'; '.join(runs)} "
              f"(`pip install -e .` compiles again)", file=sys.stderr)
    if fresh.sources or fresh.blocked:
        sys.meta_path.insert(0, _FreshSources(fresh))


def is_compiled(module: ModuleType) -> bool:
    """True when `module` was loaded from a compiled extension."""
    return any(str(getattr(module, "__file__", "")).endswith(suffix) for suffix in EXTENSION_SUFFIXES)


def loaded_compiled() -> list[str]:
    """This project's modules that run compiled in this process (mypyc's shared library not counted)."""
    return sorted(name for name, module in list(sys.modules.items())
                  if name.split(".")[0] in PACKAGES and not name.endswith("__mypyc") and module is not None
                  and is_compiled(module))
