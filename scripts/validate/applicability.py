"""The applicability matrix: what applying the series does, patch by patch, on each base (and checkout)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scripts.apply.copies import patched_copy
from scripts.apply.engine import PatchResult, SeriesConflict
from scripts.series.locations import patches_dir
from scripts.series.patch import read_patch_info
from scripts.series.listing import Series, read_series

NOT_REACHED = "not reached"


def _results(label: str, source: Path, series: Series) -> list[PatchResult]:
    """Per-patch outcomes on ``source``; up to and including the conflict when a patch does not apply."""
    try:
        return patched_copy(source, label, series).results
    except SeriesConflict as conflict:
        return conflict.results


def applicability(targets: Sequence[tuple[str, Path]]) -> dict[str, object]:
    """The body of ``applicability.json`` for ``(label, source repo)`` targets: the patches and one row per cell."""
    series = read_series(patches_dir())
    infos = [read_patch_info(patch) for patch in series.patches]
    rows: list[dict[str, str]] = []
    for label, source in targets:
        outcomes = {result.name: result for result in _results(label, source, series)}
        for info in infos:
            result = outcomes.get(info.path.name)
            rows.append({
                "target": label,
                "patch": info.path.name,
                "outcome": result.outcome.value if result else NOT_REACHED,
                "detail": result.detail if result else "an earlier patch conflicts",
            })  # fmt: skip
    patches = [
        {"name": info.path.name, "subject": info.subject, "upstream_status": info.upstream_status} for info in infos
    ]
    return {"patches": patches, "rows": rows}
