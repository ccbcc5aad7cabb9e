"""The patch guide's facts per patch and the review record's headings, rendered from the series."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.listing import read_series
from scripts.site.guide import render_entry, render_review_heading
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder

TEST_FILE = "python/packages/core/tests/workflow/test_new.py"


def test_an_entry_shows_source_and_test_line_counts(series: SeriesBuilder, patches: Path) -> None:
    series.add("fix", ["changed", "added", *RUNNER_LINES[1:]], files={TEST_FILE: ["def test_a():", "    pass"]})
    series.add("back", ["changed", *RUNNER_LINES[1:]], "Upstream-Status: applied upstream in 1.23.0")
    fix, back = read_series(patches).patches
    assert "- **Lines:** source +2/-1 under `agent_framework/`, tests +2/-0" in render_entry(fix, 1)
    assert "- **Backport:** never sent as a PR" in render_entry(back, 2)
    assert render_review_heading(fix, 1).startswith("## 1. fix {#review-0001-fix}")
    with pytest.raises(RunguardError, match=r"0002-back\.patch is a backport"):
        render_review_heading(back, 2)


def test_a_patch_is_called_by_its_files_number_wherever_the_series_applies_it(
    series: SeriesBuilder, patches: Path
) -> None:
    series.add("fix", ["changed", "added", *RUNNER_LINES[1:]])
    (fix,) = read_series(patches).patches
    moved = fix.path.rename(fix.path.with_name("0006-fix.patch"))
    (patches / "series").write_text(f"{moved.name}\n")
    (fix,) = read_series(patches).patches
    entry = render_entry(fix, 3)
    assert entry.startswith("## 6. fix {#0006-fix}")
    assert "(applied as number 3 of `patches/series`)" in entry
    assert render_review_heading(fix, 3).startswith("## 6. fix {#review-0006-fix}")
