"""The patched copy in the cache: rebuilt exactly when the series or the source changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.apply import copies
from scripts.apply.copies import patched_copy
from scripts.apply.engine import Outcome, SeriesConflict
from scripts.series.common import TERMINAL_COLUMNS
from scripts.series.listing import read_series
from tests.tooling.helpers import RUNNER_FILE, RUNNER_LINES, SeriesBuilder, commit_all, git, write_lines

FIXED = [*RUNNER_LINES[:9], "fixed 10", *RUNNER_LINES[10:]]
ADDED_TEST = "python/packages/core/tests/workflow/test_ownership.py"
EXISTING_TEST = "python/packages/core/tests/workflow/test_workflow.py"


def test_added_tests_and_touched_files(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", FIXED, files={ADDED_TEST: ["def test_owner() -> None:", "    assert True"]})
    patched = patched_copy(framework, "synthetic", read_series(series.patches))
    assert [result.outcome for result in patched.results] == [Outcome.CLEAN]
    assert patched.added_tests() == ["tests/workflow/test_ownership.py"]
    assert patched.touched_python_files() == [RUNNER_FILE, ADDED_TEST]
    assert git(patched.path, "status", "--porcelain") == ""


def test_tests_added_to_an_existing_module_are_named_alone(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    upstream = ["def test_upstream() -> None:", "    assert True"]
    write_lines(framework, EXISTING_TEST, upstream)
    commit_all(framework, "Upstream has a test module")
    added = ["", "class TestOwner:", "    async def test_owner(self) -> None:", "        assert True"]
    added = ["", "def test_run() -> None:", "    assert True", *added]
    series.add("fix", FIXED, files={EXISTING_TEST: [*upstream, *added]})
    patched = patched_copy(framework, "synthetic", read_series(series.patches))
    assert patched.added_tests() == [
        "tests/workflow/test_workflow.py::test_run",
        "tests/workflow/test_workflow.py::TestOwner::test_owner",
    ]


def test_reused_until_the_series_changes(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", FIXED)
    first = patched_copy(framework, "synthetic", read_series(series.patches))
    assert patched_copy(framework, "synthetic", read_series(series.patches)) == first
    series.add("more", [*FIXED[:19], "fixed 20", *FIXED[20:]])
    second = patched_copy(framework, "synthetic", read_series(series.patches))
    assert second.path != first.path
    assert len(second.results) == 2


def test_conflict_leaves_no_copy(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", FIXED)
    write_lines(framework, RUNNER_FILE, [*RUNNER_LINES[:9], "upstream 10", *RUNNER_LINES[10:]])
    commit_all(framework, "Upstream edits the same line")
    with pytest.raises(SeriesConflict):
        patched_copy(framework, "synthetic", read_series(series.patches))
    assert list((Path(env["RUNGUARD_CACHE"]) / "patched").iterdir()) == []


def test_a_base_s_outcome_table_is_printed_once_per_process_within_the_terminal_width(
    framework: Path, series: SeriesBuilder, env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    status = "applied upstream in main after python-1.23.0 (#10204); backport only, never exported as a PR"
    series.add("a-patch-with-a-long-name-like-the-series-has-them", FIXED, f"Upstream-Status: {status}")

    def materialized(version: str) -> Path:
        return framework

    monkeypatch.setattr(copies, "materialize_base", materialized)
    first = copies.prepare_base("9.9.9")
    assert copies.prepare_base("9.9.9") == first
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "agent-framework-core 9.9.9:"
    assert sum(line.endswith(":") and line.startswith("agent-framework-core") for line in printed) == 1
    assert all(len(line) <= TERMINAL_COLUMNS for line in printed)
    assert "never exported as a PR" in " ".join(printed)
