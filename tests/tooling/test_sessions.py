"""The nox sessions' glue: the error boundary and the one pytest helper, on a stand-in for a nox session."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import nox
import pytest

from scripts.series.errors import RunguardError
from scripts.sessions import glue

JUNIT = '<testsuites><testsuite><testcase classname="tests.test_a" name="test_b"/></testsuite></testsuites>'


class SessionFailed(Exception):
    """What ``session.error`` raises in nox, here with the message kept."""


class StandIn:
    """Records what a session function asks nox to do; ``run`` writes ``report`` as pytest's junit report."""

    def __init__(self, tmp: Path, report: str | None) -> None:
        self.tmp = tmp
        self.report = report
        self.commands: list[tuple[str, ...]] = []
        self.places: list[Path] = []

    def create_tmp(self) -> str:
        return str(self.tmp)

    def error(self, message: str) -> None:
        raise SessionFailed(message)

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


def test_pytest_returns_the_report_and_runs_where_asked(tmp_path: Path) -> None:
    stand_in = StandIn(tmp_path, JUNIT)
    cases = glue.run_pytest(_session(stand_in), "label", "tests", cwd=tmp_path / "root", python="/venv/python")
    assert list(cases) == ["tests.test_a::test_b"]
    assert stand_in.places == [tmp_path / "root"]
    assert stand_in.commands[0][:5] == ("/venv/python", "-m", "pytest", "-p", "no:cacheprovider")


def test_pytest_that_collects_nothing_fails_unless_told_otherwise(tmp_path: Path) -> None:
    with pytest.raises(SessionFailed, match="label: pytest found no test in tests/none"):
        glue.run_pytest(_session(StandIn(tmp_path, None)), "label", "tests/none")
    assert glue.run_pytest(_session(StandIn(tmp_path, None)), "label", "tests/none", must_pass=False) == {}
