"""The built site, shared by the checks of tests/docs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.series.locations import REPO_ROOT


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with warnings as errors (link and anchor validation included).

    The docs session built it already and names it in ``RUNGUARD_SITE``; without it, it is built here.
    """
    if os.environ.get("RUNGUARD_SITE"):
        return Path(os.environ["RUNGUARD_SITE"])
    directory = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(directory)],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    return directory
