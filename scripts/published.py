"""Result files for the documentation site, ``docs/data/<name>.json``, stamped with when and on what they ran.

The shape (a ``produced`` stamp, a ``summary`` and ``rows``) is the site's contract for data files; keys
beyond it are kept for readers of the file and ignored by the site.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from scripts.git import run_git
from scripts.locations import REPO_ROOT, patches_dir
from scripts.series import read_series

DATA_DIR = REPO_ROOT / "docs" / "data"


def _revision() -> str:
    """This repo's commit, with ``+changes`` when tracked files differ from it."""
    head = run_git("rev-parse", "--short=12", "HEAD", cwd=REPO_ROOT, check=False)
    if head.returncode != 0:
        return "unknown"
    changed = run_git("status", "--porcelain", "--untracked-files=no", cwd=REPO_ROOT, check=False).stdout
    return head.stdout.strip() + ("+changes" if changed.strip() else "")


def write_data(name: str, command: str, body: Mapping[str, object], directory: Path = DATA_DIR) -> Path:
    """Write ``docs/data/<name>.json``: a ``produced`` stamp (when, on what, which commit and series) and ``body``."""
    produced = {
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "on": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} CPUs",
        "runguard": _revision(),
        "series": read_series(patches_dir()).digest()[:12],
        "command": command,
    }
    path = directory / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"produced": produced, **body}, indent=2) + "\n")
    return path
