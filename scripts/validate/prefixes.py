"""The series prefixes of a patched copy: one commit per applied patch, checked out one after another in a clone."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from scripts.apply.copies import PatchedCheckout
from scripts.series.errors import RunguardError
from scripts.series.git import git_output, run_git
from scripts.series.patch import added_tests
from scripts.sources.checkout import clone_at


@dataclass(frozen=True)
class PatchStep:
    """One patch of the series as a commit: ``parent`` is the prefix without it, ``commit`` the prefix with it."""

    name: str
    parent: str
    commit: str
    added_tests: list[str]


def clone_prefixes(patched: PatchedCheckout, destination: Path) -> list[PatchStep]:
    """Clone the patched copy to ``destination`` (replacing it) and map each applied patch to its commit.

    Patches found already upstream have no commit and are left out.
    """
    shutil.rmtree(destination, ignore_errors=True)
    destination.parent.mkdir(parents=True, exist_ok=True)
    clone_at(patched.path, "HEAD", destination)
    commits = git_output("rev-list", "--reverse", f"{patched.source_commit}..HEAD", cwd=destination).split()
    applied = patched.applied()
    if len(commits) != len(applied):
        raise RunguardError(f"{patched.path} has {len(commits)} commits on its base for {len(applied)} applied patches")
    parents = [patched.source_commit, *commits[:-1]]
    return [
        PatchStep(patch.name, parent, commit, added_tests([patch]))
        for patch, parent, commit in zip(applied, parents, commits, strict=True)
    ]


def check_out(repo: Path, commit: str) -> None:
    """Check ``commit`` out in ``repo``, detached; the clone belongs to runguard, so local changes are discarded."""
    run_git("checkout", "--quiet", "--force", "--detach", commit, cwd=repo)
