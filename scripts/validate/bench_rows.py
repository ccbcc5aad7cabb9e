"""The rows of ``bench.json``: what one measured, how a run's rows merge into the file, and each one's verdict.

A row is one workload (``workload``, a name of ``BENCH_RATIO_GOALS`` for a time row) measured on one base with one
Python (``python``, ``X.Y``). A run replaces the file's rows of the (base, Python) pairs it measured and keeps the
others, so each Python can be recorded by a run of its own. A time row is within its goal when its ratio is at most
its workload's goal; a memory row when memory did not grow with the number of runs (``flat``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scripts.series.datafiles import Row, replace_rows
from scripts.series.errors import RunguardError
from scripts.validate.goals import BENCH_RATIO_GOALS

MEMORY = "memory"  # a row's ``kind``: traced memory; any other kind is a time row


def measured_pair(row: Mapping[str, Any]) -> tuple[str, str]:
    """The (base, Python) a row was measured on; a row from before rows named their Python has Python ""."""
    return str(row["base"]), str(row.get("python", ""))


def _order(row: Mapping[str, Any]) -> tuple[tuple[int, ...], str]:
    base, python = measured_pair(row)
    return tuple(int(part) for part in python.split(".") if part.isdigit()), base


def merge(earlier: Iterable[Row], rows: Iterable[Row]) -> list[Row]:
    """``rows`` with ``earlier``'s rows of the pairs they did not measure, by Python then base (workloads in order)."""
    return sorted(replace_rows(earlier, rows, measured_pair), key=_order)


def goal(row: Mapping[str, Any]) -> float | None:
    """The most a time row's ratio may be (None for a memory row); a workload without a goal is an error."""
    if row.get("kind") == MEMORY:
        return None
    workload = str(row.get("workload", ""))
    if workload not in BENCH_RATIO_GOALS:
        known = ", ".join(BENCH_RATIO_GOALS)
        raise RunguardError(f"bench row {workload!r}: no goal for this workload (known: {known})")
    return BENCH_RATIO_GOALS[workload]


def within_goal(row: Mapping[str, Any]) -> bool:
    """Whether a row meets its goal: a time ratio at most its workload's goal, memory flat."""
    most = goal(row)
    return bool(row.get("flat")) if most is None else float(row["ratio"]) <= most


def summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary line, ``N of M rows within their goals; worst ratio R (workload, Python X.Y, base V; goal G)``.

    The worst ratio is the time row's furthest above its goal (or, when every one is within, the closest to it).
    """
    line = f"{sum(map(within_goal, rows))} of {len(rows)} rows within their goals"
    timed = [(float(row["ratio"]) / most, row, most) for row in rows if (most := goal(row)) is not None]
    if not timed:
        return line + "."
    _, worst, most = max(timed, key=lambda measured: measured[0])
    base, python = measured_pair(worst)
    where = f"{worst['workload']}, Python {python or 'unnamed'}, base {base}; goal {most}"
    return f"{line}; worst ratio {float(worst['ratio']):.3f} ({where})."
