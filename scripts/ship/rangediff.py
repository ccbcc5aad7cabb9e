"""What changed since the series was last exported: stored copies of exported series, and ``git range-diff``.

``<export>/.series/<series hash>/`` keeps a copy of every exported series; ``state.json`` names the latest one and
the one exported before it, so exporting the same series again compares with the same previous version.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from scripts.series.git import git_output, run_git
from scripts.series.listing import Series, read_series
from scripts.series.patch import Patch

RECORD_DIR = ".series"
STATE = "state.json"


def previous_series(export_dir: Path, series: Series) -> Series | None:
    """The series exported before ``series`` (a different one), or None on a first export."""
    state = _state(export_dir)
    previous = state.get("previous") if state.get("latest") == series.digest() else state.get("latest")
    return read_series(export_dir / RECORD_DIR / previous) if previous else None


def record_export(export_dir: Path, series: Series, previous: Series | None) -> None:
    """Store a copy of ``series`` as the latest export, with ``previous`` as the one before it."""
    copy = export_dir / RECORD_DIR / series.digest()
    if not copy.is_dir():
        copy.mkdir(parents=True)
        shutil.copy2(series.directory / "series", copy / "series")
        for patch in series.patches:
            shutil.copy2(patch.path, copy / patch.name)
    state = {"latest": series.digest(), "previous": previous.digest() if previous else None}
    (export_dir / RECORD_DIR / STATE).write_text(json.dumps(state, indent=2) + "\n")


def _state(export_dir: Path) -> dict[str, str | None]:
    path = export_dir / RECORD_DIR / STATE
    return json.loads(path.read_text()) if path.is_file() else {}


def _apply_on_branch(repo: Path, branch: str, series: Series) -> list[str] | None:
    """Commit ``series`` on a new branch from the base commit; its commits in order, or None if it does not apply."""
    run_git("checkout", "--quiet", "-b", branch, "base", cwd=repo)
    patches = [str(patch.path.resolve()) for patch in series.patches]
    if patches and run_git("am", "--3way", "--quiet", *patches, cwd=repo, check=False).returncode != 0:
        run_git("am", "--abort", cwd=repo, check=False)
        return None
    return git_output("rev-list", "--reverse", f"base..{branch}", cwd=repo).split()


def range_diffs(base_repo: Path, old: Series, new: Series) -> dict[str, str]:
    """For each patch of ``new`` that changed since ``old`` (matched by name, else subject): its ``git range-diff``.

    Both series are applied with ``git am`` on throwaway branches of a clone of ``base_repo``.
    """
    old_by_name = {patch.name: patch for patch in old.patches}
    old_by_subject = {patch.subject: patch for patch in old.patches}
    pairs: dict[str, Patch] = {}
    for patch in new.patches:
        match = old_by_name.get(patch.name) or old_by_subject.get(patch.subject)
        if match is not None and match.path.read_bytes() != patch.path.read_bytes():
            pairs[patch.name] = match
    if not pairs:
        return {}
    with tempfile.TemporaryDirectory(prefix="runguard-range-diff-") as scratch:
        repo = Path(scratch) / "repo"
        run_git("clone", "--quiet", str(base_repo.resolve()), str(repo), cwd=Path(scratch))
        run_git("branch", "base", "HEAD", cwd=repo)
        old_commits, new_commits = _apply_on_branch(repo, "old", old), _apply_on_branch(repo, "new", new)
        if old_commits is None or new_commits is None:
            which = "previous" if old_commits is None else "current"
            return dict.fromkeys(pairs, f"no range-diff: the {which} series does not apply to {base_repo}\n")
        old_commit = dict(zip([patch.name for patch in old.patches], old_commits, strict=True))
        new_commit = dict(zip([patch.name for patch in new.patches], new_commits, strict=True))
        return {
            name: git_output(
                "range-diff", "--no-color", f"{old_commit[match.name]}^!", f"{new_commit[name]}^!", cwd=repo
            )
            + "\n"
            for name, match in pairs.items()
        }
