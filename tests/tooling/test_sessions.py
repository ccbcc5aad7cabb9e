"""The nox sessions' glue: the error boundary and the one pytest helper, on a stand-in for a nox session."""

from __future__ import annotations

import logging
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import nox
import pytest

from scripts.series import datafiles
from scripts.series.common import TERMINAL_COLUMNS, venv_python
from scripts.series.datafiles import write_data
from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.series.locations import RECORD_ENV, REPO_ROOT, recording, results_dir
from scripts.sessions import glue
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder
from tests.tooling.index_server import Index, serve_index

JUNIT = '<testsuites><testsuite><testcase classname="tests.test_a" name="test_b"/></testsuite></testsuites>'

# A venv's pytest that writes JUNIT as its report, says where and how it ran, and exits with $EXIT.
FAKE_PYTEST = """#!{python}
import os, sys
junit = next(arg.removeprefix("--junitxml=") for arg in sys.argv if arg.startswith("--junitxml="))
open(junit, "w").write({report!r})
print("ran in", os.getcwd(), "with", os.environ["VIRTUAL_ENV"], "bytecode", os.environ["PYTHONDONTWRITEBYTECODE"])
sys.exit(int(os.environ.get("EXIT", "0")))
"""


class SessionFailed(Exception):
    """What ``session.error`` raises in nox, here with the message kept."""


class SessionSkipped(Exception):
    """What ``session.skip`` raises in nox, here with the message kept."""


class StandIn:
    """Records what a session function asks nox to do; ``run`` writes ``report`` as pytest's junit report."""

    def __init__(self, tmp: Path, report: str | None) -> None:
        self.tmp = tmp
        self.report = report
        self.commands: list[tuple[str, ...]] = []
        self.places: list[Path] = []
        self.env: dict[str, str | None] = {"TMPDIR": str(tmp)}
        self.logged: list[str] = []
        self.name = "stand-in"
        self.posargs: list[str] = []

    def create_tmp(self) -> str:
        return str(self.tmp)

    def log(self, message: str) -> None:
        self.logged.append(message)

    def error(self, message: str) -> None:
        raise SessionFailed(message)

    def skip(self, message: str) -> None:
        raise SessionSkipped(message)

    @contextmanager
    def chdir(self, place: Path) -> Generator[None, None, None]:
        self.places.append(place)
        yield

    def run(self, *command: str, **options: Any) -> None:
        self.commands.append(command)
        junit = next(arg.removeprefix("--junitxml=") for arg in command if arg.startswith("--junitxml="))
        if self.report is not None:
            Path(junit).write_text(self.report)


def _session(stand_in: StandIn) -> nox.Session:
    return cast("nox.Session", stand_in)


def test_a_runguard_error_fails_the_session_with_one_line(tmp_path: Path) -> None:
    @glue.reported
    def failing(session: nox.Session) -> None:
        raise RunguardError("the series is broken")

    with pytest.raises(SessionFailed, match=r"^runguard: error: the series is broken$"):
        failing(_session(StandIn(tmp_path, None)))


def test_bad_arguments_fail_one_session_and_skip_the_next_ones_given_them(tmp_path: Path) -> None:
    @glue.reported
    def cell(session: nox.Session) -> None:
        glue.options(session)

    stand_in = StandIn(tmp_path, None)
    stand_in.name, stand_in.posargs = "wheel-3.10", ["--bogus-flag-for-this-test"]
    with pytest.raises(SessionFailed, match=r"^runguard: error: unrecognized arguments: --bogus-flag-for-this-test$"):
        cell(_session(stand_in))
    with pytest.raises(SessionSkipped, match="its arguments failed the session above"):
        cell(_session(stand_in))


def test_pytest_returns_the_report_and_runs_where_asked(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path, JUNIT)
    cases = glue.run_pytest(_session(stand_in), "label", "tests", cwd=tmp_path / "root")
    assert list(cases) == ["tests.test_a::test_b"]
    assert stand_in.places == [tmp_path / "root"]
    assert stand_in.commands[0][:3] == ("pytest", "-p", "no:cacheprovider")


def test_pytest_that_collects_nothing_fails_unless_told_otherwise(tmp_path: Path) -> None:
    with pytest.raises(SessionFailed, match="label: pytest found no test in tests/none"):
        glue.run_pytest(_session(StandIn(tmp_path, None)), "label", "tests/none")
    assert glue.run_pytest(_session(StandIn(tmp_path, None)), "label", "tests/none", must_pass=False) == {}


def _fake_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    pytest_program = venv_python(venv).parent / "pytest"
    pytest_program.parent.mkdir(parents=True)
    pytest_program.write_text(FAKE_PYTEST.format(python=sys.executable, report=JUNIT))
    pytest_program.chmod(0o755)
    return venv


def test_pytest_of_another_venv_runs_where_asked_and_leaves_our_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in, root, here = StandIn(tmp_path, None), tmp_path / "root", Path.cwd()
    root.mkdir()
    cases = glue.run_pytest(_session(stand_in), "label", "tests", cwd=root, venv=_fake_venv(tmp_path))
    assert list(cases) == ["tests.test_a::test_b"]
    assert (Path.cwd(), stand_in.places, stand_in.commands) == (here, [], [])  # no chdir, no session.run
    assert capsys.readouterr().out == f"ran in {root} with {tmp_path / 'venv'} bytecode 1\n"
    assert stand_in.logged[0].startswith(f"pytest -p no:cacheprovider --junitxml={tmp_path / 'label.xml'} tests")


def test_pytest_of_another_venv_that_fails_fails_the_session_unless_told_otherwise(tmp_path: Path) -> None:
    stand_in, venv, failing = StandIn(tmp_path, None), _fake_venv(tmp_path), {"EXIT": "1"}
    with pytest.raises(SessionFailed, match=r"^pytest .* exited 1$"):
        glue.run_pytest(_session(stand_in), "label", "tests", cwd=tmp_path, env=failing, venv=venv)
    cases = glue.run_pytest(_session(stand_in), "label", "tests", cwd=tmp_path, env=failing, venv=venv, must_pass=False)
    assert list(cases) == ["tests.test_a::test_b"]
    with pytest.raises(SessionFailed, match=f"^{tmp_path / 'root'} has no pytest$"):
        glue.run_pytest(_session(stand_in), "label", "tests", venv=tmp_path / "root")


def test_a_silent_command_of_another_venv_is_shown_only_when_it_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in, venv = StandIn(tmp_path, None), _fake_venv(tmp_path)
    junit = f"--junitxml={tmp_path / 'report.xml'}"
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    output = glue.run_in_venv(_session(stand_in), venv, "pytest", junit, cwd=tmp_path, env=env, silent=True)
    assert output == f"ran in {tmp_path} with {venv} bytecode 1\n"
    assert capsys.readouterr().out == ""
    assert stand_in.logged == [], "nor is the command"
    with pytest.raises(SessionFailed, match="exited 3"):
        glue.run_in_venv(_session(stand_in), venv, "pytest", junit, cwd=tmp_path, env={**env, "EXIT": "3"}, silent=True)
    assert capsys.readouterr().out == output
    assert [line.split("  ")[0] for line in stand_in.logged] == [f"pytest {junit}"]


@pytest.mark.parametrize(
    ("argv", "records"),
    [
        (["nox"], False),
        (["nox", "-s", "redgreen-3.11"], False),
        (["nox", "-t", "data"], True),
        (["nox", "--tags", "ship", "data"], True),
        (["nox", "-s", "repro", "--", "--record"], True),
        (["nox", "-s", "repro", "--", "--base", "1.0.0"], False),
    ],
)
def test_the_sessions_record_only_when_asked(
    argv: list[str], records: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RECORD_ENV, "0")  # restored to how it was after the test, as command_line sets it
    monkeypatch.delenv("RUNGUARD_DATA", raising=False)
    monkeypatch.setenv("RUNGUARD_CACHE", str(tmp_path / "cache"))

    def cached_sdist(version: str) -> Path:
        return tmp_path / f"{version}.tar.gz"

    monkeypatch.setattr(glue, "fetch_sdist", cached_sdist)
    glue.command_line(argv)
    assert recording() is records
    assert results_dir() == (REPO_ROOT / "docs" / "data" if records else tmp_path / "cache" / "results")
    if not records:
        written = write_data("example", "python3 run.py -s example", {"rows": []})
        assert written == tmp_path / "cache" / "results" / "example.json"


def test_data_files_go_where_runguard_data_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECORD_ENV, "0")
    monkeypatch.setenv("RUNGUARD_DATA", str(tmp_path / "data"))
    assert write_data("example", "python3 run.py -s example", {"rows": []}) == tmp_path / "data" / "example.json"


def test_a_base_without_an_sdist_is_one_error_before_any_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RUNGUARD_CACHE", str(tmp_path / "cache"))
    with serve_index(Index(["1.0.0"])) as index:
        monkeypatch.setenv("RUNGUARD_INDEX_URL", f"{index.url}/simple")
        with pytest.raises(SystemExit):
            glue.command_line(["nox", "-s", "wheel", "--", "--base", "9.9.9"])
    error = capsys.readouterr().err
    assert error.startswith("runguard: error: agent-framework-core 9.9.9 is not on PyPI")
    assert error.count("\n") == 1
    assert not list(tmp_path.rglob("*.tar.gz"))


def test_a_corrupt_patch_is_one_error_naming_it_before_any_session(
    series: SeriesBuilder, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    patch = series.add("fix", ["changed", *RUNNER_LINES[1:]])
    patch.write_text(patch.read_text().replace("\n@@ ", "\n@@ broken\n@@ ", 1))
    with pytest.raises(SystemExit):
        glue.command_line(["nox"])
    error = capsys.readouterr().err
    assert error.startswith(f"runguard: error: {patch}: git cannot read it as a patch: ")
    assert error.count("\n") == 1


def test_nox_log_lines_keep_within_the_terminal_width() -> None:
    command = f"pytest --junitxml={REPO_ROOT}/.nox/tests/tmp/{'x' * 150}.xml tests/tooling"
    record = logging.LogRecord("nox", logging.INFO, __file__, 1, "%s", (command,), None)
    assert glue.ShortLines().filter(record)
    shown = f"nox > {record.getMessage()}"
    assert len(shown) <= TERMINAL_COLUMNS
    assert shown.startswith("nox > pytest --junitxml=.nox/tests/tmp/xxx")
    assert shown.endswith("xxx.xml tests/tooling")
    failed = logging.LogRecord(
        "nox", logging.ERROR, __file__, 1, "Command %s failed with exit code 3", (command,), None
    )
    assert glue.ShortLines().filter(failed)
    assert failed.getMessage() == f"Command {command} failed with exit code 3", "an error is left whole"
    short = logging.LogRecord("nox", logging.INFO, __file__, 1, "Running session %s", ("lint",), None)
    assert glue.ShortLines().filter(short)
    assert short.getMessage() == "Running session lint"


def test_a_recorded_data_file_does_not_mark_the_commit_that_made_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that records on several Pythons writes docs/data as it goes: the later stamps name the same commit."""
    repo = tmp_path / "repo"
    (repo / "docs" / "data").mkdir(parents=True)
    (repo / "docs" / "data" / "stress.json").write_text("{}\n")
    (repo / "noxfile.py").write_text("")
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        run_git(*command, cwd=repo)
    monkeypatch.setattr(datafiles, "REPO_ROOT", repo)
    head = run_git("rev-parse", "--short=12", "HEAD", cwd=repo).stdout.strip()
    (repo / "docs" / "data" / "stress.json").write_text('{"rows": []}\n')
    assert datafiles.produced_stamp("x")["runguard"] == head
    (repo / "noxfile.py").write_text("# edited\n")
    assert datafiles.produced_stamp("x")["runguard"] == f"{head}+changes"
