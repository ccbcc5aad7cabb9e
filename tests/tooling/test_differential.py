"""Before/after comparisons: pytest junit outcomes, pyright errors, and the upstream test selection."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from scripts.validate.differential import (
    new_errors,
    pyright_errors,
    regressed_tests,
    regression_report,
    select_upstream_tests,
)
from scripts.validate.junit import junit_outcomes, selects

JUNIT = """<testsuites><testsuite>
<testcase classname="tests.workflow.test_a" name="test_ok"/>
<testcase classname="tests.workflow.test_a" name="test_bad"><failure message="x"/></testcase>
<testcase classname="tests.workflow.test_a" name="test_broken"><error message="x"/></testcase>
<testcase classname="tests.workflow.test_a" name="test_skip"><skipped message="x"/></testcase>
</testsuite></testsuites>"""


def test_junit_outcomes(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT)
    assert junit_outcomes(tmp_path / "junit.xml") == {
        "tests.workflow.test_a::test_ok": "passed",
        "tests.workflow.test_a::test_bad": "failed",
        "tests.workflow.test_a::test_broken": "error",
        "tests.workflow.test_a::test_skip": "skipped",
    }


def test_only_pass_to_fail_is_a_regression() -> None:
    before = {"a": "passed", "b": "failed", "c": "passed", "d": "passed", "e": "error"}
    after = {"a": "failed", "b": "failed", "c": "passed", "d": "skipped", "e": "error", "new": "failed"}
    assert regressed_tests(before, after) == ["a"]


def test_a_test_that_passed_before_and_is_missing_after_is_a_regression() -> None:
    before = {"tests.test_m::test_a": "passed", "tests.test_m::test_b": "failed"}
    assert regressed_tests(before, {"::tests.test_m": "error"}) == ["tests.test_m::test_a"]


def test_pyright_errors_ignore_line_numbers(tmp_path: Path) -> None:
    def report(*lines: int) -> str:
        items = [
            {
                "file": str(tmp_path / "agent_framework" / "x.py"),
                "severity": "error",
                "rule": "r",
                "message": "m",
                "line": n,
            }
            for n in lines
        ]
        return json.dumps(
            {"generalDiagnostics": [*items, {"file": str(tmp_path / "y.py"), "severity": "warning", "message": "w"}]}
        )

    before = pyright_errors(report(10), tmp_path)
    assert before == Counter({"agent_framework/x.py: r: m": 1})
    assert new_errors(before, pyright_errors(report(20), tmp_path)) == []
    assert new_errors(before, pyright_errors(report(20, 30), tmp_path)) == ["agent_framework/x.py: r: m"]


def test_select_upstream_tests(tmp_path: Path) -> None:
    for name, text in {
        "tests/workflow/test_runner.py": "",
        "tests/core/test_agents.py": "",
        "tests/core/test_types.py": "ResponseStream",
        "tests/core/test_tools.py": "",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert select_upstream_tests(tmp_path) == [
        "tests/workflow",
        "tests/core/test_agents.py",
        "tests/core/test_types.py",
    ]


def test_regression_report_counts_and_lists_regressions() -> None:
    lines, regressed = regression_report("1.0", {"a": "passed", "b": "failed"}, {"a": "failed", "b": "failed"})
    assert lines == [
        "1.0: 1 of 2 passed before the series, 0 of 2 after",
        "1.0: REGRESSION passed before, fails after: a",
    ]
    assert regressed


def test_added_test_ids_select_their_junit_cases() -> None:
    assert selects("tests/workflow/test_a.py", "tests.workflow.test_a::test_b")
    assert selects("tests/workflow/test_a.py", "tests.workflow.test_a.TestC::test_d")
    assert selects("tests/workflow/test_a.py::test_b", "tests.workflow.test_a::test_b[param]")
    assert selects("tests/workflow/test_a.py::TestC::test_d", "tests.workflow.test_a.TestC::test_d")
    assert not selects("tests/workflow/test_a.py::test_b", "tests.workflow.test_a::test_bc")
    assert not selects("tests/workflow/test_a.py", "tests.workflow.test_ab::test_b")
