"""The dashboard's PromQL, as the dashboard test and the real-Prometheus test read it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "dashboards" / "rebalance-replay.json"
GRAFANA_BUILTINS = ("__rate_interval", "__interval", "__range")
VARIABLE = re.compile(r"\$\{?(\w+)\}?")


def load_dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def panel_queries(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(panel title, refId, expr) of every query target of every panel, rows included."""
    for panel in dashboard["panels"]:
        for inner in [panel, *panel.get("panels", [])]:
            for target in inner.get("targets", []):
                yield inner["title"], target["refId"], target["expr"]


def variable_queries(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(variable name, the PromQL inside its label_values(...)) of every query variable."""
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", var["query"]["query"])
            assert match, f"variable {var['name']}: expected label_values(QUERY, LABEL)"
            yield var["name"], match.group(1)


def expand(expr: str, values: Mapping[str, str]) -> str:
    """`expr` with Grafana's variables replaced as Grafana would for the given values."""
    return VARIABLE.sub(lambda m: values[m.group(1)], expr)
