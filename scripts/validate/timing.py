"""``python -m scripts.validate.timing``: how long the default validation, ``python3 run.py``, takes cold and warm.

Cold is a fresh ``git clone`` of this repo's HEAD (so no ``.cache``, ``.nox`` or ``.venv-tools``) with empty
download caches, as on a new machine: uv's, pip's and npm's point at new directories under the scratch directory.
Warm is a second run in that clone, with those caches as the first run left them. Each run's time is split by nox
session (from the JSON reports of nox that run.py writes where ``RUNGUARD_NOX_REPORTS`` says); after both, the
clone must be as checked out (``git status --porcelain`` empty), and the disk each directory the runs made takes is
recorded. The numbers go to ``docs/data/validation-timing.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scripts.series.common import NOX_REPORTS
from scripts.series.datafiles import write_data, written
from scripts.series.errors import ArgumentParser, entry_point, error_line
from scripts.series.git import git_output, run_git
from scripts.series.locations import RECORD_ENV, REPO_ROOT
from scripts.validate.goals import VALIDATION_SECONDS

# The variables of this process that the runs in the clone do not inherit: they would move its cache or its data.
NOT_INHERITED = ("RUNGUARD_CACHE", "RUNGUARD_DATA", RECORD_ENV)
# Download caches, each pointed at an empty directory so that the cold run starts as on a new machine.
DOWNLOAD_CACHES = {"UV_CACHE_DIR": "uv-cache", "PIP_CACHE_DIR": "pip-cache", "npm_config_cache": "npm-cache"}
# What the runs leave behind, measured after them: in the clone and in the download caches.
MADE = (".venv-tools", ".nox", ".cache", *DOWNLOAD_CACHES.values())


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


def session_seconds(reports: Path) -> dict[str, float]:
    """Each session's duration, from the nox reports the run wrote into ``reports`` (see ``NOX_REPORTS``)."""
    seconds: dict[str, float] = {}
    for report in sorted(reports.glob("*.json")):
        for session in json.loads(report.read_text())["sessions"]:
            name = (session.get("signatures") or [session["name"]])[0]  # "tests-3.11", as `nox -l` lists it
            seconds[str(name)] = round(float(session["duration"]), 1)
    return seconds


def _timed_run(clone: Path, run: str, caches: dict[str, str]) -> ValidationRun:
    """Run ``python3 run.py`` in ``clone``, echoing its output, and time it and each of its sessions."""
    result = ValidationRun(run, VALIDATION_SECONDS[run], round(os.getloadavg()[0], 2))
    reports = clone.parent / f"nox-reports-{run}"
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in NOT_INHERITED} | caches
    env[NOX_REPORTS] = str(reports)
    command = [shutil.which("python3") or sys.executable, "run.py"]
    started = time.monotonic()
    process = subprocess.run(command, cwd=clone, env=env, check=False)  # its output goes to this one's
    result.seconds = round(time.monotonic() - started, 1)
    result.exit_code = process.returncode
    result.sessions = session_seconds(reports)
    return result


@entry_point
def main(argv: list[str] | None = None) -> int:
    """Time a cold and a warm ``python3 run.py`` in a fresh clone under ``--scratch``; write the results."""
    parser = ArgumentParser(prog="nox -s timing --", description=__doc__)
    parser.add_argument("--scratch", type=Path, required=True, help="where the fresh clone is made")
    options = parser.parse_args(argv)
    # A caught SIGINT is reset to the default in the runs, as in a terminal; an ignored one would stay ignored
    # (a background job's), and the interrupt tests need Ctrl-C to work.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    clone = options.scratch / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    options.scratch.mkdir(parents=True, exist_ok=True)
    caches = {variable: str(options.scratch / name) for variable, name in DOWNLOAD_CACHES.items()}
    for directory in caches.values():
        shutil.rmtree(directory, ignore_errors=True)
    run_git("clone", "--quiet", str(REPO_ROOT), str(clone), cwd=options.scratch)
    runs = [_timed_run(clone, run, caches) for run in ("cold", "warm")]
    changed = git_output("status", "--porcelain", cwd=clone)
    disk = disk_use({name: clone / name if name.startswith(".") else options.scratch / name for name in MADE})
    summary = ", ".join(f"{run.run} {run.seconds:.0f} s (goal {run.goal_seconds} s)" for run in runs)
    body = {
        "summary": f"python3 run.py took {summary} on {os.cpu_count()} CPUs, download caches empty at first.",
        "rows": [{**asdict(run), "meets_goal": run.meets_goal} for run in runs],
        "clone": git_output("rev-parse", "HEAD", cwd=clone), "load_average_after": os.getloadavg(),
        "changed_files": changed.splitlines(), "disk_megabytes": disk,
    }  # fmt: skip
    path = write_data("validation-timing", "python3 run.py -s timing", body)
    for run in runs:
        split = ", ".join(f"{session} {seconds:.0f} s" for session, seconds in run.sessions.items())
        verdict = "meets" if run.meets_goal else "MISSES"
        print(f"{run.run}: {run.seconds:.0f} s, exit {run.exit_code}: {verdict} the goal ({split})")
    print("disk: " + ", ".join(f"{name} {megabytes} MB" for name, megabytes in disk.items()))
    print(f"results written to {written(path)}")
    if changed:
        print(error_line(f"the runs changed the clone's tracked files: {' '.join(changed.split())}"), file=sys.stderr)
    return 0 if all(run.exit_code == 0 for run in runs) and not changed else 1


def disk_use(directories: dict[str, Path]) -> dict[str, int]:
    """The disk, in MB, that the files under each directory take, and ``total``: every file once.

    uv links what it installs from its cache, so a file may be in a venv and in the cache: it counts in both
    directories but once in the total. A directory that does not exist takes 0.
    """
    seen: set[tuple[int, int]] = set()
    sizes: dict[str, int] = {}
    total = 0
    for name, directory in directories.items():
        size = 0
        for path in directory.rglob("*"):
            if path.is_symlink() or not path.is_file():
                continue
            status = path.stat()
            size += status.st_blocks * 512
            if (status.st_dev, status.st_ino) not in seen:
                seen.add((status.st_dev, status.st_ino))
                total += status.st_blocks * 512
        sizes[name] = round(size / 1e6)
    return {**sizes, "total": round(total / 1e6)}


if __name__ == "__main__":
    sys.exit(main())
