"""The series' size per patch: lines each adds under ``agent_framework/`` and in tests, for reviewers.

Size is judged per PR by review, not against a total: the report only states it.
"""

from __future__ import annotations

from scripts.series.listing import Series


def size_report(series: Series) -> list[str]:
    """One line per patch and a total of the source lines added."""
    lines = [f"{patch.stem}: +{patch.source_lines[0]} source, +{patch.test_lines[0]} test" for patch in series.patches]
    total = sum(patch.source_lines[0] for patch in series.patches)
    return [*lines, f"the series adds {total} lines under agent_framework/"]
