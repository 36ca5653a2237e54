"""`rebalance conformance LOG`: one line per generation, a summary, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assignors import STRATEGIES
from streaming.cli.main import main


def gen(generation: int, assigned: dict[str, list[int]], protocol: str = "range", **extra: object) -> dict:
    return {"group": "g", "type": "generation", "generation": generation, "protocol": protocol,
            "members": {mid: {"topics": ["t"], "assigned": {"t": ps}} for mid, ps in assigned.items()}, **extra}


def write(tmp_path: Path, lines: list[object]) -> str:
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return str(path)


def test_lines_summary_and_exit_code_1_when_a_generation_differs(tmp_path: Path, capsys) -> None:
    log = write(tmp_path, [
        {"group": "g", "type": "partitions", "partitions": {"t": 4}},
        gen(1, {"a": [0, 1], "b": [2, 3]}),
        gen(2, {"a": [0], "b": [1, 2, 3]}),
        {"group": "g", "type": "partitions", "partitions": {"t": 6}},
        gen(3, {"a": [0, 1, 2], "b": [3, 4, 5]}),
        gen(4, {"a": [0, 1, 2], "b": [3, 4, 5]}, protocol="my-assignor"),
        "not json",
        {"group": "g", "type": "generation", "generation": 5, "protocol": "range", "members": {"a": {}}},
    ])
    assert main(["conformance", log]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "g generation 1 range: conforms (moves observed 0, expected 0, min 0)",
        "g generation 2 range: DIFFERS (moves observed 1, expected 0, min 1): a -t[1]; b +t[1]"
        "  (+ observed only, - expected only)",
        "g generation 3 range: conforms (moves observed 2, expected 2, min 0)",
        "g generation 4 my-assignor: not checked (protocol 'my-assignor' is not one of the library's strategies "
        f"({', '.join(STRATEGIES)}))",
        "my-assignor: 1 generations, 0 conform, 0 differ, 1 not checked",
        "range: 3 generations, 2 conform, 1 differ, 0 not checked",
        "total: 4 generations, 2 conform, 1 differ, 1 not checked",
        "skipped lines: 2",
    ]
    assert f"{log}:7: skipped: " in err and f"{log}:8: skipped: " in err and "topics" in err.splitlines()[1]


def test_json_records_and_exit_code_0(tmp_path: Path, capsys) -> None:
    log = write(tmp_path, [
        {"group": "g", "type": "partitions", "partitions": {"t": 3}},
        gen(7, {"a": [0, 1], "b": [2]}, ts=5, source={"file": "x", "line": 1}),
    ])
    assert main(["conformance", "--json", log]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [{
        "group": "g", "generation": 7, "protocol": "range", "conforms": True, "differences": {},
        "observed_moves": 0, "expected_moves": 0, "min_moves": 0, "ts": 5, "source": {"file": "x", "line": 1},
    }]
    assert "range: 1 generations, 1 conform" in err


def test_unreadable_log_is_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["conformance", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


@pytest.mark.parametrize("deleted", [True, False])
def test_delete_topic_drops_the_metadata(tmp_path: Path, capsys, deleted: bool) -> None:
    """After delete_topic the leader has no metadata for t: Kafka assigns nothing of it."""
    events: list[object] = [{"group": "g", "type": "partitions", "partitions": {"t": 2}}]
    if deleted:
        events.append({"group": "g", "type": "delete_topic", "topic": "t"})
    events.append(gen(2, {"a": [], "b": []}))
    assert main(["conformance", write(tmp_path, events)]) == (0 if deleted else 1)


def test_kafka_assignor_error_line(tmp_path: Path, capsys) -> None:
    log = write(tmp_path, [
        {"group": "g", "type": "partitions", "partitions": {"t": 1}},
        {"group": "g", "type": "generation", "generation": 3, "protocol": "sticky",
         "members": {"c0": {"topics": ["t"], "owned": {"t": [985]}, "assigned": {"t": [0]}}}},
    ])
    assert main(["conformance", log]) == 1
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("g generation 3 sticky: DIFFERS (moves observed 0, min 0): Java's leader would have failed")
    assert "java.lang.IllegalStateException" in line


def test_the_command_writes_the_pipelines_conformance_records(tmp_path: Path, capsys) -> None:
    """Moves count against the last recorded assignment in both, through leaves, deleted topics, a static member
    under a new id, a generation without assignments, an emptied group and a deleted group."""
    from streaming.core.config import PipelineConfig
    from streaming.core.local import read_jsonl, replay

    def g(n: int, assigned: dict[str, dict[str, list[int]]], **members: dict) -> dict:
        out = {mid: {"topics": sorted(a) or ["t"], "assigned": a} for mid, a in assigned.items()}
        for mid, extra in members.items():
            out.setdefault(mid, {"topics": ["t"]}).update(extra)
        return {"group": "g", "type": "generation", "generation": n, "protocol": "range", "members": out}

    log = write(tmp_path, [
        {"group": "g", "type": "partitions", "partitions": {"t": 4, "u": 2}},
        g(1, {"a": {"t": [0, 1], "u": [0]}, "b": {"t": [2, 3], "u": [1]}}, b={"instance_id": "host-b"}),
        {"group": "g", "type": "join", "member": "b2", "topics": ["t", "u"], "instance_id": "host-b"},
        g(2, {"a": {"t": [0, 1], "u": [0]}, "b2": {"t": [2, 3], "u": [1]}}, b2={"instance_id": "host-b"}),
        {"group": "g", "type": "delete_topic", "topic": "u"},
        g(3, {"a": {"t": [0]}, "b2": {"t": [1, 2, 3]}}, b2={"instance_id": "host-b"}),
        g(4, {}, a={}, b2={"instance_id": "host-b"}, c={}),
        {"group": "g", "type": "leave", "member": "c"},
        g(5, {"a": {"t": [0, 1]}, "b2": {"t": [2, 3]}}),
        g(6, {}),
        g(7, {"a": {"t": [0, 1, 2, 3]}}),
        {"group": "g", "type": "delete_group"},
        {"group": "g", "type": "partitions", "partitions": {"t": 4}},
        g(8, {"a": {"t": [0, 1]}, "b": {"t": [2, 3]}}),
    ])
    main(["conformance", "--json", log])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    written = [json.loads(o.value) for o in replay(read_jsonl(log), PipelineConfig(strategies=("range",)))
               if o.kind == "conformance"]
    # the pipeline fills in `ts` and `source` from the record when the event has none
    assert printed == [{**r, "ts": None, "source": None} for r in written]
    assert [(r["generation"], r["observed_moves"]) for r in printed] == [(1, 0), (2, 0), (3, 1), (5, 1), (7, 0), (8, 0)]
