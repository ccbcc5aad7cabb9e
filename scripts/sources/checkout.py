"""Recognize a user's agent-framework checkout without changing anything in it, and snapshot its HEAD."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.series.locations import CORE_PACKAGE, cache_dir
from scripts.sources.cache import building, load_record, publish


@dataclass(frozen=True)
class Checkout:
    """A git work tree of microsoft/agent-framework."""

    root: Path
    git_dir: Path
    head: str

    @property
    def label(self) -> str:
        """How results name the checkout: ``checkout-<first 12 digits of HEAD>``."""
        return f"checkout-{self.head[:12]}"


def open_checkout(path: Path) -> Checkout:
    """Return the checkout containing ``path``, or raise a one-line error saying why it is not one."""
    if not path.is_dir():
        raise RunguardError(f"{path} is not a directory")
    top = run_git("rev-parse", "--show-toplevel", "--git-common-dir", cwd=path, check=False)
    if top.returncode != 0 or len(top.stdout.split("\n")) < 2:
        raise RunguardError(f"{path} is not a git repository")
    root_text, git_dir_text = top.stdout.split("\n")[:2]
    root = Path(root_text)
    if not (root / CORE_PACKAGE / "agent_framework").is_dir():
        raise RunguardError(f"{root} is not an agent-framework checkout (no {CORE_PACKAGE}/agent_framework)")
    head = run_git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=root, check=False)
    if head.returncode != 0:
        raise RunguardError(f"{root} has no commit checked out")
    return Checkout(root, (root / git_dir_text).resolve(), head.stdout.strip())


def core_version(repo: Path, commit: str) -> str | None:
    """The ``version`` of agent-framework-core in ``commit``'s ``pyproject.toml``; None when it has none."""
    shown = run_git("show", f"{commit}:{CORE_PACKAGE.as_posix()}/pyproject.toml", cwd=repo, check=False)
    project = re.search(r"^\[project\]$(?P<table>.*?)(?=^\[|\Z)", shown.stdout, re.MULTILINE | re.DOTALL)
    version = re.search(r'^version\s*=\s*"(?P<version>[^"]+)"', project["table"] if project else "", re.MULTILINE)
    return version["version"] if version else None


def clone_at(source: Path, commit: str, scratch: Path) -> None:
    """Clone ``source`` into ``scratch`` (which must not exist or be empty) with ``commit`` checked out, detached."""
    run_git("clone", "--quiet", "--no-checkout", str(source), str(scratch), cwd=scratch.parent)
    run_git("checkout", "--quiet", "--detach", commit, cwd=scratch)


def snapshot_checkout(checkout: Checkout) -> Path:
    """A cached clone of the checkout's HEAD commit (the user's uncommitted changes are not part of it)."""
    destination = cache_dir() / "checkouts" / checkout.head
    if load_record(destination) is None:
        with building(destination) as scratch:
            clone_at(checkout.root, checkout.head, scratch)
            publish(scratch, destination, {"source": str(checkout.root)})
    return destination
