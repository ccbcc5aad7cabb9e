"""Pyright's errors on a cached checkout, kept by content so that a warm validation does not check again.

The key is the checkout's git tree (its files, including upstream's pyright settings) and a description
of the environment pyright resolved imports in (installed distributions and the installed core's commit).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import cast

from scripts.series.git import git_output
from scripts.series.locations import cache_dir


def _entry(repo: Path, environment: str) -> Path:
    tree = git_output("rev-parse", "HEAD^{tree}", cwd=repo)
    key = hashlib.sha256(f"{tree}\n{environment}".encode()).hexdigest()[:24]
    return cache_dir() / "pyright" / f"{key}.json"


def load_errors(repo: Path, environment: str) -> Counter[str] | None:
    """The errors recorded for this tree in this environment, or None when it was never checked."""
    entry = _entry(repo, environment)
    try:
        return Counter(cast("dict[str, int]", json.loads(entry.read_text())))
    except (OSError, ValueError):
        return None


def store_errors(repo: Path, environment: str, errors: Counter[str]) -> None:
    """Record the errors of this tree in this environment (written atomically)."""
    entry = _entry(repo, environment)
    entry.parent.mkdir(parents=True, exist_ok=True)
    scratch = entry.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_text(json.dumps(dict(errors), indent=1, sort_keys=True))
    scratch.replace(entry)
