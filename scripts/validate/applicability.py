"""The applicability matrix: what applying the series does, patch by patch, on each base (and checkout)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scripts.apply.copies import patched_copy
from scripts.apply.engine import NOT_REACHED, PatchResult, SeriesConflict
from scripts.series.datafiles import write_data
from scripts.series.listing import Series, current_bases, current_series
from scripts.sources.base import materialize_base
from scripts.sources.checkout import open_checkout, snapshot_checkout


def _results(label: str, source: Path, series: Series) -> tuple[list[PatchResult], list[PatchResult]]:
    """Per-patch outcomes on ``source``, and when a patch does not apply, every patch's outcome on its own."""
    try:
        return patched_copy(source, label, series).results, []
    except SeriesConflict as conflict:
        return conflict.results, conflict.alone


def _not_reached(alone: PatchResult | None) -> str:
    """The detail of a patch the series did not reach: whether it would apply to the target on its own."""
    if alone is None:
        return "an earlier patch conflicts"
    own = f"{alone.outcome.value}{': ' + alone.detail if alone.detail else ''}"
    return f"an earlier patch conflicts; on its own: {own}"


def applicability(targets: Sequence[tuple[str, Path]]) -> dict[str, object]:
    """The body of ``applicability.json`` for ``(label, source repo)`` targets: the patches and one row per cell."""
    series = current_series()
    rows: list[dict[str, str]] = []
    for label, source in targets:
        results, alone = _results(label, source, series)
        outcomes = {result.name: result for result in results}
        own = {result.name: result for result in alone}
        for patch in series.patches:
            result = outcomes.get(patch.name)
            rows.append({
                "target": label,
                "patch": patch.name,
                "outcome": result.outcome.value if result else NOT_REACHED,
                "detail": result.detail if result else _not_reached(own.get(patch.name)),
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
