"""``python -m scripts.validate.timing``: how long the default validation, ``python3 run.py``, takes cold and warm.

Cold is a fresh ``git clone`` of this repo's HEAD (so no ``.cache``, ``.nox`` or ``.venv-tools``; uv's own
download cache may still be warm); warm is a second run in that clone. Each run's time is split by nox
session. The numbers go to ``docs/data/validation-timing.json``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scripts.series.datafiles import write_data
from scripts.series.errors import entry_point
from scripts.series.git import git_output, run_git
from scripts.series.locations import REPO_ROOT

GOALS = {"warm": 60, "cold": 150}  # seconds, on a 2-core machine
SESSION_START = re.compile(r"^nox > Running session (\S+)")


@dataclass
class ValidationRun:
    """One timed ``python3 run.py``: its wall time, exit code, wall time per nox session and the load before it.

    ``load_before`` is the machine's 1-minute load average when the run starts: on a shared machine, anything
    above 0 is other work taking the cores the goals assume.
    """

    run: str
    goal_seconds: int
    load_before: float = 0.0
    seconds: float = 0.0
    exit_code: int = 0
    sessions: dict[str, float] = field(default_factory=dict[str, float])

    @property
    def meets_goal(self) -> bool:
        """Whether it succeeded within its goal."""
        return self.exit_code == 0 and self.seconds <= self.goal_seconds


def _timed_run(clone: Path, run: str) -> ValidationRun:
    """Run ``python3 run.py`` in ``clone``, echoing its output, and time it and each of its sessions."""
    result = ValidationRun(run, GOALS[run], round(os.getloadavg()[0], 2))
    env = {key: value for key, value in os.environ.items() if key != "RUNGUARD_CACHE"}
    command = [shutil.which("python3") or sys.executable, "run.py"]
    started = time.monotonic()
    current: tuple[str, float] | None = None
    with subprocess.Popen(
        command, cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None  # noqa: S101 (a pipe)
        for line in process.stdout:
            sys.stdout.write(line)
            match = SESSION_START.match(line)
            if match:
                now = time.monotonic()
                if current is not None:
                    result.sessions[current[0]] = round(now - current[1], 1)
                current = (match.group(1), now)
    ended = time.monotonic()
    if current is not None:
        result.sessions[current[0]] = round(ended - current[1], 1)
    result.seconds = round(ended - started, 1)
    result.exit_code = process.returncode
    return result


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Time a cold and a warm ``python3 run.py`` in a fresh clone under ``--scratch``; write the results."""
    parser = argparse.ArgumentParser(prog="nox -s timing --", description=__doc__)
    parser.add_argument("--scratch", type=Path, required=True, help="where the fresh clone is made")
    options = parser.parse_args(argv)
    # A caught SIGINT is reset to the default in the runs, as in a terminal; an ignored one would stay ignored
    # (a background job's), and the interrupt tests need Ctrl-C to work.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    clone = options.scratch / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    options.scratch.mkdir(parents=True, exist_ok=True)
    run_git("clone", "--quiet", str(REPO_ROOT), str(clone), cwd=options.scratch)
    runs = [_timed_run(clone, run) for run in ("cold", "warm")]
    summary = ", ".join(f"{run.run} {run.seconds:.0f} s (goal {run.goal_seconds} s)" for run in runs)
    body = {
        "summary": f"python3 run.py took {summary} on {os.cpu_count()} CPUs.",
        "rows": [{**asdict(run), "meets_goal": run.meets_goal} for run in runs],
        "clone": git_output("rev-parse", "HEAD", cwd=clone), "load_average_after": os.getloadavg(),
    }  # fmt: skip
    path = write_data("validation-timing", "python3 run.py -s timing", body)
    for run in runs:
        split = ", ".join(f"{session} {seconds:.0f} s" for session, seconds in run.sessions.items())
        verdict = "meets" if run.meets_goal else "MISSES"
        print(f"{run.run}: {run.seconds:.0f} s, exit {run.exit_code} ({split}): {verdict} the goal")
    print(f"results written to {path}")
    return 0 if all(run.exit_code == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
