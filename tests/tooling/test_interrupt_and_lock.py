"""Signals at each step of an apply, and concurrent applies, leave the checkout and the cache as they were."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from scripts.apply.lock import LOCK_NAME, checkout_lock
from scripts.series.errors import RunguardError
from scripts.sources.base import materialize_base
from tests.tooling.helpers import (
    RUNNER_LINES,
    TIMEOUT_SECONDS,
    SeriesBuilder,
    checkout_state,
    git,
    make_lived_in,
    run_cli,
    start_cli,
)
from tests.tooling.index_server import Index, serve_index
from tests.tooling.step_gate import step_gate

FIRST = [*RUNNER_LINES[:9], "fixed 10", *RUNNER_LINES[10:]]
SECOND = [*FIRST[:19], "fixed 20", *FIRST[20:]]
SIGNALS = [signal.SIGINT, signal.SIGTERM]
INTERRUPTED = "runguard: error: interrupted; nothing was changed\n"
# (git subcommand, occurrence): each step of `apply --checkout` that changes the checkout's repository, in order.
CHECKOUT_STEPS = [("worktree add", 1), ("am", 1), ("am", 2), ("branch", 1)]
# `apply --base`: materializing the base (its commit), then applying the series to the cached copy.
BASE_STEPS = [("commit", 1), ("am", 1)]


def step_id(step: tuple[str, int]) -> str:
    return f"{step[0].replace(' ', '-')}-{step[1]}"


VERSION = "9.9.9"


def interrupt_at(
    step: tuple[str, int], signum: signal.Signals, gate_dir: Path, *args: str, env: dict[str, str]
) -> tuple[int, str]:
    """Run ``python -m scripts *args``, send ``signum`` once the step has run; return the exit code and stderr."""
    with step_gate(gate_dir, *step) as gate:
        process = start_cli(*args, env={**env, **gate.env})
        gate.wait()
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
    return process.returncode, stderr


def leftovers(git_dir: Path) -> list[str]:
    """Lock files and worktree records in a git directory: an apply must leave none behind."""
    found = [*git_dir.rglob("*.lock"), *git_dir.glob("worktrees/*"), *git_dir.glob(LOCK_NAME)]
    return sorted(str(path.relative_to(git_dir)) for path in found)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda signum: signum.name)
@pytest.mark.parametrize("step", CHECKOUT_STEPS, ids=step_id)
def test_signal_at_each_checkout_step_changes_nothing(
    framework: Path, series: SeriesBuilder, env: dict[str, str], tmp_path: Path, *, step: tuple[str, int],
    signum: signal.Signals,
) -> None:  # fmt: skip
    series.add("first", FIRST)
    series.add("second", SECOND)
    make_lived_in(framework)
    before = checkout_state(framework)

    code, stderr = interrupt_at(step, signum, tmp_path / "gate", "apply", "--checkout", str(framework), env=env)

    assert (code, stderr) == (130, INTERRUPTED)
    assert checkout_state(framework) == before
    assert leftovers(framework / ".git") == []
    rerun = run_cli("apply", "--checkout", str(framework), env=env)
    assert (rerun.returncode, rerun.stderr) == (0, "")
    assert checkout_state(framework) | {"branches": ""} == before | {"branches": ""}


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda signum: signum.name)
@pytest.mark.parametrize("step", BASE_STEPS, ids=step_id)
def test_signal_while_building_the_cache_leaves_no_partial_entry(
    patches: Path, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, step: tuple[str, int],
    signum: signal.Signals,
) -> None:  # fmt: skip
    with serve_index(Index([VERSION])) as index:
        monkeypatch.setenv("RUNGUARD_INDEX_URL", f"{index.url}/simple")
        # The series is made against a base built in a cache of its own; the interrupted apply builds the same base.
        series = SeriesBuilder(materialize_base(VERSION), patches, tmp_path / "scratch")
        series.add("fix", ["fixed 1", "line 2"])
        cli_env = {**env, "RUNGUARD_INDEX_URL": f"{index.url}/simple", "RUNGUARD_CACHE": str(tmp_path / "cli-cache")}

        code, stderr = interrupt_at(step, signum, tmp_path / "gate", "apply", "--base", VERSION, env=cli_env)

        assert (code, stderr) == (130, INTERRUPTED)
        cache = tmp_path / "cli-cache"
        assert [path.name for path in cache.glob("*/.*")] == []  # no scratch directory left behind
        assert list(cache.glob("patched/*")) == []
        rerun = run_cli("apply", "--base", VERSION, env=cli_env)
        assert (rerun.returncode, rerun.stderr) == (0, "")
        assert "1  0001-fix.patch  applied clean" in rerun.stdout


def test_concurrent_apply_gets_a_one_line_error_and_changes_nothing(
    framework: Path, series: SeriesBuilder, env: dict[str, str], tmp_path: Path
) -> None:
    series.add("first", FIRST)
    series.add("second", SECOND)
    make_lived_in(framework)
    before = checkout_state(framework)
    with step_gate(tmp_path / "gate", "am", 1) as gate:
        first = start_cli("apply", "--checkout", str(framework), "--branch", "runguard/first", env={**env, **gate.env})
        gate.wait()  # the first apply holds the lock and is midway through the series

        second = run_cli("apply", "--checkout", str(framework), "--branch", "runguard/second", env=env)

        assert second.returncode == 1
        assert second.stderr.startswith(f"runguard: error: another runguard apply is running on {framework}")
        assert second.stderr.count("\n") == 1
        gate.release()
        _, first_stderr = first.communicate(timeout=TIMEOUT_SECONDS)
    assert (first.returncode, first_stderr) == (0, "")
    assert git(framework, "branch", "--list", "runguard/*") == "runguard/first"
    assert checkout_state(framework) | {"branches": ""} == before | {"branches": ""}
    assert leftovers(framework / ".git") == []


def test_lock_file_left_by_a_killed_apply_does_not_block(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    series.add("first", FIRST)
    (framework / ".git" / LOCK_NAME).write_text("left by a killed apply\n")
    result = run_cli("apply", "--checkout", str(framework), env=env)
    assert (result.returncode, result.stderr) == (0, "")
    assert not (framework / ".git" / LOCK_NAME).exists()


def test_lock_is_exclusive_until_released(framework: Path) -> None:
    git_dir = framework / ".git"
    busy = pytest.raises(RunguardError, match="another runguard apply is running")
    with checkout_lock(git_dir, framework), busy, checkout_lock(git_dir, framework):
        pass  # never reached: the second lock raises
    with checkout_lock(git_dir, framework):
        assert (git_dir / LOCK_NAME).exists()
    assert not (git_dir / LOCK_NAME).exists()
