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


RECORD_ENV = "RUNGUARD_RECORD"  # "1": sessions record their results in docs_data_dir()


def docs_data_dir() -> Path:
    """The recorded data files that the documentation site renders: ``docs/data`` (``RUNGUARD_DATA``: elsewhere)."""
    return Path(os.environ.get("RUNGUARD_DATA", REPO_ROOT / "docs" / "data")).resolve()


def recording() -> bool:
    """Whether sessions record their results in :func:`docs_data_dir`.

    They do when asked to (``RUNGUARD_RECORD=1``, which the noxfile sets for ``-t data`` and ``-- --record``) or when
    ``RUNGUARD_DATA`` points the files elsewhere.
    """
    return os.environ.get(RECORD_ENV) == "1" or "RUNGUARD_DATA" in os.environ


def results_dir() -> Path:
    """Where sessions write data files: :func:`docs_data_dir` when :func:`recording`, else the cache's ``results/``.

    So a run that was not asked to record (``python3 run.py`` alone) leaves the tracked tree as it was.
    """
    return docs_data_dir() if recording() else cache_dir() / "results"
