"""Write PR-ready material for every patch: title, body, the mbox for ``git am``, and a range-diff when it changed.

Everything is rendered in a scratch directory first; the export directory is replaced only when all of it succeeded.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from scripts.ship.checklist import Check
from scripts.series.patch import PatchInfo, file_changes, read_patch_info
from scripts.ship.prbody import pr_body, pr_title
from scripts.sources.pypi import sha256_of
from scripts.ship.rangediff import RECORD_DIR, previous_series, range_diffs, record_export
from scripts.series.listing import Series

INDEX_HEADER = ("patch", "upstream status", "since last export", "what to do")


def _action(info: PatchInfo, since: str) -> str:
    state, detail = info.upstream_state
    if state == "applied upstream":
        return f"do not send: applied upstream in {detail}; drop it from the series"
    if state == "forwarded":
        return f"update {detail} (see range-diff.txt)" if since == "changed" else f"forwarded as {detail}"
    return "send as a new PR"


def _since(patch: Path, previous: Series | None, diffs: dict[str, str]) -> str:
    if previous is None:
        return "no earlier version exported"
    if patch.name in diffs:
        return "changed"
    return "unchanged" if patch.name in {old.name for old in previous.patches} else "new"


def _depends_on(infos: list[PatchInfo], index: int) -> list[str]:
    """Earlier patches of the series that change a file this one changes."""
    mine = {change.path for change in file_changes(infos[index].path)}
    return [
        f"`{info.path.stem}` ({info.subject})"
        for info in infos[:index]
        if mine & {change.path for change in file_changes(info.path)}
    ]


def export_series(
    series: Series, export_dir: Path, checks: dict[str, list[Check]], base_repo: Path
) -> list[dict[str, str]]:
    """Export every patch of ``series`` into ``export_dir``; return one summary row per patch (see INDEX_HEADER)."""
    infos = [read_patch_info(patch) for patch in series.patches]
    previous = previous_series(export_dir, series)
    diffs = range_diffs(base_repo, previous, series) if previous else {}
    export_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix=".export-", dir=export_dir) as scratch:
        staged = Path(scratch)
        for index, info in enumerate(infos):
            since = _since(info.path, previous, diffs)
            folder = staged / info.path.stem
            folder.mkdir()
            (folder / "title.txt").write_text(pr_title(info) + "\n")
            body = pr_body(info, file_changes(info.path), _depends_on(infos, index), checks.get(info.path.name, []))
            (folder / "body.md").write_text(body)
            shutil.copy2(info.path, folder / info.path.name)
            if info.path.name in diffs:
                (folder / "range-diff.txt").write_text(diffs[info.path.name])
            state, detail = info.upstream_state
            rows.append(
                {
                    "patch": info.path.name,
                    "title": pr_title(info),
                    "upstream status": info.upstream_status,
                    "upstream state": state,
                    "upstream detail": detail,
                    "fixes": " ".join(info.values("Fixes")),
                    "refs": " ".join(info.values("Refs")),
                    "sha256": sha256_of(info.path),
                    "since last export": since,
                    "what to do": _action(info, since),
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
    lines = ["| " + " | ".join(INDEX_HEADER) + " |", "|" + " --- |" * len(INDEX_HEADER)]
    lines += ["| " + " | ".join(row[key] for key in INDEX_HEADER) + " |" for row in rows]
    return "\n".join(lines) + "\n"
