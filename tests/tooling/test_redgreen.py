"""Red/green verdicts: only an assertion makes a test red for its reason; the series prefixes map patches to commits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from scripts.apply.copies import patched_copy
from scripts.series.common import TERMINAL_COLUMNS
from scripts.series.listing import read_series
from scripts.validate.junit import JunitCase, read_report
from scripts.validate.prefixes import clone_prefixes
from scripts.validate.redgreen import (
    evidence,
    format_proofs,
    green_verdict,
    merge_evidence,
    prove_patch,
    red_verdict,
)
from tests.tooling.helpers import REPO_ROOT, RUNNER_LINES, TIMEOUT_SECONDS, SeriesBuilder, git

SAMPLE_TESTS = """
import threading

import pytest


def test_plain_assert():
    assert 1 == 2


def test_assert_with_message():
    assert not "overlap", "two runs overlapped\\nsecond line"


def test_timeout_error():
    raise TimeoutError


def test_runtime_error():
    raise RuntimeError("boom")


def test_missing_fixture(no_such_fixture):
    pass


def test_passes():
    pass


@pytest.mark.timeout(0.2)
def test_hangs():
    threading.Event().wait(30)
"""

RED = {
    "test_sample::test_plain_assert": (True, "assert 1 == 2"),
    "test_sample::test_assert_with_message": (True, "two runs overlapped"),
    "test_sample::test_timeout_error": (False, "not an assertion: TimeoutError"),
    "test_sample::test_runtime_error": (False, "not an assertion: RuntimeError: boom"),
    "test_sample::test_missing_fixture": (False, "not an assertion: error: failed on setup with "),
    "test_sample::test_passes": (False, "passes without the patch"),
    "test_sample::test_hangs": (False, "not an assertion: Failed: Timeout"),
    "::tests.test_broken": (False, "not an assertion: error: collection failure"),
}


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, JunitCase]:
    """A junit report, with recorded exceptions, of tests that fail in every way a red test can."""
    root = tmp_path_factory.mktemp("sample")
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")  # as upstream's: the root is the rootdir
    (root / "tests").mkdir()
    (root / "tests" / "test_sample.py").write_text(SAMPLE_TESTS)
    (root / "tests" / "test_broken.py").write_text("import no_such_module\n")
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "scripts.validate.pytest_plugin",
         "--continue-on-collection-errors", "--junitxml=report.xml", "tests"],
        cwd=root, env={"PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True,
        check=False, timeout=TIMEOUT_SECONDS,
    )  # fmt: skip
    return {test.removeprefix("tests."): case for test, case in read_report(root / "report.xml").items()}


@pytest.mark.parametrize("test", sorted(RED))
def test_red_only_by_an_assertion(sample_report: dict[str, JunitCase], test: str) -> None:
    verdict = red_verdict(sample_report[test])
    ok, detail = RED[test]
    assert verdict.ok is ok
    assert verdict.detail.startswith(detail)


def test_green_only_when_passed(sample_report: dict[str, JunitCase]) -> None:
    greens = {test for test, case in sample_report.items() if green_verdict(case).ok}
    assert greens == {"test_sample::test_passes"}
    assert green_verdict(sample_report["test_sample::test_runtime_error"]).detail == "RuntimeError: boom"


def test_missing_report_means_nothing_ran(tmp_path: Path) -> None:
    assert read_report(tmp_path / "absent.xml") == {}
    (tmp_path / "cut.xml").write_text("<testsuites><testsuite><testcase")
    assert read_report(tmp_path / "cut.xml") == {}


def test_proof_pairs_runs_and_fails_on_anything_missing(tmp_path: Path) -> None:
    red = JunitCase("failed", "assert x", {"exception": "AssertionError", "exception_message": "x was lost"})
    passed = JunitCase("passed", "", {})
    proven = prove_patch("1.0", "0001-a.patch", {"t::a": red}, {"t::a": passed})
    not_green = prove_patch("1.0", "0002-b.patch", {"t::b": red}, {})
    no_test = prove_patch("1.0", "0003-c.patch", {}, {})
    assert (proven.ok, not_green.ok, no_test.ok) == (True, False, False)
    assert not_green.tests[0].green.detail == "not run: missing from this run's junit report"

    table = format_proofs([proven, not_green, no_test]).splitlines()
    assert table[1].split() == ["1.0", "0001-a.patch", "1/1", "proven"]
    assert table[2].split() == ["1.0", "0002-b.patch", "FAIL:", "0/1", "proven"]
    assert table[3].strip().startswith("t::b: red x was lost; green FAIL: not run")
    assert "FAIL: no test ran" in table[4]
    assert all(len(line) <= TERMINAL_COLUMNS for line in table)

    body = evidence([proven, not_green], "3.11.7")
    assert (body["pythons"], body["bases"], body["ok"]) == (["3.11.7"], ["1.0"], False)
    patches = cast("list[dict[str, Any]]", body["patches"])
    assert patches[0]["python"] == "3.11.7"
    assert patches[0]["tests"][0] == {
        "test": "t::a", "red": {"ok": True, "detail": "x was lost"}, "green": {"ok": True, "detail": "passed"},
        "skipped": "", "ok": True,
    }  # fmt: skip


def test_a_test_that_skips_itself_on_this_python_is_neither_proven_nor_failed() -> None:
    red = JunitCase("failed", "assert x", {"exception": "AssertionError", "exception_message": "x was lost"})
    passed, skipped = JunitCase("passed", "", {}), JunitCase("skipped", "no cancellation count on 3.10", {})
    proof = prove_patch("1.0", "0001-a.patch", {"t::a": red, "t::b": skipped}, {"t::a": passed, "t::b": skipped})
    assert proof.ok
    assert proof.tests[1].skipped == "no cancellation count on 3.10"
    assert "skipped here: no cancellation count on 3.10" in format_proofs([proof])
    only_skipped = prove_patch("1.0", "0002-b.patch", {"t::b": skipped}, {"t::b": skipped})
    assert not only_skipped.ok  # a patch none of whose tests runs here proves nothing here
    skipped_once = prove_patch("1.0", "0003-c.patch", {"t::c": skipped}, {"t::c": passed})
    assert not skipped_once.ok


def _one_python(python: str, ok: bool = True) -> dict[str, Any]:
    red = JunitCase("failed", "", {"exception": "AssertionError"}) if ok else JunitCase("passed", "", {})
    return evidence([prove_patch("1.0", "0001-a.patch", {"t::a": red}, {"t::a": JunitCase("passed", "", {})})], python)


def test_the_matrix_keeps_other_pythons_of_the_same_series_and_replaces_this_one() -> None:
    earlier = merge_evidence({}, _one_python("3.12.1"), "s1")
    earlier = merge_evidence({"produced": {"series": "s1"}, **earlier}, _one_python("3.10.13", ok=False), "s1")
    assert (earlier["pythons"], earlier["ok"]) == (["3.10.13", "3.12.1"], False)
    again = merge_evidence({"produced": {"series": "s1"}, **earlier}, _one_python("3.10.14"), "s1")
    assert (again["pythons"], again["ok"]) == (["3.10.14", "3.12.1"], True)
    assert len(again["patches"]) == 2
    other_series = merge_evidence({"produced": {"series": "s0"}, **earlier}, _one_python("3.11.7"), "s1")
    assert other_series["pythons"] == ["3.11.7"]


def test_a_file_from_before_the_matrix_names_its_python_on_top() -> None:
    old = {"produced": {"series": "s1"}, "python": "3.11.7", "patches": [{"base": "1.0", "ok": True}]}
    merged = merge_evidence(old, _one_python("3.13.0"), "s1")
    assert merged["pythons"] == ["3.11.7", "3.13.0"]
    assert merged["patches"][0] == {"python": "3.11.7", "base": "1.0", "ok": True}


def test_prefixes_map_each_applied_patch_to_its_commit(
    framework: Path, series: SeriesBuilder, env: dict[str, str], tmp_path: Path
) -> None:
    test_file = "python/packages/core/tests/workflow/test_fix.py"
    series.add("fix", [*RUNNER_LINES[:9], "fixed 10", *RUNNER_LINES[10:]], files={test_file: ["def test_a(): ..."]})
    series.add("unchanged-again", RUNNER_LINES)  # reverses the first patch: not upstream, adds no test
    upstream = (
        "Upstream-Status: not forwarded\nUpstream-Detect: python/packages/core/agent_framework/__init__.py # core"
    )
    series.add("already-upstream", [*RUNNER_LINES[:19], "fixed 20", *RUNNER_LINES[20:]], trailers=upstream)
    patched = patched_copy(framework, "synthetic", read_series(series.patches))

    steps = clone_prefixes(patched, tmp_path / "prefixes")

    assert [(step.name, step.added_tests) for step in steps] == [
        ("0001-fix.patch", ["tests/workflow/test_fix.py"]),
        ("0002-unchanged-again.patch", []),
    ]  # 0003 is already upstream: it has no commit, so no prefix to prove it on
    assert steps[0].parent == patched.source_commit
    assert steps[1].parent == steps[0].commit
    assert git(tmp_path / "prefixes", "rev-parse", "HEAD") == steps[1].commit
