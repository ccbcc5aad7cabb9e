"""Build git repos in the cache atomically and reuse them only while they are intact."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from scripts.series.git import git_output, run_git

RECORD = "runguard-record.json"


def load_record(repo: Path) -> dict[str, Any] | None:
    """The record saved with a cached repo, or None when the repo is missing, modified or damaged.

    Damaged includes a corrupt or missing git object (``git fsck``), which ``git status`` alone does not read.
    """
    record_file = repo / ".git" / RECORD
    if not record_file.is_file():
        return None
    try:
        record = cast("dict[str, Any]", json.loads(record_file.read_text()))
    except ValueError:
        return None
    head = run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=repo, check=False)
    status = run_git("status", "--porcelain", "--untracked-files=all", cwd=repo, check=False)
    intact = head.returncode == 0 and head.stdout.strip() == record.get("commit")
    if not intact or status.returncode != 0 or status.stdout:
        return None
    objects_sound = run_git("fsck", "--full", "--no-dangling", "--no-progress", cwd=repo, check=False).returncode == 0
    return record if objects_sound else None


@contextmanager
def building(destination: Path) -> Generator[Path, None, None]:
    """Yield an empty scratch directory beside ``destination``; it is removed unless published."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{destination.name}-", dir=destination.parent))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def publish(scratch: Path, destination: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Record the scratch repo's HEAD and move it to ``destination``, replacing a stale copy."""
    full_record = {**record, "commit": git_output("rev-parse", "HEAD", cwd=scratch)}
    (scratch / ".git" / RECORD).write_text(json.dumps(full_record, indent=2))
    shutil.rmtree(destination, ignore_errors=True)
    scratch.rename(destination)
    return full_record
