"""Results kept by content: reused while every input is the same, computed again when any one of them changed.

Mypy's findings on a checkout (its tree, the restated configuration, the files checked, the environment) and an
issue reproduction's run (the script, the checkout it runs against, the environment, the runner); the sessions'
side: findings computed only on a miss, grouped by the core package they need, which is installed only when another
tree is asked for.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import cast

import nox
import pytest

from scripts.series.locations import CORE_PACKAGE
from scripts.sessions import glue, kept
from scripts.sessions.kept import SuiteRun, ToolRun, kept_findings, kept_passes
from scripts.validate import gate, repro
from scripts.validate.gate import mypy_key
from scripts.validate.repro import ReproRun, keep_run, kept_run, run_key, run_reproductions
from scripts.validate.results_cache import load, load_findings, store, store_findings
from tests.tooling.helpers import commit_all, make_framework_repo, write_lines

TEST = "python/packages/core/tests/core/test_a.py"
ENVIRONMENT = "Python 3.11.7 mypy==2.3.0 pydantic==2.12.0"
FINDINGS = Counter({"packages/core/tests/core/test_a.py: name-defined: Name 'x' is not defined": 2})
SCRIPT = "import sys\nprint('observed: it ran')\nprint('expected: it did not')\nsys.exit({code})\n"


@pytest.fixture
def checkout(tmp_path: Path, env: dict[str, str]) -> Path:
    """A framework checkout with one test file, and a private cache (``env``)."""
    repo = make_framework_repo(tmp_path / "framework")
    write_lines(repo, TEST, ["def test_a() -> None: ..."])
    commit_all(repo, "A test")
    return repo


def test_a_result_is_found_under_its_key_only(env: dict[str, str]) -> None:
    store("kind", {"a": 1}, "one", "two")
    assert load("kind", "one", "two") == {"a": 1}
    assert load("kind", "one", "three") is None
    assert load("other", "one", "two") is None
    store_findings("findings", FINDINGS, "key")
    assert load_findings("findings", "key") == FINDINGS
    assert load_findings("findings", "missing") is None


def test_an_unreadable_entry_is_a_miss(env: dict[str, str]) -> None:
    store("kind", {"a": 1}, "key")
    entry = next((Path(env["RUNGUARD_CACHE"]) / "kind").glob("*.json"))
    entry.write_text("{not json")
    assert load("kind", "key") is None


def _change_tests_file(repo: Path) -> None:
    write_lines(repo, TEST, ["def test_a() -> None: assert x"])
    commit_all(repo, "Another test")


def _change_core(repo: Path) -> None:
    write_lines(repo, "python/packages/core/agent_framework/__init__.py", ["# core, patched"])
    commit_all(repo, "A patch")


def _mypy_key_after(change: str, repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """Mypy's key for ``checkout`` once one input changed."""
    tests, environment = [TEST], ENVIRONMENT
    if change == "a checked file":
        _change_tests_file(repo)
    elif change == "the installed core":
        _change_core(repo)
    elif change == "the files checked":
        tests = [TEST, "python/packages/core/tests/core/test_b.py"]
    elif change == "the Python":
        environment = ENVIRONMENT.replace("3.11.7", "3.12.1")
    elif change == "a tool version":
        environment = ENVIRONMENT.replace("mypy==2.3.0", "mypy==2.4.0")
    else:
        monkeypatch.setattr(gate, "MYPY_CONFIG", gate.MYPY_CONFIG + "strict = True\n")
    return mypy_key(repo, tests, environment)


def test_mypy_findings_are_reused_while_nothing_changed(checkout: Path) -> None:
    store_findings("mypy", FINDINGS, *mypy_key(checkout, [TEST], ENVIRONMENT))
    assert load_findings("mypy", *mypy_key(checkout, [TEST], ENVIRONMENT)) == FINDINGS


@pytest.mark.parametrize(
    "change",
    ["a checked file", "the installed core", "the files checked", "the Python", "a tool version", "the configuration"],
)
def test_mypy_runs_again_when_an_input_changed(checkout: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    store_findings("mypy", FINDINGS, *mypy_key(checkout, [TEST], ENVIRONMENT))
    assert load_findings("mypy", *_mypy_key_after(change, checkout, monkeypatch)) is None


def _script(directory: Path, code: int) -> Path:
    script = directory / "bug.py"
    script.write_text(SCRIPT.format(code=code))
    return script


def test_a_reproduction_is_reused_named_for_the_base_and_variant_asking(checkout: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, 1)
    key = run_key(script, checkout, ENVIRONMENT)
    assert kept_run(script, "1.22.0", "unpatched", key) is None
    run = run_reproductions(sys.executable, [script], "1.22.0", "unpatched", tmp_path)[0]
    keep_run(run, key)
    assert kept_run(script, "1.22.0", "unpatched", key) == run
    again = kept_run(script, "1.23.0", "patched", key)
    assert again is not None
    assert (again.base, again.variant, again.exit_code, again.ok) == ("1.23.0", "patched", 1, False)


def _run_key_after(change: str, script: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """A reproduction's key once one input changed."""
    environment = ENVIRONMENT
    if change == "the script":
        _script(script.parent, 0)
    elif change == "the package":
        _change_core(repo)
    elif change == "the environment":
        environment = ENVIRONMENT.replace("pydantic==2.12.0", "pydantic==2.13.0")
    else:
        monkeypatch.setattr(repro, "RUNNER", script)
    return run_key(script, repo, environment)


@pytest.mark.parametrize("change", ["the script", "the package", "the environment", "the runner"])
def test_a_reproduction_runs_again_when_an_input_changed(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    script = _script(tmp_path, 1)
    keep_run(ReproRun("bug", "1.22.0", "unpatched", 1, "", "", "sha"), run_key(script, checkout, ENVIRONMENT))
    assert kept_run(script, "1.22.0", "unpatched", _run_key_after(change, script, checkout, monkeypatch)) is None


def test_a_run_that_timed_out_is_not_kept(checkout: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, 1)
    key = run_key(script, checkout, ENVIRONMENT)
    keep_run(ReproRun("bug", "1.22.0", "unpatched", None, "", "", "sha"), key)
    assert kept_run(script, "1.22.0", "unpatched", key) is None


def test_reproductions_run_at_once_come_back_in_script_order(tmp_path: Path) -> None:
    scripts: list[Path] = []
    for code in (1, 0, 1):
        directory = tmp_path / f"s{len(scripts)}"
        directory.mkdir()
        scripts.append(_script(directory, code))
    runs = run_reproductions(sys.executable, scripts, "1.22.0", "unpatched", tmp_path)
    assert [run.exit_code for run in runs] == [1, 0, 1]


class StandIn:
    """A nox session that records what it installs and logs."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = str(bin_dir)
        self.venv_backend = "uv"
        self.installs: list[tuple[str, ...]] = []
        self.logs: list[str] = []

    def install(self, *packages: str) -> None:
        self.installs.append(packages)

    def log(self, message: str) -> None:
        self.logs.append(message)


def _tool_run(asked: list[str], name: str, key: tuple[str, ...] | None, core: Path | None = None) -> ToolRun:
    """A run of a stand-in tool on a checkout ``name`` that records it ran and finds ``name`` once."""

    def find() -> Counter[str]:
        asked.append(name)
        return Counter({name: 1})

    return ToolRun("mypy", Path(name), key, core, find)


def test_findings_are_computed_only_for_the_checkouts_without_any(env: dict[str, str], tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    session = cast("nox.Session", stand_in)
    asked: list[str] = []
    first = kept_findings(session, [_tool_run(asked, "base", ("b",)), _tool_run(asked, "patched", ("p",))])
    assert list(first.values()) == [Counter({"base": 1}), Counter({"patched": 1})]
    runs = [_tool_run(asked, "base", ("b",)), _tool_run(asked, "patched", ("p2",)), _tool_run(asked, "ours", None)]
    again = kept_findings(session, runs)
    assert list(again.values()) == [Counter({"base": 1}), Counter({"patched": 1}), Counter({"ours": 1})]
    kept_findings(session, [_tool_run(asked, "ours", None)])  # a run without a key is never kept
    assert sorted(asked[:2]) == ["base", "patched"]  # side by side: in either order
    assert sorted(asked[2:4]) == ["ours", "patched"]
    assert asked[4:] == ["ours"]
    assert stand_in.logs == ["base: unchanged since mypy last checked it; reusing its 1 finding(s)"]


def test_the_runs_left_are_made_once_their_core_is_installed(env: dict[str, str], tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    session = cast("nox.Session", stand_in)
    one, two = make_framework_repo(tmp_path / "one"), make_framework_repo(tmp_path / "two")
    installs_when_run: dict[str, int] = {}

    def tool_run(name: str, core: Path | None) -> ToolRun:
        def find() -> Counter[str]:
            installs_when_run[name] = len(stand_in.installs)
            return Counter()

        return ToolRun("pyright", Path(name), (name,), core, find)

    kept_findings(session, [tool_run("a", one), tool_run("b", two), tool_run("c", one), tool_run("d", None)])
    cores = [[word for word in packages if word.startswith(str(tmp_path))] for packages in stand_in.installs]
    assert cores == [[str(one / CORE_PACKAGE)], [str(two / CORE_PACKAGE)]]  # once each, in the order first asked for
    assert installs_when_run == {"a": 1, "c": 1, "b": 2, "d": 2}


def test_the_core_is_installed_again_only_for_another_tree(checkout: Path, tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path / "bin")
    session = cast("nox.Session", stand_in)
    glue.install_core(session, checkout)
    glue.install_core(session, checkout)
    assert len(stand_in.installs) == 1
    _change_core(checkout)
    glue.install_core(session, checkout)
    assert len(stand_in.installs) == 2
    glue.install_core(cast("nox.Session", StandIn(tmp_path / "other-bin")), checkout)
    assert len(stand_in.installs) == 2


class SuiteFailed(Exception):
    """What a failed pytest run raises in the session (nox's CommandFailed) here."""


def test_a_test_run_is_kept_once_it_passed_until_a_file_of_the_repo_or_the_core_changes(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed run is not kept; a changed or new file of this repo, or another core tree, runs them all again."""
    repo, core = make_framework_repo(tmp_path / "repo"), make_framework_repo(tmp_path / "core")
    monkeypatch.setattr(kept, "REPO_ROOT", repo)

    def environment(_session: nox.Session) -> str:
        return ENVIRONMENT

    monkeypatch.setattr(kept, "environment", environment)
    session = cast("nox.Session", StandIn(tmp_path / "bin"))
    made: list[str] = []

    def suite_run(label: str, *, fails: bool = False) -> SuiteRun:
        def run() -> None:
            made.append(label)
            if fails:
                raise SuiteFailed(label)

        return SuiteRun(label, core, run)

    with pytest.raises(SuiteFailed):
        kept_passes(session, [suite_run("a"), suite_run("b", fails=True)])
    kept_passes(session, [suite_run("a"), suite_run("b")])
    kept_passes(session, [suite_run("a"), suite_run("b")])
    assert made == ["a", "b", "b"]
    (repo / "new_test.py").write_text("")  # untracked: still one of the inputs
    kept_passes(session, [suite_run("a")])
    write_lines(core, TEST, ["def test_b() -> None: ..."])
    commit_all(core, "Another core")
    kept_passes(session, [suite_run("a")])
    assert made == ["a", "b", "b", "a", "a"]
