"""The house's dependencies point one way: the commands (cli) -> the adapters (spark, capture, exporter -> kafka)
and whatif -> core -> assignors. The demo's local broker is support, not product: only the commands import it.

Read from the source with `ast` (every `import`, at any depth, including the lazy imports inside
functions), so an upward import fails here even when no test happens to execute it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOP = "streaming.cli"  # the commands: every other room is theirs to import
# room -> the rooms and third-party packages it must never import
FORBIDDEN = {
    "assignors": ("streaming", "whatif", "pyspark", "kafka"),
    "streaming.core": ("streaming.spark", "streaming.kafka", "streaming.capture", "streaming.cli", "streaming.exporter",
                       "streaming.demo", "whatif", "pyspark", "kafka", "prometheus_client"),
    "streaming.kafka": ("streaming.spark", "streaming.capture", "streaming.cli", "streaming.exporter", "streaming.demo",
                        "whatif", "pyspark"),
    "streaming.capture": ("streaming.spark", "streaming.cli", "streaming.exporter", "streaming.demo", "whatif",
                          "pyspark"),
    "streaming.exporter": ("streaming.spark", "streaming.capture", "streaming.cli", "streaming.demo", "whatif",
                           "pyspark"),
    "streaming.spark": ("streaming.capture", "streaming.cli", "streaming.exporter", "streaming.demo", "whatif"),
    "streaming.demo": ("streaming.spark", "streaming.capture", "streaming.cli", "streaming.exporter", "whatif",
                       "pyspark"),
    "whatif": ("streaming.spark", "streaming.kafka", "streaming.capture", "streaming.cli", "streaming.demo", "pyspark",
               "kafka"),
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


def rooms(root: Path = ROOT) -> set[str]:
    """Every package of the house's top level and of `streaming`, by its dotted name."""
    return {"assignors", "whatif"} | {f"streaming.{p.parent.name}" for p in (root / "streaming").glob("*/__init__.py")}


def test_every_room_has_its_rules():
    """A new room under streaming/ fails here until FORBIDDEN says what it must never import."""
    assert rooms() - {TOP} == set(FORBIDDEN)


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_no_upward_import(room):
    assert violations(room, FORBIDDEN[room]) == []


@pytest.mark.parametrize(("room", "imported"), [
    ("streaming.core", "streaming.cli.usage.UsageError"),
    ("streaming.kafka", "streaming.capture.coordinator_events.Translator"),
    ("streaming.spark", "streaming.demo.local_broker.LocalBroker"),
])
def test_an_upward_import_is_caught(tmp_path, room, imported):
    """The check itself can fail: a lazy import into a forbidden room is reported with its line."""
    folder = tmp_path / room.replace(".", "/")
    folder.mkdir(parents=True)
    module, name = imported.rsplit(".", 1)
    (folder / "bad.py").write_text(f"def f():\n    from {module} import {name}\n")
    assert violations(room, FORBIDDEN[room], tmp_path) == [f"{room.replace('.', '/')}/bad.py:2 imports {imported}"]
