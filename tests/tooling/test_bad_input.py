"""Bad input: each gives one ``runguard: error:`` line, a non-zero exit, and leaves the checkout as it was."""

from __future__ import annotations

from pathlib import Path

from tests.tooling.helpers import (
    RUNNER_LINES,
    SeriesBuilder,
    checkout_state,
    commit_all,
    git,
    run_cli,
    run_module,
    write_lines,
)
from tests.tooling.index_server import Index, serve_index


def assert_one_line_error(code: int, stderr: str, message: str) -> None:
    assert code == 1
    assert stderr == f"runguard: error: {message}\n"


def test_not_a_git_repo(tmp_path: Path, env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    (plain / "python" / "packages" / "core" / "agent_framework").mkdir(parents=True)
    result = run_cli("apply", "--checkout", str(plain), env={**env, "GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert_one_line_error(result.returncode, result.stderr, f"{plain} is not a git repository")
    assert sorted(p.name for p in plain.rglob("*")) == ["agent_framework", "core", "packages", "python"]


def test_not_a_directory(tmp_path: Path, env: dict[str, str]) -> None:
    result = run_cli("apply", "--checkout", str(tmp_path / "nowhere"), env=env)
    assert_one_line_error(result.returncode, result.stderr, f"{tmp_path / 'nowhere'} is not a directory")


def test_git_repo_that_is_not_agent_framework(tmp_path: Path, env: dict[str, str]) -> None:
    other = tmp_path / "other"
    git(tmp_path, "init", "--quiet", str(other))
    write_lines(other, "README.md", ["something else"])
    commit_all(other, "Another project")
    before = checkout_state(other)
    result = run_cli("apply", "--checkout", str(other), env=env)
    message = f"{other} is not an agent-framework checkout (no python/packages/core/agent_framework)"
    assert_one_line_error(result.returncode, result.stderr, message)
    assert checkout_state(other) == before


def test_series_listing_a_missing_file(framework: Path, series: SeriesBuilder, env: dict[str, str]) -> None:
    series.add("fix", [*RUNNER_LINES[:9], "fixed 10", *RUNNER_LINES[10:]])
    with (series.patches / "series").open("a") as listing:
        listing.write("0002-gone.patch\n")
    before = checkout_state(framework)
    result = run_cli("apply", "--checkout", str(framework), env=env)
    message = f"series lists 0002-gone.patch, which does not exist in {series.patches}"
    assert_one_line_error(result.returncode, result.stderr, message)
    assert checkout_state(framework) == before


def test_base_not_on_pypi(env: dict[str, str]) -> None:
    with serve_index(Index(["9.9.9"])) as index:
        result = run_cli("apply", "--base", "0.0.404", env={**env, "RUNGUARD_INDEX_URL": f"{index.url}/simple"})
    message = f"agent-framework-core 0.0.404 is not on PyPI (no agent_framework_core-0.0.404.tar.gz on {index.url}"
    assert result.returncode == 1
    assert result.stderr.startswith(f"runguard: error: {message}")
    assert result.stderr.count("\n") == 1


def test_unreachable_index(env: dict[str, str]) -> None:
    result = run_cli("apply", "--base", "1.0.0", env={**env, "RUNGUARD_INDEX_URL": "http://127.0.0.1:9/simple"})
    assert result.returncode == 1
    assert result.stderr.startswith("runguard: error: cannot read the package index http://127.0.0.1:9/simple/")
    assert result.stderr.count("\n") == 1


def test_entry_points_report_one_line(tmp_path: Path, env: dict[str, str]) -> None:
    """The browser check without chromium, and the benchmark on a base that is not on the index."""
    no_chromium = {**env, "PATH": str(tmp_path)}
    browser = run_module("scripts.site.browser_check", str(tmp_path), env=no_chromium)
    assert_one_line_error(
        browser.returncode,
        browser.stderr,
        "chromium not found; install it with `apt-get update && apt-get install -y chromium`",
    )
    with serve_index(Index(["9.9.9"])) as index:
        bench = run_module(
            "scripts.bench", "--scratch", str(tmp_path), "--base", "0.0.404", "--quick",
            env={**env, "RUNGUARD_INDEX_URL": f"{index.url}/simple"},
        )  # fmt: skip
    assert bench.returncode == 1
    assert bench.stderr.startswith("runguard: error: agent-framework-core 0.0.404 is not on PyPI")
    assert bench.stderr.count("\n") == 1


def test_the_benchmark_names_a_bad_python_once_and_writes_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    data = tmp_path / "data"
    for given, message in (("3.9", "unknown Python '3.9'"), ("3.12,x", "unknown Python 'x'")):
        bench = run_module(
            "scripts.bench", "--scratch", str(tmp_path), "--python", "3.11", "--python", given,
            env={**env, "RUNGUARD_DATA": str(data)},
        )  # fmt: skip
        assert bench.returncode == 1
        assert bench.stderr.startswith(f"runguard: error: {message}: give X.Y, 3.10 or newer")
        assert bench.stderr.count("\n") == 1
    assert not data.exists()


def test_an_unknown_flag_is_named(env: dict[str, str]) -> None:
    result = run_cli("apply", "--bogus", env=env)
    assert_one_line_error(result.returncode, result.stderr, "unrecognized arguments: --bogus")
    bench = run_module("scripts.bench", "--scratch", "x", "--bogus", env=env)
    assert_one_line_error(bench.returncode, bench.stderr, "unrecognized arguments: --bogus")


def test_apply_without_a_target_says_what_it_needs(env: dict[str, str]) -> None:
    result = run_cli("apply", env=env)
    assert_one_line_error(result.returncode, result.stderr, "apply needs --base VERSION or --checkout PATH")
