"""`pip install .` (not only `-e .`) must ship every package of the three rooms, subpackages included."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_takes_every_package_of_the_project():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert isinstance(config["packages"], dict), "an explicit package list misses subpackages: use packages.find"
    shipped = set(find_packages(str(ROOT), include=config["packages"]["find"]["include"]))
    wanted = {".".join(p.parent.relative_to(ROOT).parts) for room in ("assignors", "streaming", "whatif")
              for p in (ROOT / room).rglob("__init__.py")}
    assert wanted <= shipped and "streaming.cli" in wanted and "tests" not in shipped
