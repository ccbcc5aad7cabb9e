"""Data files for the documentation site: ``docs/data/<session>.json``, each stamped with when and on what it ran.

Every file is one JSON object with a ``produced`` stamp (see :func:`produced_stamp`) next to the session's own
keys. The shapes the site renders are described in ``docs/validation/data-formats.md``.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Hashable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.series.listing import current_series
from scripts.series.locations import REPO_ROOT, recording, results_dir

Row = dict[str, Any]


def _runguard_revision() -> str:
    """The commit of this repo, with ``+changes`` when the work tree differs from it.

    The data files do not count: a run that records on several Pythons or bases writes them as it goes.
    """
    head = run_git("rev-parse", "--short=12", "HEAD", cwd=REPO_ROOT, check=False)
    if head.returncode != 0:
        return "unknown"
    status = ("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/data")
    changed = run_git(*status, cwd=REPO_ROOT, check=False).stdout
    return head.stdout.strip() + ("+changes" if changed.strip() else "")


def produced_stamp(command: str) -> dict[str, str]:
    """When, where, from which commit and series, and by which command a data file was produced."""
    return {
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "on": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs",
        "runguard": _runguard_revision(),
        "series": current_series().short_digest(),
        "command": command,
    }


def write_data(name: str, command: str, body: Mapping[str, object]) -> Path:
    """Write ``<name>.json`` in :func:`results_dir` (``docs/data`` when recording): the stamp and ``body``."""
    path = results_dir() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"produced": produced_stamp(command), **body}, indent=2) + "\n")
    return path


def written(path: Path) -> str:
    """How a session names a data file it wrote: relative to the repo when inside it, and how to record it if not."""
    shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    return f"{shown}" + ("" if recording() else " (not recorded in docs/data: add `-- --record`, or run `-t data`)")


def read_rows(path: Path, name: str) -> list[Row]:
    """The ``rows`` of the ``name`` data file at ``path`` (an error names a file that is missing or not one)."""
    try:
        document = json.loads(path.read_text())
        rows: list[Row] = document["rows"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise RunguardError(f"{path}: not a {name} data file ({type(error).__name__}: {error})") from None
    return rows


def replace_rows(earlier: Iterable[Row], new: Iterable[Row], key: Callable[[Row], Hashable]) -> list[Row]:
    """``earlier``'s rows whose ``key`` no new row has, then the new rows: a run replaces what it measured again."""
    fresh = list(new)
    measured = {key(row) for row in fresh}
    return [*(row for row in earlier if key(row) not in measured), *fresh]
