"""Builds the package with its hot modules compiled by mypyc (`pip install -e .` does this); pure Python otherwise.

A few kernels (`KERNELS`, Cython) are typed-C versions of pure-Python functions, built where Cython and a C
compiler are (`assignors.compiled.kernel` loads them; the pure functions run otherwise). The compiled modules are the
same sources, so every result is byte-identical either way (tests/test_compiled.py); how much faster they run
the plain loop: docs/performance.md. `REBALANCE_PURE_PYTHON=1` at install time skips
the compiler; a machine without one, or a failed compile, installs the pure package with a printed line instead.
"""

import hashlib
import json
import os
from pathlib import Path

from setuptools import setup

# The modules the per-event loop spends its time in (docs/performance.md). Interpreted on purpose: `assignors.model`
# (compiled, its type checks would turn bad input's ValueErrors into TypeErrors; the `GroupSpec` it validates input
# into is compiled, in `assignors.spec`, and so is `assignors.intake`, whose cheap path checks types itself) and
# `assignors.registry` (compiled, `rounds` would call it in C, past the tests that spy on the strategy calls).
COMPILED = [
    "assignors/sticky_engine/engine.py",
    "assignors/sticky_engine/inputs.py",
    "assignors/sticky_engine/constrained.py",
    "assignors/sticky_engine/constrained_bulk.py",
    "assignors/sticky_engine/general.py",
    "assignors/sticky_engine/balance.py",
    "assignors/spec.py",
    "assignors/intake.py",
    "assignors/optimality.py",
    "assignors/sticky.py",
    "assignors/cooperative.py",
    "assignors/javaorder.py",
    "streaming/core/rounds.py",
    "streaming/core/changes.py",
    "streaming/core/round_metrics.py",
    "streaming/core/record_encoding.py",
    "streaming/core/layout.py",
    "streaming/core/group_state.py",
    "streaming/core/events.py",
    "streaming/core/jsontext.py",
    "streaming/core/shape.py",
    "streaming/core/local.py",
    "streaming/exporter/fold.py",
    "assignors/range.py",
    "assignors/roundrobin.py",
    "streaming/core/records.py",
    "streaming/core/state_codec.py",
    "streaming/core/traffic.py",
    "streaming/core/cost.py",
]
# Typed-C kernels: each mirrors a pure-Python function of the package, its fallback (assignors/compiled.py).
KERNELS: list[str] = ["assignors/kept_kernel.pyx", "assignors/reassign_kernel.pyx", "assignors/tally_kernel.pyx",
                      "streaming/core/load_kernel.pyx"]
MANIFEST = "compiled-sources.json"  # what each compiled module was built from (streaming/build.py reads it)


def compiled_extensions() -> list:
    if os.environ.get("REBALANCE_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify

        extensions = mypycify(["--follow-imports=silent", "--ignore-missing-imports", *COMPILED],
                              opt_level="3", group_name="assignors.native")
    except Exception as exc:  # no compiler, or mypy refused a module: pure Python still works
        print(f"rebalance-replay: installing pure Python, mypyc did not compile ({type(exc).__name__}: {exc})")
        return []
    if KERNELS:
        try:
            from Cython.Build import cythonize

            extensions += cythonize(KERNELS, compiler_directives={"language_level": "3"}, quiet=True)
        except Exception as exc:  # the pure-Python functions run instead
            print(f"rebalance-replay: kernels not built, Cython did not compile ({type(exc).__name__}: {exc})")
    for ext in extensions:
        ext.optional = True  # a C compiler error leaves that module interpreted instead of failing the install
    sources = {path: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in COMPILED + KERNELS}
    Path(MANIFEST).write_text(json.dumps(sources, indent=1) + "\n")
    return extensions


setup(ext_modules=compiled_extensions())
