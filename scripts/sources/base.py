"""Materialize a released base: the sdist laid out as upstream's repo, one commit tagged ``python-V``."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from scripts.series.common import sha256_of
from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.series.locations import CORE_PACKAGE, cache_dir
from scripts.sources.cache import building, load_record, publish
from scripts.sources.pypi import fetch_sdist, unpack_sdist

ROOT_SETTINGS = Path(__file__).with_name("upstream_root_pyproject.toml")
SDIST_MEMBERS = ("pyproject.toml", "README.md", "LICENSE", "agent_framework")
# Fixed identity and dates make the commit id a function of the content alone.
FIXED_DATE = "2000-01-01T00:00:00+0000"
FIXED_ENV = {"GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE}


def base_tag(version: str) -> str:
    """The tag naming a base's single commit."""
    return f"python-{version}"


def materialize_base(version: str) -> Path:
    """Return the cached checkout of ``version``, building it (again) when missing or damaged."""
    sdist = fetch_sdist(version)
    key = hashlib.sha256(sha256_of(sdist).encode() + ROOT_SETTINGS.read_bytes()).hexdigest()[:16]
    destination = cache_dir() / "bases" / f"{version}-{key}"
    if load_record(destination) is not None:
        return destination
    with building(destination) as scratch:
        _lay_out(sdist, version, scratch)
        _commit(scratch, version)
        publish(scratch, destination, {"version": version})
    return destination


def _lay_out(sdist: Path, version: str, repo: Path) -> None:
    core = repo / CORE_PACKAGE
    core.mkdir(parents=True)
    unpacked = repo / ".unpacked"
    top = unpack_sdist(sdist, unpacked)
    if top.name != f"agent_framework_core-{version}":
        raise RunguardError(f"{sdist.name} holds {top.name}, not agent_framework_core-{version}")
    for member in SDIST_MEMBERS:
        if not (top / member).exists():
            raise RunguardError(f"{sdist.name} has no {member}; is it an agent-framework-core sdist?")
        (top / member).rename(core / member)
    shutil.rmtree(unpacked)
    shutil.copyfile(ROOT_SETTINGS, repo / "python" / "pyproject.toml")


def _commit(repo: Path, version: str) -> None:
    run_git("init", "--quiet", "--initial-branch=main", cwd=repo)
    run_git("config", "core.autocrlf", "false", cwd=repo)
    run_git("add", "--all", "--force", cwd=repo)
    message = f"agent-framework-core {version} from its PyPI sdist, in upstream's layout"
    run_git("commit", "--quiet", "--no-verify", "--message", message, cwd=repo, env=FIXED_ENV)
    run_git("tag", base_tag(version), cwd=repo)
