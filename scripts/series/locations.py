"""Where the series, the bases file and the cache live, and where upstream keeps the core package.

The series directory, the cache, the package index and the data files can each be moved with an environment variable.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CORE_PACKAGE = Path("python/packages/core")  # agent-framework-core in upstream's repo


def patches_dir() -> Path:
    """The directory holding ``series``, ``bases`` and the ``*.patch`` files (``RUNGUARD_PATCHES``)."""
    return Path(os.environ.get("RUNGUARD_PATCHES", REPO_ROOT / "patches")).resolve()


def cache_dir() -> Path:
    """The content-addressed cache of sdists and checkouts (``RUNGUARD_CACHE``)."""
    return Path(os.environ.get("RUNGUARD_CACHE", REPO_ROOT / ".cache")).resolve()


def package_index_url() -> str:
    """The PEP 691 simple index that sdists are looked up in (``RUNGUARD_INDEX_URL``)."""
    return os.environ.get("RUNGUARD_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def docs_data_dir() -> Path:
    """Where sessions write the JSON data files that the documentation site renders (``RUNGUARD_DATA``: elsewhere)."""
    return Path(os.environ.get("RUNGUARD_DATA", REPO_ROOT / "docs" / "data")).resolve()
