"""The wheel's build copy and manifest: local version, per-patch hashes, the manifest inside the dist-info."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.listing import read_series
from scripts.ship.wheel import (
    MANIFEST_NAME,
    add_manifest,
    local_version,
    series_manifest,
    stage_build_tree,
    wheel_manifest,
)
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder, write_lines

PYPROJECT = ["[project]", 'name = "agent-framework-core"', 'version = "9.9.9"', "", "[tool.x]", 'version = "1"']


def test_manifest_records_base_patches_and_hashes(series: SeriesBuilder, patches: Path) -> None:
    first = series.add("first", ["changed", *RUNNER_LINES[1:]])
    series.add("second", ["changed", "again", *RUNNER_LINES[2:]], "Upstream-Status: applied upstream in 9.9.10")
    current = read_series(patches)
    manifest = series_manifest("9.9.9", current)
    assert manifest["version"] == local_version("9.9.9", current) == f"9.9.9+runguard.{current.digest()[:12]}"
    assert manifest["series_hash"] == current.digest()
    assert manifest["patches"][0] == {
        "name": first.name,
        "sha256": hashlib.sha256(first.read_bytes()).hexdigest(),
        "upstream_status": "not forwarded",
    }
    assert manifest["patches"][1]["upstream_status"] == "applied upstream in 9.9.10"


def test_build_copy_gets_the_version_and_the_checkout_does_not(tmp_path: Path) -> None:
    checkout = tmp_path / "patched"
    write_lines(checkout, "python/packages/core/pyproject.toml", PYPROJECT)
    write_lines(checkout, "python/packages/core/agent_framework/__init__.py", ["# core"])
    tree = stage_build_tree(checkout, "9.9.9", "9.9.9+runguard.abc", tmp_path / "tree")
    assert (tree / "pyproject.toml").read_text().splitlines()[2] == 'version = "9.9.9+runguard.abc"'
    assert (tree / "agent_framework" / "__init__.py").is_file()
    assert (checkout / "python/packages/core/pyproject.toml").read_text().splitlines() == PYPROJECT


def test_build_copy_needs_the_base_version(tmp_path: Path) -> None:
    write_lines(tmp_path / "patched", "python/packages/core/pyproject.toml", PYPROJECT)
    with pytest.raises(RunguardError, match=r'no single line version = "1\.0\.0"'):
        stage_build_tree(tmp_path / "patched", "1.0.0", "1.0.0+runguard.abc", tmp_path / "tree")
    assert not (tmp_path / "tree").exists()


def test_manifest_lands_in_the_dist_info(tmp_path: Path) -> None:
    dist_info = tmp_path / "unpacked" / "pkg-1.0" / "pkg-1.0.dist-info"
    dist_info.mkdir(parents=True)
    assert add_manifest(tmp_path / "unpacked", {"base": "1.0"}) == dist_info.parent
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(dist_info / MANIFEST_NAME, f"pkg-1.0.dist-info/{MANIFEST_NAME}")
    assert wheel_manifest(wheel) == {"base": "1.0"}


def test_a_wheel_without_manifest_is_an_error(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\n")
    with pytest.raises(RunguardError, match="not a runguard wheel"):
        wheel_manifest(wheel)
