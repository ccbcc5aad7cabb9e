"""A checkout that already has a patch's change, identical or equivalent, skips the patch and says so."""

from __future__ import annotations

from pathlib import Path

from tests.tooling.helpers import RUNNER_FILE, RUNNER_LINES, SeriesBuilder, commit_all, git, run_cli, write_lines

FIXED = [*RUNNER_LINES[:14], "fixed 15", *RUNNER_LINES[15:]]


def apply_output(framework: Path, env: dict[str, str]) -> str:
    result = run_cli("apply", "--checkout", str(framework), "--branch", "runguard/upstream", env=env)
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout


def test_identical_change_reverse_applies(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", FIXED)
    write_lines(framework, RUNNER_FILE, FIXED)
    commit_all(framework, "Upstream makes the same change")
    out = apply_output(framework, env)
    assert "already upstream" in out
    assert "the patch reverse-applies cleanly; skipped, consider dropping it from the series" in out
    assert git(framework, "rev-parse", "runguard/upstream") == git(framework, "rev-parse", "HEAD")


def test_same_patch_id_in_history(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", FIXED)
    write_lines(framework, RUNNER_FILE, FIXED)
    upstream_commit = commit_all(framework, "Upstream takes the patch")
    # A later upstream commit edits the patch's context, so the patch no longer reverse-applies.
    write_lines(framework, RUNNER_FILE, [*FIXED[:13], "line 14 edited later", *FIXED[14:]])
    commit_all(framework, "Upstream moves on")
    out = apply_output(framework, env)
    assert f"commit {upstream_commit[:12]} has the same patch id" in out


def test_equivalent_fix_found_by_upstream_detect(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", FIXED, f"Upstream-Status: not forwarded\nUpstream-Detect: {RUNNER_FILE} upstream's own fix")
    write_lines(
        framework, RUNNER_FILE, [*RUNNER_LINES[:14], "upstream's own fix, written differently", *RUNNER_LINES[15:]]
    )
    commit_all(framework, "Upstream fixes it its own way")
    out = apply_output(framework, env)
    assert f'{RUNNER_FILE} contains "upstream\'s own fix" (Upstream-Detect)' in out


def test_detector_that_does_not_match_lets_the_patch_apply(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    series.add("fix", FIXED, f"Upstream-Status: not forwarded\nUpstream-Detect: {RUNNER_FILE} not there yet")
    assert "applied clean" in apply_output(framework, env)


def test_applied_upstream_patch_is_reported_with_its_status(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    status = "applied upstream in main after python-1.23.0 (#10204)"
    series.add("fix", FIXED, f"Upstream-Status: {status}\nUpstream-Detect: {RUNNER_FILE} upstream's own fix")
    series.add("later", [*FIXED[:24], "fixed 25", *FIXED[25:]])
    write_lines(framework, RUNNER_FILE, [*RUNNER_LINES[:14], "upstream's own fix", *RUNNER_LINES[15:]])
    commit_all(framework, "Upstream fixes it its own way")
    lines = apply_output(framework, env).splitlines()
    row = next(number for number, line in enumerate(lines) if "0001-fix.patch" in line)
    assert "already upstream" in lines[row]
    assert status in lines[row]
    detail = " ".join(line.strip() for line in lines[row + 1 : row + 3])  # below its row, wrapped at 120 columns
    assert detail.endswith("(Upstream-Detect); skipped, consider dropping it from the series")
