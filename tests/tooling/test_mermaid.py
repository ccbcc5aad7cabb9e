"""The pinned mermaid bundle: fetched with npm once, checked against the pinned integrity, then cached."""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.locations import REPO_ROOT
from scripts.site.mermaid import mermaid_bundle, npm_pin

# Stands in for npm: copies the tarball named by FAKE_TARBALL into --pack-destination.
FAKE_NPM = """
import os, shutil, sys
shutil.copy(os.environ["FAKE_TARBALL"], sys.argv[sys.argv.index("--pack-destination") + 1])
"""


@pytest.fixture
def tarball(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "mermaid-1.0.0.tgz"
    with tarfile.open(path, "w:gz") as archive:
        content = b"window.mermaid = {};"
        member = tarfile.TarInfo("package/dist/mermaid.min.js")
        member.size = len(content)
        archive.addfile(member, io.BytesIO(content))
    monkeypatch.setenv("FAKE_TARBALL", str(path))
    monkeypatch.setenv("RUNGUARD_CACHE", str(tmp_path / "cache"))
    return path


def _pins(tmp_path: Path, integrity: str) -> Path:
    pins = tmp_path / "pins.txt"
    pins.write_text(f"mkdocs==1.6.1\n#npm mermaid@1.0.0 {integrity}\n")
    return pins


def _npm(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_npm.py"
    script.write_text(FAKE_NPM)
    return [sys.executable, str(script)]


def test_the_repo_pins_mermaid() -> None:
    assert npm_pin(REPO_ROOT / "pins.txt", "mermaid").integrity.startswith("sha512-")


def test_a_matching_tarball_is_unpacked_once_and_then_reused(tmp_path: Path, tarball: Path) -> None:
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    pins = _pins(tmp_path, integrity)
    bundle = mermaid_bundle(pins, _npm(tmp_path))
    assert bundle.read_text() == "window.mermaid = {};"
    assert mermaid_bundle(pins, ["false"]) == bundle, "a cached bundle needs no npm"


def test_a_tarball_that_does_not_match_the_pin_is_refused(tmp_path: Path, tarball: Path) -> None:
    with pytest.raises(RunguardError, match="does not match the integrity"):
        mermaid_bundle(_pins(tmp_path, "sha512-AAAA"), _npm(tmp_path))
    assert not list((tmp_path / "cache").rglob("mermaid.min.js"))
