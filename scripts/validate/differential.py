"""Compare two runs of the same checks, before and after the series, so that pre-existing failures cancel out."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, cast

UPSTREAM_TEST_NAMES = re.compile(r"agent|stream", re.IGNORECASE)


def select_upstream_tests(core: Path) -> list[str]:
    """Upstream's workflow tests plus the agent and ResponseStream tests, relative to the core package."""
    tests = core / "tests"
    workflow = tests / "workflow"
    chosen = ["tests/workflow"] if workflow.is_dir() else []
    for test_file in sorted(tests.rglob("test_*.py")):
        if test_file.is_relative_to(workflow):
            continue
        if UPSTREAM_TEST_NAMES.search(test_file.name) or "ResponseStream" in test_file.read_text(errors="replace"):
            chosen.append(str(test_file.relative_to(core)))
    return chosen


def regressed_tests(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Tests that passed before the series and fail or error after it, or are missing from it.

    A test goes missing when its module no longer collects: pytest then reports the module as one error instead.
    """
    return sorted(
        test
        for test, outcome in before.items()
        if outcome == "passed" and after.get(test, "error") in {"failed", "error"}
    )


def regression_report(label: str, before: dict[str, str], after: dict[str, str]) -> tuple[list[str], bool]:
    """Log lines comparing two runs (how many passed, each regression) and whether any test regressed."""
    regressions = regressed_tests(before, after)
    passed = [sum(outcome == "passed" for outcome in run.values()) for run in (before, after)]
    lines = [f"{label}: {passed[0]} of {len(before)} passed before the series, {passed[1]} of {len(after)} after"]
    lines += [f"{label}: REGRESSION passed before, fails after: {test}" for test in regressions]
    return lines, bool(regressions)


def pyright_errors(report_json: str, root: Path) -> Counter[str]:
    """Pyright errors keyed by file, rule and message (no line numbers, which patches shift)."""
    report = cast("dict[str, Any]", json.loads(report_json))
    errors: Counter[str] = Counter()
    for item in cast("list[dict[str, Any]]", report.get("generalDiagnostics", [])):
        if item.get("severity") == "error":
            where = Path(str(item["file"])).relative_to(root)
            errors[f"{where}: {item.get('rule', '')}: {item['message']}"] += 1
    return errors


def new_errors(before: Counter[str], after: Counter[str]) -> list[str]:
    """Errors the series adds, each listed once per added occurrence."""
    return sorted((after - before).elements())
