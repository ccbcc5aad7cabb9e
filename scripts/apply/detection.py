"""Decide whether a checkout already has a patch's change, byte-identical or equivalent."""

from __future__ import annotations

from pathlib import Path

from scripts.series.git import git_output, run_git
from scripts.series.patch import Patch

HISTORY_DEPTH = "2000"


def patch_id(patch_text: str, worktree: Path) -> str:
    """The stable patch id of one patch, or the empty string for a patch without a diff."""
    output = git_output("patch-id", "--stable", cwd=worktree, stdin=patch_text)
    return output.split(" ", 1)[0]


def _commit_with_same_patch_id(worktree: Path, patch: Patch) -> str | None:
    wanted = patch_id(patch.path.read_text(), worktree)
    paths = [change.path for change in patch.changes]
    if not wanted or not paths:
        return None
    history = git_output(
        "log", "-p", "--full-diff", "--no-merges", "--no-color", "--no-ext-diff", "--max-count", HISTORY_DEPTH,
        "HEAD", "--", *paths, cwd=worktree,
    )  # fmt: skip
    for line in git_output("patch-id", "--stable", cwd=worktree, stdin=history).splitlines():
        found, commit = line.split(" ", 1)
        if found == wanted:
            return commit
    return None


def upstream_evidence(worktree: Path, patch: Patch) -> str | None:
    """Why ``worktree`` already has the change of ``patch``, or None when it does not."""
    if run_git("apply", "--check", "--reverse", str(patch.path), cwd=worktree, check=False).returncode == 0:
        return "the patch reverse-applies cleanly"
    commit = _commit_with_same_patch_id(worktree, patch)
    if commit:
        return f"commit {commit[:12]} has the same patch id"
    for detector in patch.detectors:
        target = worktree / detector.path
        if target.is_file() and detector.text in target.read_text(errors="replace"):
            return f"{detector.path} contains {detector.text!r} (Upstream-Detect)"
    return None
