"""The checkpoint check made before Spark starts (`streaming.spark.checkpoint`), on checkpoints laid out as
Spark writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from streaming.spark.checkpoint import CheckpointError, Resume, inspect, resume_line


def checkpoint(root: Path, offsets: dict[int, str], commits: list[int]) -> Path:
    (root / "offsets").mkdir(parents=True)
    (root / "commits").mkdir()
    for batch, source in offsets.items():
        (root / "offsets" / str(batch)).write_text(f'v1\n{{"batchWatermarkMs":0}}\n{source}')
        (root / "offsets" / f".{batch}.crc").write_bytes(b"\0")
    for batch in commits:
        (root / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    return root


def test_where_a_run_resumes(tmp_path: Path) -> None:
    assert inspect(tmp_path / "new") is None
    ckpt = checkpoint(tmp_path / "c", {0: '{"t":{"0":5}}', 1: '{"t":{"0":9}}'}, [0])  # batch 1 planned, not done
    assert inspect(ckpt) == Resume(0, ['{"t":{"0":5}}'])
    assert resume_line("serve", inspect(ckpt)) == '[serve] resuming after batch 0 (offsets {"t":{"0":5}})'


@pytest.mark.parametrize(("offsets", "commits", "named"), [
    ({0: "{}"}, [0, 1], "offsets/1 is missing although commits/1 says batch 1 completed (newest: offsets/0)"),
    ({}, [0], "offsets/0 is missing although commits/0 says batch 0 completed (newest: no offsets file at all)"),
    ({0: "{}", 1: "{}", 2: "{}"}, [0], "commits/1 is missing although offsets/2 exists"),
])
def test_a_checkpoint_spark_cannot_resume_is_named(tmp_path: Path, offsets, commits, named) -> None:
    ckpt = checkpoint(tmp_path / "c", offsets, commits)
    with pytest.raises(CheckpointError) as err:
        inspect(ckpt)
    assert f"checkpoint {ckpt}: {named}; Spark cannot resume from it: restore {ckpt} from a backup" in str(err.value)


def test_a_truncated_offsets_file_is_named(tmp_path: Path) -> None:
    ckpt = checkpoint(tmp_path / "c", {0: "{}"}, [0])
    (ckpt / "offsets" / "0").write_text("v1\n")
    with pytest.raises(CheckpointError, match="offsets/0 is unreadable or truncated"):
        inspect(ckpt)
