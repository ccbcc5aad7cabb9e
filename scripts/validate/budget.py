"""The series' size budget: lines it adds under ``agent_framework/``, backports included (issue 11: at most 300)."""

from __future__ import annotations

from scripts.series.errors import RunguardError
from scripts.series.listing import Series

SOURCE_BUDGET = 300


def budget_report(series: Series, limit: int = SOURCE_BUDGET) -> list[str]:
    """One line per patch and a total of the source lines added; over ``limit`` is an error naming the total."""
    lines = [f"{patch.stem}: +{patch.source_lines[0]} source, +{patch.test_lines[0]} test" for patch in series.patches]
    total = sum(patch.source_lines[0] for patch in series.patches)
    if total > limit:
        raise RunguardError(f"the series adds {total} lines under agent_framework/, over the budget of {limit}")
    return [*lines, f"the series adds {total} of at most {limit} lines under agent_framework/"]
