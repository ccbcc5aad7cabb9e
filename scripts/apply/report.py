"""Render per-patch outcomes as a plain-text table, and say where a checkout's version lies against the bases."""

from __future__ import annotations

import re
from collections.abc import Sequence

from scripts.apply.engine import NOT_REACHED, Outcome, PatchResult
from scripts.series.common import TERMINAL_COLUMNS, aligned_rows, wrapped

HEADERS = ("#", "patch", "outcome", "upstream status")
CONFLICT_HEADERS = ("#", "patch", "in the series", "on its own", "upstream status")
RELEASE = re.compile(r"\d+(\.\d+)*")
DETAIL_INDENT = "    "


def format_table(target: str, results: list[PatchResult], alone: list[PatchResult] | None = None) -> str:
    """A table of outcomes for ``target``, a row per patch with its detail below it; for no patch, a sentence.

    ``alone`` (when the series stopped at a conflict): every patch's outcome applied on its own, shown next to its
    outcome in the series (``not reached`` after the conflict); the detail is the series' or, past it, its own.
    """
    if not results:
        return f"{target}: the series is empty; nothing to apply"
    rows: list[tuple[str, ...]] = [HEADERS if alone is None else CONFLICT_HEADERS]
    details: list[str] = [""]
    if alone is None:
        for number, result in enumerate(results, start=1):
            rows.append((str(number), result.name, result.outcome.value, result.upstream_status))
            details.append(result.detail)
    else:
        reached = {result.name: result for result in results}
        for number, own in enumerate(alone, start=1):
            in_series = reached.get(own.name)
            outcome = in_series.outcome.value if in_series else NOT_REACHED
            rows.append((str(number), own.name, outcome, own.outcome.value, own.upstream_status))
            details.append((in_series or own).detail)
    lines = [f"{target}:"]
    for row, detail in zip(aligned_rows(rows), details, strict=True):
        shown = wrapped(detail, TERMINAL_COLUMNS - len(DETAIL_INDENT)) if detail else []
        lines += [*row, *(DETAIL_INDENT + line for line in shown)]
    counts = {outcome: sum(result.outcome is outcome for result in results) for outcome in Outcome}
    summary = ", ".join(f"{count} {outcome.value}" for outcome, count in counts.items() if count)
    if alone is not None:
        fits = sum(own.outcome not in (Outcome.CONFLICT, Outcome.UPSTREAM) for own in alone)
        summary += f"; on its own, {fits} of {len(alone)} patches apply"
    return "\n".join([*lines, f"summary: {summary}"])


def _release(version: str) -> tuple[int, ...]:
    match = RELEASE.match(version)
    return tuple(int(part) for part in match.group().split(".")) if match else ()


def version_against_bases(version: str | None, bases: Sequence[str]) -> str:
    """Where ``version`` (a checkout's agent-framework-core) lies against the bases the series is validated on."""
    listed = ", ".join(bases)
    if version is None:
        return f"agent-framework-core of unknown version; the series is validated on {listed}"
    if version in bases:
        return f"agent-framework-core {version}, a base the series is validated on"
    releases = [_release(base) for base in bases]
    place = (
        "older than every base" if all(_release(version) < release for release in releases)
        else "newer than every base" if all(_release(version) > release for release in releases)
        else "between the bases"
    )  # fmt: skip
    return f"agent-framework-core {version}, {place} the series is validated on ({listed})"
