"""Applying the series to a user's checkout: outcomes per patch, a new branch, and the checkout untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tooling.helpers import (
    RUNNER_FILE,
    RUNNER_LINES,
    SeriesBuilder,
    checkout_state,
    commit_all,
    git,
    make_lived_in,
    run_cli,
    write_lines,
)

FIXED = ["fixed 1", *RUNNER_LINES[1:]]


def apply(framework: Path, env: dict[str, str], *extra: str) -> tuple[int, str, str]:
    result = run_cli("apply", "--checkout", str(framework), *extra, env=env)
    return result.returncode, result.stdout, result.stderr


def branches(framework: Path) -> list[str]:
    return git(framework, "branch", "--format=%(refname:short)").splitlines()


def test_clean_apply_creates_a_branch_and_touches_nothing(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    series.add("fix-one", FIXED)
    series.add("fix-two", [*FIXED[:-1], "fixed 30"])
    make_lived_in(framework)
    before = checkout_state(framework)

    code, out, err = apply(framework, env, "--branch", "runguard/test")

    assert (code, err) == (0, "")
    assert "0001-fix-one.patch" in out
    assert "applied clean" in out
    assert "summary: 2 applied clean" in out
    assert checkout_state(framework) | {"branches": ""} == before | {"branches": ""}
    assert "runguard/test" in branches(framework)
    assert git(framework, "show", f"runguard/test:{RUNNER_FILE}").splitlines()[::29] == ["fixed 1", "fixed 30"]
    assert git(framework, "log", "--format=%s", "-2", "runguard/test").splitlines() == [
        "Python: fix-two",
        "Python: fix-one",
    ]


def test_default_branch_name_is_printed(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix-one", FIXED)
    code, out, _ = apply(framework, env)
    created = [name for name in branches(framework) if name.startswith("runguard/")]
    assert code == 0
    assert len(created) == 1
    assert f"created branch {created[0]}" in out


def test_detached_head_works(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix-one", FIXED)
    git(framework, "checkout", "--quiet", "--detach")
    before = checkout_state(framework)
    code, _, err = apply(framework, env, "--branch", "runguard/detached")
    assert (code, err) == (0, "")
    assert checkout_state(framework)["symbolic"] == before["symbolic"] == ""
    assert git(framework, "rev-parse", "runguard/detached~1") == before["head"]


def test_empty_series_is_reported(framework: Path, env: dict[str, str]) -> None:
    code, out, _ = apply(framework, env, "--branch", "runguard/empty")
    assert code == 0
    assert "the series is empty" in out


MIDDLE_FIXED = [*RUNNER_LINES[:14], "fixed 15", *RUNNER_LINES[15:]]


@pytest.mark.parametrize(
    ("upstream_lines", "expected"),
    [
        (
            ["new a", "new b", "new c", *RUNNER_LINES],
            "applied with offset  not forwarded\n    Hunk #1 succeeded at 15 (offset 3 lines)",
        ),
        ([*RUNNER_LINES[:16], "line 17 edited", *RUNNER_LINES[17:]], "applied with 3-way merge"),
    ],
)
def test_offset_and_three_way(
    framework: Path, series: SeriesBuilder, env: dict[str, str], upstream_lines: list[str], expected: str
) -> None:
    series.add("middle", MIDDLE_FIXED)
    write_lines(framework, RUNNER_FILE, upstream_lines)
    commit_all(framework, "Upstream moves on")
    code, out, err = apply(framework, env, "--branch", "runguard/moved")
    assert (code, err) == (0, ""), out
    assert expected in out
    assert "fixed 15" in git(framework, "show", f"runguard/moved:{RUNNER_FILE}")


def test_conflict_leaves_nothing_behind(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix-one", FIXED)
    write_lines(framework, RUNNER_FILE, ["upstream 1", *RUNNER_LINES[1:]])
    commit_all(framework, "Upstream edits the same line")
    before = checkout_state(framework)
    code, out, err = apply(framework, env, "--branch", "runguard/conflict")
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("runguard: error: 0001-fix-one.patch does not apply:")
    conflict = next(line for line in out.splitlines() if "0001-fix-one.patch" in line).split()
    assert conflict[2:6] == ["conflict", "conflict", "not", "forwarded"]
    assert f"{RUNNER_FILE}, hunk @@ -1,4 +1,4 @@" in out
    assert checkout_state(framework) == before


def test_an_older_checkout_is_named_with_its_version_and_every_patch_tried_on_its_own(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    pyproject = "python/packages/core/pyproject.toml"
    write_lines(framework, pyproject, ["[project]", 'name = "agent-framework-core"', 'version = "1.13.0"'])
    commit_all(framework, "Release 1.13.0")
    series.add("fix-one", FIXED)
    series.add("fix-end", [*FIXED[:-1], "fixed 30"])  # after fix-one, but its hunk does not reach the first line
    series.add("new-file", [*FIXED[:-1], "fixed 30"], files={"python/packages/core/agent_framework/new.py": ["x = 1"]})
    write_lines(framework, RUNNER_FILE, ["upstream 1", *RUNNER_LINES[1:]])
    commit_all(framework, "Upstream edits the first line")
    before = checkout_state(framework)

    code, out, err = apply(framework, env)

    assert code == 1
    assert err.startswith("runguard: error: 0001-fix-one.patch does not apply:")
    assert err.count("\n") == 1
    lines = out.splitlines()
    assert (
        lines[0]
        == f"{framework}, agent-framework-core 1.13.0, older than every base the series is validated on (9.9.9):"
    )
    assert "in the series  on its own" in lines[1]
    table = [line.split("  ") for line in lines[2:] if line[:1].isdigit()]
    assert [[cell.strip() for cell in row if cell.strip()][1:4] for row in table] == [
        ["0001-fix-one.patch", "conflict", "conflict"],
        ["0002-fix-end.patch", "not reached", "applied clean"],
        ["0003-new-file.patch", "not reached", "applied clean"],
    ]
    assert lines[-1] == "summary: 1 conflict; on its own, 2 of 3 patches apply"
    assert checkout_state(framework) == before


def test_existing_branch_is_an_error(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix-one", FIXED)
    git(framework, "branch", "runguard/taken")
    before = checkout_state(framework)
    code, _, err = apply(framework, env, "--branch", "runguard/taken")
    assert code == 1
    assert (
        err
        == f"runguard: error: branch runguard/taken already exists in {framework}; delete it or pass --branch NAME\n"
    )
    assert checkout_state(framework) == before
