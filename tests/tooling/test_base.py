"""Materializing a released base from an sdist: layout, tag, reproducibility, offline reuse, corruption."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.sources.base import ROOT_SETTINGS, materialize_base
from scripts.sources.cache import RECORD
from scripts.sources.pypi import fetch_sdist
from tests.tooling.helpers import git
from tests.tooling.index_server import Index, serve_index

VERSION = "9.9.9"


@pytest.fixture
def index(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Index]:
    with serve_index(Index([VERSION])) as served:
        monkeypatch.setenv("RUNGUARD_INDEX_URL", f"{served.url}/simple")
        yield served


def test_layout_tag_and_settings(index: Index) -> None:
    base = materialize_base(VERSION)
    core = base / "python" / "packages" / "core"
    assert sorted(path.name for path in core.iterdir()) == ["LICENSE", "README.md", "agent_framework", "pyproject.toml"]
    assert (base / "python" / "pyproject.toml").read_text() == ROOT_SETTINGS.read_text()
    assert git(base, "tag") == f"python-{VERSION}"
    assert git(base, "rev-list", "--count", "HEAD") == "1"
    assert git(base, "status", "--porcelain") == ""


def test_commit_is_reproducible(index: Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = git(materialize_base(VERSION), "rev-parse", "HEAD")
    monkeypatch.setenv("RUNGUARD_CACHE", str(tmp_path / "other-cache"))
    assert git(materialize_base(VERSION), "rev-parse", "HEAD") == first


def test_works_offline_after_the_first_download(index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    base = materialize_base(VERSION)
    monkeypatch.setenv("RUNGUARD_INDEX_URL", "http://127.0.0.1:9/unreachable")
    assert materialize_base(VERSION) == base
    assert index.downloads == 1


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


SDIST_DAMAGE: dict[str, Callable[[Path], object]] = {
    "overwritten": lambda sdist: sdist.write_bytes(b"corrupt"),
    "truncated": truncate,
    "deleted": Path.unlink,
    "record garbled": lambda sdist: (
        sdist.parents[1] / "by-version" / f"agent-framework-core-{VERSION}.sha256"
    ).write_text("garbage\n"),
}


@pytest.mark.parametrize("damage", sorted(SDIST_DAMAGE))
def test_corrupt_cached_sdist_is_downloaded_again(index: Index, damage: str) -> None:
    SDIST_DAMAGE[damage](fetch_sdist(VERSION))
    assert fetch_sdist(VERSION).read_bytes() == index.sdists[f"agent_framework_core-{VERSION}.tar.gz"]
    assert index.downloads == 2


def corrupt_object(base: Path) -> None:
    blob = git(base, "rev-parse", "HEAD:python/packages/core/README.md")
    stored = base / ".git" / "objects" / blob[:2] / blob[2:]
    stored.chmod(0o644)
    stored.write_bytes(b"not a git object")


BASE_DAMAGE: dict[str, Callable[[Path], object]] = {
    "file edited": lambda base: (base / "python/packages/core/README.md").write_text("edited by someone\n"),
    "untracked file": lambda base: (base / "python/packages/core/agent_framework/extra.py").write_text("x = 1\n"),
    "commit on top": lambda base: git(base, "commit", "--quiet", "--allow-empty", "--message", "tampered"),
    "object corrupted": corrupt_object,
    "half written": lambda base: shutil.rmtree(base / "python" / "packages"),
    "record missing": lambda base: (base / ".git" / RECORD).unlink(),
    "record garbled": lambda base: (base / ".git" / RECORD).write_text("{not json"),
    "git dir gone": lambda base: shutil.rmtree(base / ".git"),
}


@pytest.mark.parametrize("damage", sorted(BASE_DAMAGE))
def test_damaged_base_is_rebuilt(index: Index, damage: str) -> None:
    base = materialize_base(VERSION)
    commit = git(base, "rev-parse", "HEAD")
    BASE_DAMAGE[damage](base)
    assert materialize_base(VERSION) == base
    assert git(base, "rev-parse", "HEAD") == commit
    assert git(base, "status", "--porcelain", "--untracked-files=all") == ""
    assert run_git("fsck", "--full", "--no-dangling", cwd=base, check=False).returncode == 0
    assert index.downloads == 1


def test_hash_mismatch_is_an_error(index: Index) -> None:
    index.recorded_hashes[f"agent_framework_core-{VERSION}.tar.gz"] = "0" * 64
    with pytest.raises(RunguardError, match="but the index records 0000"):
        fetch_sdist(VERSION)
