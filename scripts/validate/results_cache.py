"""Results kept by content, so that a warm validation does not compute them again: pyright's errors, red/green runs.

An entry's key is everything its result depends on, e.g. a checkout's git tree (its files, including upstream's
settings) and a description of the environment (installed distributions, the Python, the pinned tool versions).
Entries live under the cache (``RUNGUARD_CACHE``) and are written atomically.
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


def _entry(kind: str, key: tuple[str, ...]) -> Path:
    digest = hashlib.sha256("\n".join(key).encode()).hexdigest()[:24]
    return cache_dir() / kind / f"{digest}.json"


def load(kind: str, *key: str) -> object | None:
    """The result stored under ``key``, or None when there is none (or it is unreadable)."""
    try:
        return cast("object", json.loads(_entry(kind, key).read_text()))
    except (OSError, ValueError):
        return None


def store(kind: str, value: object, *key: str) -> None:
    """Store ``value`` (JSON) under ``key``."""
    entry = _entry(kind, key)
    entry.parent.mkdir(parents=True, exist_ok=True)
    scratch = entry.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_text(json.dumps(value, indent=1, sort_keys=True))
    scratch.replace(entry)


def tree(repo: Path, commit: str = "HEAD") -> str:
    """The git tree of ``commit`` in ``repo``: its files' content, whatever the commit's dates and parents."""
    return git_output("rev-parse", f"{commit}^{{tree}}", cwd=repo)


def load_errors(repo: Path, environment: str) -> Counter[str] | None:
    """Pyright's errors recorded for this checkout's tree in this environment, or None when never checked."""
    errors = load("pyright", tree(repo), environment)
    return Counter(cast("dict[str, int]", errors)) if isinstance(errors, dict) else None


def store_errors(repo: Path, environment: str, errors: Counter[str]) -> None:
    """Record pyright's errors of this checkout's tree in this environment."""
    store("pyright", dict(errors), tree(repo), environment)
