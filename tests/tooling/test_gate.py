"""Upstream's gate beyond ruff and pyright: which files mypy and bandit check, their findings, the size report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.listing import read_series
from scripts.validate.differential import new_errors
from scripts.validate.gate import (
    bandit_findings,
    gated_sources,
    gated_tests,
    mypy_arguments,
    mypy_findings,
    present,
    write_configs,
)
from scripts.validate.size import size_report
from tests.tooling.helpers import RUNNER_FILE, RUNNER_LINES, SeriesBuilder

CORE = "python/packages/core"
PATHS = [f"{CORE}/agent_framework/_types.py", f"{CORE}/tests/core/test_types.py", f"{CORE}/tests/conftest.py",
         f"{CORE}/pyproject.toml", "python/samples/demo.py"]  # fmt: skip


def test_mypy_checks_test_files_and_bandit_source_files() -> None:
    assert gated_tests(PATHS) == [f"{CORE}/tests/core/test_types.py"]
    assert gated_sources(PATHS) == [f"{CORE}/agent_framework/_types.py"]


def test_mypy_runs_from_the_workspace_root_with_upstreams_relaxed_settings(tmp_path: Path) -> None:
    mypy, bandit = write_configs(tmp_path)
    settings = mypy.read_text()
    for line in ("plugins = pydantic.mypy", "check_untyped_defs = True", "disallow_untyped_defs = False"):
        assert line in settings
    assert 'exclude_dirs = ["tests"]' in bandit.read_text()
    arguments = mypy_arguments(mypy, tmp_path / "cache", [f"{CORE}/tests/core/test_types.py"])
    assert arguments[-1] == "packages/core/tests/core/test_types.py"
    assert "--explicit-package-bases" in arguments
    assert "--namespace-packages" in arguments


def test_only_files_present_are_checked(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    assert present(tmp_path, ["a.py", "b.py"]) == ["a.py"]


def test_a_finding_counts_as_new_only_beyond_those_before() -> None:
    before = mypy_findings('packages/core/tests/t.py:3: error: Name "x" is not defined  [name-defined]\n')
    after = mypy_findings(
        'packages/core/tests/t.py:9: error: Name "x" is not defined  [name-defined]\n'
        "packages/core/tests/t.py:12:5: error: Incompatible types in assignment  [assignment]\n"
        "packages/core/tests/t.py:12: note: a note is no finding\n"
    )
    assert new_errors(before, after) == ["packages/core/tests/t.py: assignment: Incompatible types in assignment"]


def test_bandit_findings_are_keyed_without_line_numbers() -> None:
    result = {
        "filename": "a.py",
        "test_id": "B101",
        "issue_severity": "LOW",
        "issue_text": "assert used",
        "line_number": 3,
    }
    report = "[main] INFO profile include tests: None\n" + json.dumps(
        {"results": [result, {**result, "line_number": 9}]}
    )
    assert bandit_findings(report) == {"a.py: B101 (LOW): assert used": 2}


@pytest.mark.parametrize("report", ["", "Traceback: bandit crashed", "{not json"])
def test_a_report_bandit_did_not_write_is_an_error(report: str) -> None:
    with pytest.raises(RunguardError, match="bandit"):
        bandit_findings(report)


def test_the_size_report_counts_source_lines_of_every_patch(series: SeriesBuilder, patches: Path) -> None:
    series.add("first", ["changed 1", "added", *RUNNER_LINES[1:]])
    series.add("test", ["changed 1", "added", *RUNNER_LINES[1:]], files={f"{CORE}/tests/test_x.py": ["a", "b"]})
    report = size_report(read_series(patches))
    assert report == [
        "0001-first: +2 source, +0 test",
        "0002-test: +0 source, +2 test",
        "the series adds 2 lines under agent_framework/",
    ]
    assert RUNNER_FILE.startswith(f"{CORE}/agent_framework/")
