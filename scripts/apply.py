"""Apply the series to a copy in the cache, or onto a new branch of a user's checkout without touching it."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts import testids
from scripts.cache import building, load_record, publish
from scripts.checkout import CORE_PACKAGE, Checkout
from scripts.engine import Outcome, PatchResult, apply_series
from scripts.errors import RunguardError
from scripts.git import git_output, run_git
from scripts.interrupts import interruptible, shielded
from scripts.locations import cache_dir
from scripts.lock import checkout_lock
from scripts.series import Series


@dataclass(frozen=True)
class PatchedCheckout:
    """A repo in the cache holding ``source_commit`` with the series committed on top."""

    path: Path
    source_commit: str
    results: list[PatchResult]

    def added_tests(self) -> list[str]:
        """Test files the series adds under the core package's ``tests/``, relative to the core package."""
        return added_tests(self.path, self.source_commit, "HEAD")

    def touched_python_files(self) -> list[str]:
        """Python files the series adds or modifies, relative to the repo root."""
        changed = changed_files(self.path, self.source_commit, "HEAD", "AM", CORE_PACKAGE)
        return [name for name in changed if name.endswith(".py")]


def changed_files(repo: Path, old: str, new: str, diff_filter: str, under: Path) -> list[str]:
    """Repo-relative paths under ``under`` changed from ``old`` to ``new``, selected by ``git diff --diff-filter``."""
    names = git_output("diff", "--name-only", f"--diff-filter={diff_filter}", old, new, "--", str(under), cwd=repo)
    return names.splitlines()


def added_tests(repo: Path, old: str, new: str) -> list[str]:
    """The tests added from ``old`` to ``new`` under the core package's ``tests/``, as pytest node ids.

    A new test module is named whole (``tests/workflow/test_x.py``); a test added to a module that existed
    before is named alone (``tests/workflow/test_workflow.py::test_y``). Paths are relative to the core package.
    """
    tests: list[str] = []
    for status, name in _test_module_changes(repo, old, new):
        module = str(Path(name).relative_to(CORE_PACKAGE))
        if status == "A":
            tests.append(module)
            continue
        before, after = (git_output("show", f"{commit}:{name}", cwd=repo) for commit in (old, new))
        tests += [f"{module}::{test}" for test in testids.added_tests(before, after)]
    return tests


def _test_module_changes(repo: Path, old: str, new: str) -> list[tuple[str, str]]:
    """(A or M, path) for each test module added or modified from ``old`` to ``new`` under the core ``tests/``."""
    tests = str(CORE_PACKAGE / "tests")
    diff = git_output("diff", "--name-status", "--no-renames", "--diff-filter=AM", old, new, "--", tests, cwd=repo)
    changes = [(status, name) for status, _, name in (line.partition("\t") for line in diff.splitlines())]
    return [(status, name) for status, name in changes if Path(name).name.startswith("test_") and name.endswith(".py")]


def _to_record(results: list[PatchResult]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(result) for result in results]


def _from_record(items: list[dict[str, Any]]) -> list[PatchResult]:
    return [PatchResult(**{**item, "outcome": Outcome(item["outcome"])}) for item in items]


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
    return PatchedCheckout(destination, commit, _from_record(record["results"]))


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
