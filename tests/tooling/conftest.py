"""Fixtures: a synthetic framework checkout, a patch series made against it, and isolated cache dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tooling.helpers import SeriesBuilder, make_framework_repo


@pytest.fixture
def framework(tmp_path: Path) -> Path:
    """A fresh agent-framework-like checkout."""
    return make_framework_repo(tmp_path / "framework")


@pytest.fixture
def patches(tmp_path: Path) -> Path:
    """An empty series directory with a bases file."""
    directory = tmp_path / "patches"
    directory.mkdir()
    (directory / "series").write_text("# synthetic series\n")
    (directory / "bases").write_text("# synthetic bases\n9.9.9\n")
    return directory


@pytest.fixture
def series(framework: Path, patches: Path, tmp_path: Path) -> SeriesBuilder:
    """Builds patches against ``framework``'s HEAD into ``patches``."""
    return SeriesBuilder(framework, patches, tmp_path / "scratch")


@pytest.fixture
def env(patches: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment pointing the tooling at the synthetic series and a private cache (in-process too)."""
    values = {"RUNGUARD_PATCHES": str(patches), "RUNGUARD_CACHE": str(tmp_path / "cache")}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values
