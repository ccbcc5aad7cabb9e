"""Write PR-ready material for every patch: title, body, the mbox for ``git am``, and a range-diff when it changed.

Everything is rendered in a scratch directory first; the export directory is replaced only when all of it succeeded.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from scripts.series.common import markdown_table
from scripts.series.listing import Series
from scripts.series.patch import Patch
from scripts.ship.checklist import Check
from scripts.ship.prbody import pr_body, pr_title
from scripts.ship.rangediff import RECORD_DIR, previous_series, range_diffs, record_export

INDEX_HEADER = ("patch", "upstream status", "since last export", "what to do")


def _action(patch: Patch, since: str) -> str:
    state, detail = patch.upstream_state
    if state == "applied upstream":
        return f"do not send: applied upstream in {detail}; drop it from the series"
    if state == "forwarded":
        return f"update {detail} (see range-diff.txt)" if since == "changed" else f"forwarded as {detail}"
    return "send as a new PR"


def _since(patch: Patch, previous: Series | None, diffs: dict[str, str]) -> str:
    if previous is None:
        return "no earlier version exported"
    if patch.name in diffs:
        return "changed"
    return "unchanged" if patch.name in {old.name for old in previous.patches} else "new"


def _depends_on(patches: tuple[Patch, ...], index: int) -> list[str]:
    """Earlier patches of the series that change a file this one changes."""
    mine = patches[index].paths
    return [f"`{patch.stem}` ({patch.subject})" for patch in patches[:index] if mine & patch.paths]


def export_series(
    series: Series, export_dir: Path, checks: dict[str, list[Check]], base_repo: Path
) -> list[dict[str, str]]:
    """Export every patch of ``series`` into ``export_dir``; return one summary row per patch (see INDEX_HEADER)."""
    previous = previous_series(export_dir, series)
    diffs = range_diffs(base_repo, previous, series) if previous else {}
    export_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix=".export-", dir=export_dir) as scratch:
        staged = Path(scratch)
        for index, patch in enumerate(series.patches):
            since = _since(patch, previous, diffs)
            folder = staged / patch.stem
            folder.mkdir()
            (folder / "title.txt").write_text(pr_title(patch) + "\n")
            body = pr_body(patch, _depends_on(series.patches, index), checks.get(patch.name, []))
            (folder / "body.md").write_text(body)
            shutil.copy2(patch.path, folder / patch.name)
            if patch.name in diffs:
                (folder / "range-diff.txt").write_text(diffs[patch.name])
            state, detail = patch.upstream_state
            rows.append(
                {
                    "patch": patch.name,
                    "title": pr_title(patch),
                    "upstream status": patch.upstream_status,
                    "upstream state": state,
                    "upstream detail": detail,
                    "fixes": " ".join(patch.values("Fixes")),
                    "refs": " ".join(patch.values("Refs")),
                    "sha256": patch.sha256(),
                    "since last export": since,
                    "what to do": _action(patch, since),
                }
            )
        summary = {"series_hash": series.digest(), "patches": rows}
        (staged / "series.json").write_text(json.dumps(summary, indent=2) + "\n")
        (staged / "index.md").write_text(_index_markdown(rows))
        for old in export_dir.iterdir():
            if old.name != RECORD_DIR and old != staged:
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        for new in staged.iterdir():
            new.rename(export_dir / new.name)
    record_export(export_dir, series, previous)
    return rows


def _index_markdown(rows: list[dict[str, str]]) -> str:
    return "\n".join(markdown_table(INDEX_HEADER, [[row[key] for key in INDEX_HEADER] for row in rows])) + "\n"
