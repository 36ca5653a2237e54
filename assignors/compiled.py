"""Which modules run compiled, and the guard that keeps a stale build from running.

`setup.py` compiles the loop's hot modules with mypyc; an editable install leaves each extension
(`sticky_engine.cpython-311-x86_64-linux-gnu.so`) beside its source, and Python imports the extension first,
so after an edit the old build would silently run. `prefer_fresh_sources` runs when this module is first
imported, which both top packages do before anything else: once a compiled module's source no longer has the
hash setup.py recorded (`compiled-sources.json` at the project root), every compiled module is imported from
its source, with one line on stderr. `REBALANCE_PURE_PYTHON=1` imports every one from source: the pure-Python
fallback, which gives the same results (tests/test_compiled.py).

Kernels (`assignors/*_kernel.pyx`, Cython) are typed-C versions of a few pure-Python functions, which stay their
fallback and their specification. They have no Python source to fall back to, so callers load them only through
`kernel`, which answers None where the pure function must run instead.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType

PURE_PYTHON_ENV = "REBALANCE_PURE_PYTHON"
MANIFEST = "compiled-sources.json"  # written by setup.py: source path -> sha256 of what was compiled
PACKAGES = ("assignors", "streaming")
_ROOT = Path(__file__).resolve().parent.parent


def compiled_modules(root: Path) -> dict[str, Path]:
    """Module name -> source path of every module with an extension beside its source under `root`'s packages."""
    found = {}
    for package in PACKAGES:
        for suffix in EXTENSION_SUFFIXES:
            for ext in (root / package).rglob(f"*{suffix}"):
                source = ext.with_name(ext.name[: -len(suffix)] + ".py")
                if source.exists():
                    found[".".join(source.relative_to(root).with_suffix("").parts)] = source
    return found


def sources_to_prefer(root: Path, pure: bool) -> tuple[dict[str, Path], list[str]]:
    """The compiled modules to import from source, and which of them changed since the build.

    One stale module sends all of them to their sources: mypyc compiles them as one group whose modules call
    each other in C, so a compiled caller would still run the old build of an edited module. Without a
    manifest (a wheel install, where sources do not change) every extension is trusted."""
    modules = compiled_modules(root)
    if pure:
        return modules, []
    manifest_path = root / MANIFEST
    if not modules or not manifest_path.exists():
        return {}, []
    try:
        built = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        built = {}
    stale = sorted(name for name, source in modules.items()
                   if built.get(source.relative_to(root).as_posix()) != hashlib.sha256(source.read_bytes()).hexdigest())
    return (modules if stale else {}), stale


class _SourceFirst(MetaPathFinder):
    """Finds the listed modules' sources ahead of the path finder, which would load their extensions."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        source = self.sources.get(fullname)
        return None if source is None else spec_from_file_location(fullname, source)


def prefer_fresh_sources() -> None:
    """Put the guard in front of the import system (once: this module runs once per process)."""
    sources, stale = sources_to_prefer(_ROOT, os.environ.get(PURE_PYTHON_ENV) == "1")
    if stale:
        print(f"rebalance-replay: {', '.join(stale)} changed since compiled: every compiled module runs from its "
              f"source (`pip install -e .` compiles them again)", file=sys.stderr)
    if sources:
        sys.meta_path.insert(0, _SourceFirst(sources))


def stale_kernel(root: Path, name: str) -> bool:
    """Whether kernel `name`'s .pyx differs from what setup.py built (a wheel install, without a manifest, is trusted).
    A kernel is built on its own, so only that kernel gives way to its pure-Python function."""
    manifest_path = root / MANIFEST
    if not manifest_path.exists():
        return False
    source = root.joinpath(*name.split(".")).with_suffix(".pyx")
    try:
        built = json.loads(manifest_path.read_text()).get(source.relative_to(root).as_posix())
    except (OSError, ValueError, AttributeError):
        return True
    return not source.exists() or built != hashlib.sha256(source.read_bytes()).hexdigest()


def kernel(name: str) -> ModuleType | None:
    """Kernel module `name` (`assignors.reassign_kernel`), or None: a pure-Python run, no build of it, or a .pyx
    edited since the build (said once on stderr)."""
    if os.environ.get(PURE_PYTHON_ENV) == "1":
        return None
    if stale_kernel(_ROOT, name):
        print(f"rebalance-replay: {name} changed since compiled: its pure-Python version runs (`pip install -e .` "
              f"compiles it again)", file=sys.stderr)
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def is_compiled(module: ModuleType) -> bool:
    """True when `module` was loaded from a compiled extension."""
    return any(str(getattr(module, "__file__", "")).endswith(suffix) for suffix in EXTENSION_SUFFIXES)


def loaded_compiled() -> list[str]:
    """This project's modules that run compiled in this process (mypyc's shared library not counted)."""
    return sorted(name for name, module in list(sys.modules.items())
                  if name.split(".")[0] in PACKAGES and not name.endswith("__mypyc") and module is not None
                  and is_compiled(module))


prefer_fresh_sources()
