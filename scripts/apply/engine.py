"""Apply a series, patch by patch, to a work tree that belongs to runguard, recording each outcome."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from scripts.apply.detection import upstream_evidence
from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.series.listing import Series
from scripts.series.patch import Patch

NOT_REACHED = "not reached"  # a patch after the one that conflicts: the series stopped before it
FAILED_AT = re.compile(r"error: patch failed: (?P<path>.+):(?P<line>\d+)$", re.MULTILINE)


class Outcome(str, Enum):
    """What happened to one patch."""

    CLEAN = "applied clean"
    OFFSET = "applied with offset"
    THREE_WAY = "applied with 3-way merge"
    UPSTREAM = "already upstream"
    CONFLICT = "conflict"


@dataclass(frozen=True)
class PatchResult:
    """The outcome of one patch with a short explanation."""

    name: str
    subject: str
    upstream_status: str
    outcome: Outcome
    detail: str = ""


class SeriesConflict(RunguardError):
    """A patch did not apply.

    ``results`` holds the outcomes up to and including the conflict; ``alone`` the outcome of every patch of the
    series applied on its own to the same commit, since the series stops at the conflict.
    """

    def __init__(self, message: str, results: list[PatchResult], alone: list[PatchResult]) -> None:
        """Keep the per-patch results next to the one-line message."""
        super().__init__(message)
        self.results = results
        self.alone = alone


def apply_series(worktree: Path, series: Series) -> list[PatchResult]:
    """Commit every patch of ``series`` onto ``worktree``'s HEAD; raise SeriesConflict at the first conflict."""
    start = run_git("rev-parse", "HEAD", cwd=worktree).stdout.strip()
    results: list[PatchResult] = []
    for patch in series.patches:
        results.append(_apply_one(worktree, patch))
        if results[-1].outcome is Outcome.CONFLICT:
            alone = [_apply_alone(worktree, start, each) for each in series.patches]
            raise SeriesConflict(f"{patch.name} does not apply: {results[-1].detail}", results, alone)
    return results


def _apply_alone(worktree: Path, start: str, patch: Patch) -> PatchResult:
    """The outcome of ``patch`` applied by itself to ``start``; the work tree is left at ``start``."""
    run_git("reset", "--quiet", "--hard", start, cwd=worktree)
    result = _apply_one(worktree, patch)
    run_git("reset", "--quiet", "--hard", start, cwd=worktree)
    return result


def _apply_one(worktree: Path, patch: Patch) -> PatchResult:
    def result(outcome: Outcome, detail: str = "") -> PatchResult:
        return PatchResult(patch.name, patch.subject, patch.upstream_status, outcome, detail)

    evidence = upstream_evidence(worktree, patch)
    if evidence:
        return result(Outcome.UPSTREAM, f"{evidence}; skipped, consider dropping it from the series")
    check = run_git("apply", "--check", "--verbose", str(patch.path), cwd=worktree, check=False)
    am = run_git(
        "am", "--3way", "--quiet", "--committer-date-is-author-date", str(patch.path), cwd=worktree, check=False
    )
    if am.returncode != 0:
        run_git("am", "--abort", cwd=worktree, check=False)
        return result(Outcome.CONFLICT, _failed_hunk(patch.path, check.stderr + am.stderr + am.stdout))
    if check.returncode != 0:
        return result(Outcome.THREE_WAY, _failed_hunk(patch.path, check.stderr))
    if re.search(r"\b(offset|fuzz)\b", check.stderr):
        return result(Outcome.OFFSET, "; ".join(re.findall(r"Hunk #\d+ succeeded at .*", check.stderr)))
    return result(Outcome.CLEAN)


def _failed_hunk(patch: Path, messages: str) -> str:
    """Name the file and hunk that git reported as failing, e.g. ``path, hunk @@ -12,7 +12,9 @@``."""
    failure = FAILED_AT.search(messages)
    if failure is None:
        lines = [line for line in messages.splitlines() if line.strip()]
        return lines[0] if lines else "git am failed"
    path, line = failure["path"], failure["line"]
    in_file = False
    for text in patch.read_text().splitlines():
        if text.startswith("diff --git "):
            in_file = text.endswith(f" b/{path}")
        elif in_file and text.startswith((f"@@ -{line},", f"@@ -{line} ")):
            return f"{path}, hunk {text}"
    return f"{path}, hunk at line {line}"
