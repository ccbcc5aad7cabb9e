"""run.py's main job: the default sessions, in two nox processes side by side."""

from __future__ import annotations

import json
import subprocess
import sys

from run import BESIDE, split_main_job
from scripts.series.locations import REPO_ROOT


def test_the_sessions_tagged_beside_run_in_the_second_process_and_each_group_keeps_the_listed_order() -> None:
    listed: list[dict[str, object]] = [
        {"session": "tests-3.11", "tags": []},
        {"session": "typecheck", "tags": [BESIDE]},
        {"session": "repro", "tags": ["data"]},
        {"session": "redgreen-3.11", "tags": ["data", BESIDE]},
    ]
    assert split_main_job(listed) == (["tests-3.11", "repro"], ["typecheck", "redgreen-3.11"])


def test_the_noxfile_runs_typecheck_and_redgreen_beside_the_other_default_sessions() -> None:
    """The two longest groups of checks, each bound by a tool of its own, split about evenly on two cores."""
    command = [sys.executable, "-m", "nox", "-f", str(REPO_ROOT / "noxfile.py"), "--list", "--json"]
    listed = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO_ROOT).stdout
    first, beside = split_main_job(json.loads(listed))
    kinds = [list(dict.fromkeys(name.split("-")[0] for name in group)) for group in (first, beside)]
    assert kinds == [["tests", "lint", "docs", "repro"], ["typecheck", "redgreen"]]  # one per Python of the matrix
