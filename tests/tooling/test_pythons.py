"""The Python matrix: interpreter discovery on stand-in interpreters, narrowing, CI's requirement, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from scripts.series.common import REPORTED_ELSEWHERE
from scripts.series.errors import RunguardError
from scripts.sessions import matrix
from scripts.sessions.matrix import check, default_sessions, requested_pythons
from scripts.sources.pythons import (
    ALL_PYTHONS,
    REQUIRED,
    Candidate,
    Discovery,
    Interpreter,
    all_pythons_asked,
    discover,
    link_directory,
    python_list,
    running_version,
)
from tests.tooling.helpers import REPO_ROOT


def fake_python(directory: Path, name: str, answer: str, code: int = 0) -> Path:
    """A stand-in interpreter that prints ``answer`` (like the probe would) and exits with ``code``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\necho '{answer}'\nexit {code}\n")
    path.chmod(0o755)
    return path


def test_a_broken_candidate_is_skipped_and_the_next_one_of_its_version_used(tmp_path: Path) -> None:
    shim = fake_python(tmp_path / "shims", "python3.12", "pyenv: python3.12: command not found", code=127)
    real = fake_python(tmp_path / "versions", "python3.12", "CPython 3.12.1")
    newest = fake_python(tmp_path / "uv", "python3", "CPython 3.14.0")
    found = discover(
        [Candidate(shim, "PATH", "3.12"), Candidate(real, "pyenv", "3.12"), Candidate(newest, "uv", "3.14")]
    )
    assert found.versions() == ["3.12", "3.14"]
    assert found.found["3.12"] == Interpreter("3.12.1", real.resolve(), "pyenv")
    assert found.skipped == [f"{shim} (PATH) is broken: exit 127"]


def test_only_cpython_3_10_and_newer_is_kept(tmp_path: Path) -> None:
    pypy = fake_python(tmp_path, "pypy", "PyPy 3.10.14")
    old = fake_python(tmp_path, "old", "CPython 3.9.18")
    gone = tmp_path / "python3.11"
    found = discover(
        [Candidate(pypy, "PATH", "3.10"), Candidate(old, "pyenv", "3.10"), Candidate(gone, "PATH", "3.11")]
    )
    assert found.versions() == []
    assert found.skipped == [
        f"{pypy} (PATH) is PyPy 3.10.14, not CPython 3.10 or newer",
        f"{gone} (PATH) does not run: FileNotFoundError",
        f"{old} (pyenv) is CPython 3.9.18, not CPython 3.10 or newer",
    ]


def test_the_running_interpreter_is_found_without_a_probe_of_other_candidates() -> None:
    found = discover()
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert running in found.versions()
    assert found.found[running].version == ".".join(map(str, sys.version_info[:3]))


@pytest.mark.parametrize(
    ("requested", "message"),
    [
        ("3.9", "unknown Python '3.9': give X.Y, 3.10 or newer (found: 3.12)"),
        ("three", "unknown Python 'three': give X.Y, 3.10 or newer (found: 3.12)"),
        ("", "unknown Python '': give X.Y, 3.10 or newer (found: 3.12)"),
        ("3.14", "Python 3.14 not found on PATH, by uv or under pyenv's versions"),
        ("3.13", "Python 3.13 not found on PATH, by uv or under pyenv's versions "
                 "(/shims/python3.13 (PATH) is broken: exit 127)"),
    ],
)  # fmt: skip
def test_an_unknown_missing_or_broken_python_is_one_line(requested: str, message: str) -> None:
    found = Discovery({"3.12": Interpreter("3.12.1", Path("/p/python3.12"), "pyenv")})
    found.skipped.append("/shims/python3.13 (PATH) is broken: exit 127")
    with pytest.raises(RunguardError) as raised:
        check(found, [requested], ci=False)
    assert str(raised.value) == message


def test_a_missing_python_is_reported_once_here_and_fails_ci() -> None:
    found = Discovery({minor: Interpreter(f"{minor}.0", Path(f"/p/{minor}"), "pyenv") for minor in ("3.11", "3.12")})
    assert check(found, None, ci=False) == [
        "runguard: Python 3.10 not found on PATH, by uv or under pyenv's versions: its sessions are skipped",
        "runguard: Python 3.13 not found on PATH, by uv or under pyenv's versions: its sessions are skipped",
    ]
    with pytest.raises(RunguardError, match=r"^CI needs every Python from 3.10 to 3.13: Python 3.10 not found"):
        check(found, None, ci=True)


def test_a_missing_python_is_not_reported_again_by_a_process_told_another_reports_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(matrix, "discover", lambda: _found("3.11", "3.12", "3.13"))
    monkeypatch.setattr(matrix, "in_ci", lambda: False)

    def link_nothing(_discovery: Discovery, _where: Path) -> Path:
        return tmp_path

    monkeypatch.setattr(matrix, "link_directory", link_nothing)
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))  # restored after the test
    monkeypatch.delenv(REPORTED_ELSEWHERE, raising=False)
    matrix.session_pythons(["nox"])
    assert "runguard: Python 3.10 not found" in capsys.readouterr().err
    monkeypatch.setenv(REPORTED_ELSEWHERE, "1")  # run.py's second process of the main job
    matrix.session_pythons(["nox"])
    assert capsys.readouterr().err == ""


def test_python_is_read_after_the_double_dash_only() -> None:
    assert requested_pythons(["nox", "-s", "tests", "--", "--base", "1.22.0", "--python", "3.12"]) == ["3.12"]
    assert requested_pythons(["nox", "--", "--python=3.10"]) == ["3.10"]
    assert requested_pythons(["nox", "-p", "3.12"]) is None
    assert requested_pythons(["nox", "--", "--python"]) == [""]


def test_python_takes_a_comma_list_and_repeats_and_each_is_checked() -> None:
    argv = ["nox", "-s", "bench", "--", "--python", "3.12,3.10", "--python=3.12", "--python", "3.11"]
    assert requested_pythons(argv) == ["3.12", "3.10", "3.11"]
    found = _found(*REQUIRED)
    assert check(found, ["3.12", "3.10"], ci=True) == []
    with pytest.raises(RunguardError, match=r"^unknown Python '3\.9': give X\.Y, 3\.10 or newer"):
        check(found, ["3.12", "3.9"], ci=False)
    with pytest.raises(RunguardError, match=r"^unknown Python '': give X\.Y"):
        check(found, requested_pythons(["nox", "--", "--python", "3.12,"]), ci=False)


def _found(*minors: str) -> Discovery:
    return Discovery({minor: Interpreter(f"{minor}.0", Path(f"/p/{minor}"), "pyenv") for minor in minors})


def test_a_run_measures_the_named_pythons_else_all_when_asked_else_the_running_one() -> None:
    found = _found("3.13", "3.10", running_version())
    assert [each.minor for each in found.chosen(python_list(["3.13,3.10", "3.13"]), every=True)] == ["3.13", "3.10"]
    assert [each.minor for each in found.chosen([], every=True)] == found.versions()
    assert [each.minor for each in found.chosen([], every=False)] == [running_version()]
    with pytest.raises(RunguardError, match=r"^Python 3\.12 not found"):
        _found("3.10").chosen(["3.10", "3.12"], every=False)


def test_every_python_is_asked_for_by_the_variable_unless_it_is_0(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, asked in (("1", True), ("0", False), ("", False)):
        monkeypatch.setenv(ALL_PYTHONS, value)
        assert all_pythons_asked() is asked
    monkeypatch.delenv(ALL_PYTHONS)
    assert not all_pythons_asked()


@dataclass
class Declared:
    python: object
    default: bool


def test_the_default_run_uses_the_running_python_unless_all_are_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    declared = {
        "tests": Declared(["3.10", "3.11"], True),
        "lint": Declared(None, True),
        "stress": Declared(["3.10", "3.11"], False),
    }
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    monkeypatch.delenv(ALL_PYTHONS, raising=False)
    assert default_sessions(declared) == [f"tests-{running}", "lint"]
    monkeypatch.setenv(ALL_PYTHONS, "1")
    assert default_sessions(declared) == ["tests", "lint"]


def test_links_point_at_the_chosen_interpreters_and_are_replaced(tmp_path: Path) -> None:
    first, second = fake_python(tmp_path, "a", "CPython 3.12.1"), fake_python(tmp_path, "b", "CPython 3.12.2")
    links = link_directory(Discovery({"3.12": Interpreter("3.12.1", first, "pyenv")}), tmp_path / "links")
    link_directory(Discovery({"3.12": Interpreter("3.12.2", second, "pyenv")}), links)
    assert (links / "python3.12").readlink() == second
    assert sorted(path.name for path in links.iterdir()) == ["python3.12"]


@pytest.mark.parametrize("python", ["3.9", "2.7.18"])
def test_nox_stops_at_an_unknown_python_with_one_line_and_writes_nothing(tmp_path: Path, python: str) -> None:
    nox = [sys.executable, "-m", "nox", "-f", str(REPO_ROOT / "noxfile.py"), "-s", "tests", "--", "--python", python]
    (tmp_path / "work").mkdir()
    env = {**os.environ, "RUNGUARD_CACHE": str(tmp_path / "cache")}
    result = subprocess.run(nox, capture_output=True, text=True, env=env, cwd=tmp_path / "work", check=False)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"runguard: error: unknown Python '{python}': give X.Y, 3.10 or newer "
        + (f"(found: {', '.join(discover().versions())})")
    ]
    assert result.stdout == ""
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["work"]
