"""Render per-patch outcomes as a plain-text table."""

from __future__ import annotations

from scripts.apply.engine import Outcome, PatchResult
from scripts.series.common import aligned_table

HEADERS = ("#", "patch", "outcome", "upstream status", "detail")


def format_table(target: str, results: list[PatchResult]) -> str:
    """A table of outcomes for ``target``, or a sentence saying the series is empty."""
    if not results:
        return f"{target}: the series is empty; nothing to apply"
    rows = [HEADERS] + [
        (str(number), result.name, result.outcome.value, result.upstream_status, result.detail)
        for number, result in enumerate(results, start=1)
    ]
    counts = {outcome: sum(result.outcome is outcome for result in results) for outcome in Outcome}
    summary = ", ".join(f"{count} {outcome.value}" for outcome, count in counts.items() if count)
    return "\n".join([f"{target}:", *aligned_table(rows), f"summary: {summary}"])
