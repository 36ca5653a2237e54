"""The Cython kernels' loader.

Kernels (`*_kernel.pyx`: the assignors' three, and `streaming/core/load_kernel.pyx`) are typed-C versions of a
few pure-Python functions, which stay their specification and their fallback: a caller takes `kernel(name)` once
and runs the pure function where it is None.
Which build a program runs (a kernel edited since the build, `REBALANCE_PURE_PYTHON=1`) is the program's choice,
made before the library loads: `streaming.build.prefer_fresh_sources`.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def kernel(name: str) -> ModuleType | None:
    """Kernel module `name` (`assignors.reassign_kernel`), or None where it is not built or the program runs the
    pure-Python functions."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
