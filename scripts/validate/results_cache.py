"""Results kept by content, so that a warm validation does not compute them again.

Pyright's and mypy's findings on a checkout, red/green runs, issue reproductions. An entry's key is everything its
result depends on, e.g. a checkout's git tree (its files, including upstream's settings) and a description of the
environment (the Python and the installed distributions, so the tool versions). Entries live under the cache
(``RUNGUARD_CACHE``) and are written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import cast

from scripts.series.git import git_output, run_git
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


def work_tree(repo: Path) -> str:
    """The git tree of ``repo``'s files as they are now: changed and untracked ones too (not ignored ones).

    Built in an index of its own, so the repo's index and work tree are left as they are.
    """
    with tempfile.TemporaryDirectory() as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        run_git("add", "--all", cwd=repo, env=index)
        return run_git("write-tree", cwd=repo, env=index).stdout.strip()


def load_findings(kind: str, *key: str) -> Counter[str] | None:
    """The findings (a tool's errors by text) recorded under ``key``, or None when never recorded."""
    findings = load(kind, *key)
    return Counter(cast("dict[str, int]", findings)) if isinstance(findings, dict) else None


def store_findings(kind: str, findings: Counter[str], *key: str) -> None:
    """Record ``findings`` under ``key``."""
    store(kind, dict(findings), *key)
