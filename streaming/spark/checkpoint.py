"""What a Spark streaming checkpoint says before the query starts: where it resumes, and whether it can.

Spark's checkpoint keeps a write-ahead log of each micro-batch's source offsets (`offsets/N`, written when
batch N is planned) and a log of completed batches (`commits/N`, written after the sink committed it).
Batch N can be resumed only from `offsets/N`; when a committed batch's offsets file is gone (disk trouble,
a careless cleanup), Spark fails every restart after half a minute with a misleading
`CONCURRENT_STREAM_LOG_UPDATE ... Multiple streaming jobs detected`. `inspect` finds that before Spark
starts and names the file. It does not repair: re-planning a lost batch could give it other offsets than
the ones its committed output came from, so the only safe ways on are a backup of the checkpoint or a new
one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


class CheckpointError(Exception):
    """The checkpoint cannot be resumed; the message names the file and what to do."""


@dataclass(frozen=True)
class Resume:
    batch: int  # the last completed micro-batch
    offsets: list[str]  # its end offsets per source, as Spark logged them (JSON text)


def _batches(directory: Path) -> dict[int, Path]:
    """Spark's log files by batch id (names are bare integers; `.crc` and temporary files are skipped)."""
    if not directory.is_dir():
        return {}
    return {int(f.name): f for f in directory.iterdir() if f.name.isdigit() and f.is_file()}


def _offsets(path: Path) -> list[str]:
    """The source offsets of an offsets log file: line 1 is the version, line 2 the batch metadata."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if len(lines) < 3 or not lines[0].startswith("v"):
        raise ValueError("truncated")
    for line in lines[1:]:
        json.loads(line)
    return lines[2:]


def inspect(checkpoint: str | os.PathLike[str], what: str = "--checkpoint") -> Resume | None:
    """Where a run from `checkpoint` resumes (None: it starts from the beginning), or `CheckpointError`."""
    root = Path(checkpoint)
    offsets, commits = _batches(root / "offsets"), _batches(root / "commits")
    if not commits:
        return None
    last = max(commits)
    fix = (f"restore {root} from a backup, or start over with a new {what} (all input is then processed "
           "again and its output written again)")
    if last not in offsets:
        newest = f"offsets/{max(offsets)}" if offsets else "no offsets file at all"
        raise CheckpointError(f"checkpoint {root}: offsets/{last} is missing although commits/{last} says batch "
                              f"{last} completed (newest: {newest}); Spark cannot resume from it: {fix}")
    planned = max(offsets)
    if planned > last + 1:
        raise CheckpointError(f"checkpoint {root}: commits/{last + 1} is missing although offsets/{planned} "
                              f"exists; Spark cannot resume from it: {fix}")
    for batch in sorted({last, planned}):
        try:
            _offsets(offsets[batch])
        except (OSError, ValueError):
            raise CheckpointError(f"checkpoint {root}: offsets/{batch} is unreadable or truncated; Spark cannot "
                                  f"resume from it: {fix}") from None
    return Resume(last, _offsets(offsets[last]))


def resume_line(label: str, resume: Resume | None) -> str:
    if resume is None:
        return f"[{label}] new checkpoint: starting from the beginning of the input"
    return f"[{label}] resuming after batch {resume.batch} (offsets {', '.join(resume.offsets)})"
