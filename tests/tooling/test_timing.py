"""The validation timing's disk accounting: each directory's files, and a total that counts a linked file once."""

from __future__ import annotations

import json
import os
from pathlib import Path

from scripts.validate.timing import disk_use, session_seconds
from tests.tooling.helpers import run_module


def test_a_file_linked_into_two_directories_counts_once_in_the_total(tmp_path: Path) -> None:
    cache, venv = tmp_path / "uv-cache", tmp_path / ".nox"
    cache.mkdir()
    venv.mkdir()
    (cache / "wheel.bin").write_bytes(os.urandom(3_000_000))
    os.link(cache / "wheel.bin", venv / "installed.bin")
    (venv / "own.bin").write_bytes(os.urandom(1_000_000))
    used = disk_use({"uv-cache": cache, ".nox": venv, "absent": tmp_path / "absent"})
    assert used["uv-cache"] == 3
    assert used[".nox"] == 4
    assert used["absent"] == 0
    assert used["total"] == 4


def test_the_module_runs_as_a_command(env: dict[str, str]) -> None:
    result = run_module("scripts.validate.timing", "--bogus", env=env)
    assert (result.returncode, result.stderr) == (
        1,
        "runguard: error: unrecognized arguments: --bogus\n",
    )


def test_each_session_s_time_comes_from_the_nox_reports_of_both_processes(tmp_path: Path) -> None:
    """The main job's two nox processes interleave: their reports, not their output, give each session's time."""
    tests = {"name": "tests", "signatures": ["tests-3.11"], "duration": 53.71}
    (tmp_path / "first.json").write_text(json.dumps({"sessions": [tests]}))
    (tmp_path / "beside.json").write_text(json.dumps({"sessions": [{"name": "typecheck", "duration": 64.04}]}))
    assert session_seconds(tmp_path) == {"typecheck": 64.0, "tests-3.11": 53.7}
