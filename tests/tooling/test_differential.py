"""Before/after comparisons: pytest junit outcomes, pyright errors, and the upstream test selection."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from scripts.validate.differential import junit_outcomes, new_errors, pyright_errors, regressed_tests, select_upstream_tests

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
