"""Apply the series to a copy in the cache, or onto a new branch of a user's checkout without touching it."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.apply.engine import Outcome, PatchResult, apply_series
from scripts.apply.lock import checkout_lock
from scripts.apply.report import format_table
from scripts.apply.signals import interruptible, shielded
from scripts.series.common import REPORTED_ELSEWHERE
from scripts.series.errors import RunguardError
from scripts.series.git import git_output, run_git
from scripts.series.listing import Series, current_series
from scripts.series.locations import CORE_PACKAGE, cache_dir
from scripts.series.patch import Patch, added_tests
from scripts.sources.base import materialize_base
from scripts.sources.cache import building, load_record, publish
from scripts.sources.checkout import Checkout, clone_at


@dataclass(frozen=True)
class PatchedCheckout:
    """A repo in the cache holding ``source_commit`` with the patches of ``series`` committed on top."""

    path: Path
    source_commit: str
    results: list[PatchResult]
    series: Series

    def applied(self) -> list[Patch]:
        """The patches committed on the source (those found already upstream are not)."""
        skipped = {result.name for result in self.results if result.outcome is Outcome.UPSTREAM}
        return [patch for patch in self.series.patches if patch.name not in skipped]

    def added_tests(self) -> list[str]:
        """The tests the applied patches add, as pytest ids relative to the core package."""
        return added_tests(self.applied())

    def touched_python_files(self) -> list[str]:
        """Python files the series adds or modifies, relative to the repo root."""
        names = git_output(
            "diff",
            "--name-only",
            "--diff-filter=AM",
            self.source_commit,
            "HEAD",
            "--",
            str(CORE_PACKAGE),
            cwd=self.path,
        )
        return [name for name in names.splitlines() if name.endswith(".py")]


def _to_record(results: list[PatchResult]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(result) for result in results]


def _from_record(items: list[dict[str, Any]]) -> list[PatchResult]:
    return [PatchResult(**{**item, "outcome": Outcome(item["outcome"])}) for item in items]


def patched_copy(source: Path, label: str, series: Series) -> PatchedCheckout:
    """Clone ``source`` at HEAD into the cache and apply ``series``; reused while source and series are unchanged."""
    commit = git_output("rev-parse", "HEAD", cwd=source)
    key = hashlib.sha256(f"{commit}\n{series.digest()}".encode()).hexdigest()[:16]
    destination = cache_dir() / "patched" / f"{label}-{key}"
    record = load_record(destination)
    if record is None:
        with building(destination) as scratch:
            clone_at(source, commit, scratch)
            results = apply_series(scratch, series)
            record = publish(scratch, destination, {"source_commit": commit, "results": _to_record(results)})
    return PatchedCheckout(destination, commit, _from_record(record["results"]), series)


# The patched copies whose outcome table this process printed: each is printed once, however many sessions use it.
_REPORTED: set[Path] = set()


def prepare_base(version: str) -> tuple[Path, PatchedCheckout]:
    """Materialize base ``version`` and the cached copy with the series applied; print the outcome table once.

    Not at all in a process told another prints the tables (``REPORTED_ELSEWHERE``).
    """
    base = materialize_base(version)
    patched = patched_copy(base, version, current_series())
    if patched.path not in _REPORTED and not os.environ.get(REPORTED_ELSEWHERE):
        print(format_table(f"agent-framework-core {version}", patched.results))  # noqa: T201 (the apply report)
        _REPORTED.add(patched.path)
    return base, patched


def default_branch_name(series: Series) -> str:
    """The branch an apply creates unless told otherwise."""
    return f"runguard/{series.short_digest()}"


def apply_to_checkout(checkout: Checkout, series: Series, branch: str) -> list[PatchResult]:
    """Create ``branch`` = HEAD + series, built in a temporary worktree; the checkout itself is never touched.

    All or nothing: on a conflict, an error or a signal, neither the branch nor the worktree remains.
    """
    if run_git("check-ref-format", "--branch", branch, cwd=checkout.root, check=False).returncode != 0:
        raise RunguardError(f"{branch!r} is not a valid branch name")
    with interruptible(), checkout_lock(checkout.git_dir, checkout.root):
        if run_git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=checkout.root, check=False).stdout:
            raise RunguardError(f"branch {branch} already exists in {checkout.root}; delete it or pass --branch NAME")
        worktree = Path(tempfile.mkdtemp(prefix="runguard-worktree-"))
        finished = False
        try:
            run_git("worktree", "add", "--quiet", "--detach", str(worktree), checkout.head, cwd=checkout.root)
            results = apply_series(worktree, series)
            run_git("branch", branch, "HEAD", cwd=worktree)
            finished = True
        finally:
            with shielded():
                run_git("worktree", "remove", "--force", str(worktree), cwd=checkout.root, check=False)
                shutil.rmtree(worktree, ignore_errors=True)
                shutil.rmtree(checkout.git_dir / "worktrees" / worktree.name, ignore_errors=True)
                if not finished:  # the branch did not exist before: if it does now, this run made it
                    run_git("branch", "--delete", "--force", branch, cwd=checkout.root, check=False)
    return results
