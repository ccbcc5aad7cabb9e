"""The applicability matrix: what applying the series does, patch by patch, on each base (and checkout)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scripts.apply.copies import patched_copy
from scripts.apply.engine import PatchResult, SeriesConflict
from scripts.series.datafiles import write_data
from scripts.series.listing import Series, current_bases, current_series
from scripts.sources.base import materialize_base
from scripts.sources.checkout import open_checkout, snapshot_checkout

NOT_REACHED = "not reached"


def _results(label: str, source: Path, series: Series) -> list[PatchResult]:
    """Per-patch outcomes on ``source``; up to and including the conflict when a patch does not apply."""
    try:
        return patched_copy(source, label, series).results
    except SeriesConflict as conflict:
        return conflict.results


def applicability(targets: Sequence[tuple[str, Path]]) -> dict[str, object]:
    """The body of ``applicability.json`` for ``(label, source repo)`` targets: the patches and one row per cell."""
    series = current_series()
    rows: list[dict[str, str]] = []
    for label, source in targets:
        outcomes = {result.name: result for result in _results(label, source, series)}
        for patch in series.patches:
            result = outcomes.get(patch.name)
            rows.append({
                "target": label,
                "patch": patch.name,
                "outcome": result.outcome.value if result else NOT_REACHED,
                "detail": result.detail if result else "an earlier patch conflicts",
            })  # fmt: skip
    patches = [
        {"name": patch.name, "subject": patch.subject, "upstream_status": patch.upstream_status}
        for patch in series.patches
    ]
    return {"patches": patches, "rows": rows}


def write_applicability(base: str | None, checkout: str | None, command: str) -> Path:
    """Write ``docs/data/applicability.json`` for the selected bases (and a checkout); return its path."""
    targets = [(version, materialize_base(version)) for version in current_bases(base)]
    if checkout:
        opened = open_checkout(Path(checkout))
        targets.append((opened.label, snapshot_checkout(opened)))
    return write_data("applicability", command, applicability(targets))
