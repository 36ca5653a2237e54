"""The house's dependencies point one way: cli -> exporter -> kafka; cli -> spark, kafka, whatif -> core -> assignors.

Read from the source with `ast` (every `import`, at any depth, including the lazy imports inside
functions), so an upward import fails here even when no test happens to execute it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# room -> the rooms and third-party packages it must never import
FORBIDDEN = {
    "assignors": ("streaming", "whatif", "pyspark", "kafka"),
    "streaming.core": ("streaming.spark", "streaming.kafka", "streaming.cli", "streaming.exporter", "whatif",
                       "pyspark", "kafka", "prometheus_client"),
    "streaming.kafka": ("streaming.spark", "streaming.cli", "streaming.exporter", "whatif", "pyspark"),
    "streaming.exporter": ("streaming.spark", "streaming.cli", "whatif", "pyspark"),
    "streaming.spark": ("streaming.cli", "whatif"),
    "whatif": ("streaming.spark", "streaming.kafka", "streaming.cli", "pyspark", "kafka"),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def violations(room: str, forbidden: tuple[str, ...], root: Path = ROOT) -> list[str]:
    """`file:line imports module` for every import from `room`'s files into a forbidden room."""
    out = []
    for path in sorted((root / room.replace(".", "/")).rglob("*.py")):
        for line, module in imported_modules(path):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                out.append(f"{path.relative_to(root)}:{line} imports {module}")
    return out


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_no_upward_import(room):
    assert violations(room, FORBIDDEN[room]) == []


def test_an_upward_import_is_caught(tmp_path):
    """The check itself can fail: a core module importing the command line is reported with its line."""
    core = tmp_path / "streaming" / "core"
    core.mkdir(parents=True)
    (core / "bad.py").write_text("def f():\n    from streaming.cli.usage import UsageError\n")
    assert violations("streaming.core", FORBIDDEN["streaming.core"], tmp_path) == [
        "streaming/core/bad.py:2 imports streaming.cli.usage.UsageError"
    ]
