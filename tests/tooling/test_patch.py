"""The Patch model, read from the mbox with git: subject, trailers, upstream status, detectors, files, added tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.patch import Detector, added_tests, read_patch
from tests.tooling.helpers import RUNNER_FILE, RUNNER_LINES, SeriesBuilder, commit_all, write_lines

TRAILERS = (
    "Fixes: #9473\nRefs: #10164\nUpstream-Status: forwarded https://example.invalid/pull/1\n"
    "Upstream-Detect: python/packages/core/agent_framework/_workflows/_runner.py owner = run_id"
)


def test_subject_and_trailers(series: SeriesBuilder) -> None:
    info = read_patch(series.add("guard-runs", ["changed", *RUNNER_LINES[1:]], TRAILERS))
    assert info.subject == "Python: guard-runs"
    assert info.values("fixes") == ["#9473"]
    assert info.values("Refs") == ["#10164"]
    assert info.upstream_status == "forwarded https://example.invalid/pull/1"
    assert info.detectors == [Detector("python/packages/core/agent_framework/_workflows/_runner.py", "owner = run_id")]


@pytest.mark.parametrize(
    "trailers",
    ["Fixes: #1", "Upstream-Status: sent somewhere", "Upstream-Status: not forwarded\nUpstream-Detect: only-a-path"],
)
def test_bad_trailers_are_errors(series: SeriesBuilder, trailers: str) -> None:
    patch = series.add("bad", ["changed", *RUNNER_LINES[1:]], trailers)
    with pytest.raises(RunguardError, match=r"0001-bad\.patch"):
        read_patch(patch)


def test_applied_upstream_status(series: SeriesBuilder) -> None:
    patch = series.add("old", ["changed", *RUNNER_LINES[1:]], "Upstream-Status: applied upstream in 1.24.0")
    assert read_patch(patch).upstream_status == "applied upstream in 1.24.0"


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("not forwarded", ("not forwarded", "")),
        ("forwarded https://example.invalid/pull/2", ("forwarded", "https://example.invalid/pull/2")),
        (
            "applied upstream in main after python-1.23.0 (#10204)",
            ("applied upstream", "main after python-1.23.0 (#10204)"),
        ),
    ],
)
def test_upstream_state_is_machine_readable(series: SeriesBuilder, status: str, state: tuple[str, str]) -> None:
    patch = series.add("any", ["changed", *RUNNER_LINES[1:]], f"Upstream-Status: {status}")
    assert read_patch(patch).upstream_state == state


NEW_TEST = "python/packages/core/tests/workflow/test_ownership.py"
EXISTING_TEST = "python/packages/core/tests/workflow/test_workflow.py"
UPSTREAM_TESTS = [
    "import pytest", "", "", "def test_upstream(value: int) -> None:", "    assert value", "", "",
    "class TestUpstream:", "    def test_method(self) -> None:", "        assert True",
]  # fmt: skip


def test_files_and_their_line_counts(series: SeriesBuilder) -> None:
    patch = read_patch(series.add("fix", ["changed", *RUNNER_LINES[1:]], files={NEW_TEST: ["def test_a(): ..."]}))
    assert [(change.path, change.added, change.deleted, change.created) for change in patch.changes] == [
        (RUNNER_FILE, 1, 1, False),
        (NEW_TEST, 1, 0, True),
    ]
    assert patch.changes[1].is_test
    assert not patch.changes[0].is_test


def test_a_new_test_file_is_named_whole_and_its_functions_listed(series: SeriesBuilder) -> None:
    patch = read_patch(series.add("fix", RUNNER_LINES, files={NEW_TEST: ["def test_a(): ...", "def helper(): ..."]}))
    assert patch.added_tests == ("tests/workflow/test_ownership.py",)
    assert patch.test_functions == ("tests/workflow/test_ownership.py::test_a",)


def test_tests_added_to_an_existing_file_are_named_by_node_id(framework: Path, series: SeriesBuilder) -> None:
    write_lines(framework, EXISTING_TEST, UPSTREAM_TESTS)
    commit_all(framework, "Upstream has a test module")
    added = [
        *UPSTREAM_TESTS[:3], "async def test_new(value: int) -> None:", "    assert value", "", "",
        "def test_upstream(value: int, other: int) -> None:",  # a changed signature is not a new test
        *UPSTREAM_TESTS[4:], "", "    async def test_new_method(self) -> None:", "        assert True", "",
        "", "class Helper:", "    def test_not_collected(self) -> None: ...", "",
        "", "class TestNew:", "    def test_in_new_class(self) -> None: ...", "    def helper(self) -> None: ...",
    ]  # fmt: skip
    patch = read_patch(series.add("more-tests", RUNNER_LINES, files={EXISTING_TEST: added}))
    assert patch.added_tests == (
        "tests/workflow/test_workflow.py::test_new",
        "tests/workflow/test_workflow.py::TestUpstream::test_new_method",
        "tests/workflow/test_workflow.py::TestNew::test_in_new_class",
    )


def test_a_run_names_each_test_once(framework: Path, series: SeriesBuilder) -> None:
    first = read_patch(series.add("first", RUNNER_LINES, files={NEW_TEST: ["def test_a(): ..."]}))
    grown = ["def test_a(): ...", "def test_b(): ..."]
    second = read_patch(series.add("second", RUNNER_LINES, files={NEW_TEST: grown}))
    assert second.added_tests == ("tests/workflow/test_ownership.py::test_b",)
    assert added_tests([first, second]) == ["tests/workflow/test_ownership.py"]


def test_runguards_own_trailers_and_line_counts(series: SeriesBuilder, patches: Path) -> None:
    trailers = (
        "Depends-On: 0001-x.patch (why)\nDepends-On: none\nBehaviour-Change: run() waits\nIssue-Draft: leak\n"
        "Upstream-Status: not forwarded"
    )
    test_file = "python/packages/core/tests/workflow/test_new.py"
    path = series.add(
        "own", ["changed", "added", *RUNNER_LINES[1:]], trailers, files={test_file: ["def test_a(): ..."]}
    )
    (patches / "pr").mkdir()
    (patches / "pr" / "0001-own.md").write_text("intro\n## Impact\nSome.\n\n## Review focus\nThat.\n")
    patch = read_patch(path)
    assert patch.depends_on == ["0001-x.patch (why)"]
    assert patch.behaviour_changes == ["run() waits"]
    assert patch.issue_drafts == ["leak"]
    assert not patch.is_backport
    assert (patch.source_lines, patch.test_lines) == ((2, 1), (1, 0))
    assert patch.pr_section("Review focus") == "That."
    with pytest.raises(RunguardError, match=r"0001-own\.patch: patches/pr/0001-own\.md needs a non-empty '## Motive'"):
        patch.pr_section("Motive")


def test_a_patch_applied_upstream_is_a_backport(series: SeriesBuilder) -> None:
    path = series.add("back", ["changed", *RUNNER_LINES[1:]], "Upstream-Status: applied upstream in 1.23.0; backport")
    assert read_patch(path).is_backport


def test_a_corrupt_patch_is_named_with_the_line_git_stopped_at(series: SeriesBuilder, env: dict[str, str]) -> None:
    patch = series.add("fix", ["changed", *RUNNER_LINES[1:]])
    lines = patch.read_text().splitlines(keepends=True)
    hunk = next(number for number, line in enumerate(lines) if line.startswith("@@ "))
    lines.insert(hunk + 2, "this line is neither context nor a change\n")
    patch.write_text("".join(lines))
    with pytest.raises(RunguardError) as raised:
        read_patch(patch)
    assert str(raised.value) == f"{patch}: git cannot read it as a patch: corrupt patch at line {hunk + 3}"
