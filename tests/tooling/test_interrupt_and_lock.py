"""Signals midway and concurrent applies leave the checkout exactly as it was; a rerun then succeeds."""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path

import pytest

from scripts.lock import LOCK_NAME
from tests.tooling.helpers import REPO_ROOT, RUNNER_LINES, SeriesBuilder, checkout_state, git, run_cli

REAL_GIT = shutil.which("git")
FIRST = [*RUNNER_LINES[:9], "fixed 10", *RUNNER_LINES[10:]]
SECOND = [*FIRST[:19], "fixed 20", *FIRST[20:]]


def fake_git(directory: Path, on_second_am: str) -> Path:
    """A ``git`` that runs ``on_second_am`` (a shell command) when the second ``git am`` starts."""
    directory.mkdir()
    script = directory / "git"
    script.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" am "*)\n'
        f'  echo x >> "{directory}/am-calls"\n'
        f'  if [ "$(wc -l < "{directory}/am-calls")" -eq 2 ]; then {on_second_am}; fi ;;\n'
        "esac\n"
        f'exec "{REAL_GIT}" "$@"\n'
    )
    script.chmod(0o755)
    return directory


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_midway_changes_nothing(
    framework: Path, series: SeriesBuilder, env: dict[str, str], tmp_path: Path, signum: signal.Signals
) -> None:
    series.add("first", FIRST)
    series.add("second", SECOND)
    before = checkout_state(framework)
    # The parent of git is the apply process: signal it while the second patch is being applied.
    fake = fake_git(tmp_path / "fake-git", f"kill -{signum.name.removeprefix('SIG')} $PPID; exec sleep 30")

    interrupted = run_cli("apply", "--checkout", str(framework), env=env, path_prefix=fake)

    assert interrupted.returncode == 130
    assert interrupted.stderr == "runguard: error: interrupted; nothing was changed\n"
    assert checkout_state(framework) == before
    assert not (framework / ".git" / LOCK_NAME).exists()
    assert not (framework / ".git" / "worktrees").exists() or not any((framework / ".git" / "worktrees").iterdir())
    rerun = run_cli("apply", "--checkout", str(framework), env=env)
    assert (rerun.returncode, rerun.stderr) == (0, "")


def test_concurrent_apply_gets_a_one_line_error(
    framework: Path, series: SeriesBuilder, env: dict[str, str], tmp_path: Path
) -> None:
    series.add("first", FIRST)
    series.add("second", SECOND)
    # While the first apply holds the lock, its fake git starts a second apply on the same checkout.
    second_apply = (
        f'PATH="{Path(str(REAL_GIT)).parent}:$PATH" "{sys.executable}" -m scripts apply --checkout "{framework}"'
        f' --branch runguard/other > "{tmp_path}/second.out" 2> "{tmp_path}/second.err"'
        f'; echo $? > "{tmp_path}/second.code"'
    )
    fake = fake_git(tmp_path / "fake-git", f'(cd "{REPO_ROOT}" && {second_apply})')

    first = run_cli("apply", "--checkout", str(framework), "--branch", "runguard/first", env=env, path_prefix=fake)

    assert (first.returncode, first.stderr) == (0, "")
    assert (tmp_path / "second.code").read_text() == "1\n"
    assert (
        (tmp_path / "second.err")
        .read_text()
        .startswith(f"runguard: error: another runguard apply is running on {framework}")
    )
    assert (tmp_path / "second.err").read_text().count("\n") == 1
    assert git(framework, "branch", "--list", "runguard/*") == "runguard/first"


def test_lock_of_a_dead_process_is_taken_over(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("first", FIRST)
    (framework / ".git" / LOCK_NAME).write_text("999999999\n")
    result = run_cli("apply", "--checkout", str(framework), env=env)
    assert (result.returncode, result.stderr) == (0, "")
    assert not (framework / ".git" / LOCK_NAME).exists()
