#!/usr/bin/env python3
"""Bootstrap: create ``.venv-tools`` with the pinned nox and uv from ``pins.txt``, then run nox with the given args.

Usage: ``python3 run.py`` (validate the series on every base, on this Python), ``python3 run.py --all-pythons``
(the same on every CPython 3.10+ found) or ``python3 run.py -s tests`` (the test suite). Needs only Python >= 3.10
and git.

The main job (no arguments but ``--all-pythons``) runs the default sessions in two nox processes side by side: those
tagged ``beside`` in the noxfile (typecheck, redgreen) in the second, whose output follows the first's. Much of each
session waits on one core (installs, interpreter start-ups, single-threaded tools), so on two cores the pair takes
about as long as the longer group rather than the sum.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from scripts.series.common import NOX_REPORTS, REPORTED_ELSEWHERE, sha256_of, venv_python  # stdlib only

BESIDE = "beside"  # the noxfile's tag of the default sessions the main job runs in its second process

ROOT = Path(__file__).resolve().parent
TOOLS = ROOT / ".venv-tools"
PINS = ROOT / "pins.txt"
STAMP = TOOLS / "pins.sha256"


def tools_python() -> Path:
    """The interpreter of the tools venv."""
    return venv_python(TOOLS)


def ensure_tools() -> None:
    """(Re)create the tools venv when it is missing or ``pins.txt`` changed since it was made."""
    wanted = sha256_of(PINS)
    if tools_python().exists() and STAMP.is_file() and STAMP.read_text() == wanted:
        return
    print("run.py: installing the pinned nox and uv into .venv-tools", file=sys.stderr)
    venv.EnvBuilder(clear=True, with_pip=True).create(TOOLS)
    pip = [str(tools_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "nox", "uv", "-c", str(PINS)], check=True)
    STAMP.write_text(wanted)


def split_main_job(listed: list[dict[str, object]]) -> tuple[list[str], list[str]]:
    """The default sessions ``nox --list --json`` gave, in its order: (those run first, those run beside them)."""
    first: list[str] = []
    beside: list[str] = []
    for entry in listed:
        tags = entry.get("tags")
        (beside if isinstance(tags, list) and BESIDE in tags else first).append(str(entry["session"]))
    return first, beside


def run_main_job(nox: list[str]) -> int:
    """The default sessions in two nox processes side by side; the second's output is printed once the first ends.

    Exits with the first non-zero status of the two. Ctrl-C reaches both (they share the terminal's process group).
    With ``RUNGUARD_NOX_REPORTS`` set to a directory, each process writes nox's JSON report there (``first.json``,
    ``beside.json``): each session's duration, which the two interleaved outputs cannot give.
    """
    listed = subprocess.run([*nox, "--list", "--json"], check=True, capture_output=True, text=True).stdout
    first, beside = split_main_job(json.loads(listed))
    if not first or not beside:
        return subprocess.run(nox, check=False).returncode
    reports = os.environ.get(NOX_REPORTS)

    def command(group: str, sessions: list[str]) -> list[str]:
        report = ["--report", str(Path(reports) / f"{group}.json")] if reports else []
        return [*nox, *report, "-s", *sessions]

    with tempfile.TemporaryFile("w+") as output:
        environment = {**os.environ, REPORTED_ELSEWHERE: "1"}  # the first process prints the one-time reports
        second = subprocess.Popen(command("beside", beside), stdout=output, stderr=subprocess.STDOUT, env=environment)
        try:
            codes = [subprocess.run(command("first", first), check=False).returncode, second.wait()]
        except KeyboardInterrupt:
            second.wait()
            return 130
        output.seek(0)
        sys.stdout.write(output.read())
    return next((code for code in codes if code), 0)


def main() -> int:
    """Run nox from the tools venv, passing all arguments through but ``--all-pythons`` (before any ``--``)."""
    ensure_tools()
    os.chdir(ROOT)
    arguments = sys.argv[1:]
    ours = arguments[: arguments.index("--")] if "--" in arguments else arguments
    if "--all-pythons" in ours:  # the noxfile's default sessions then run on every Python (scripts.sessions.matrix)
        arguments.remove("--all-pythons")
        os.environ["RUNGUARD_ALL_PYTHONS"] = "1"
    command = [str(tools_python()), "-m", "nox", *arguments]
    if not arguments:
        return run_main_job(command)
    if os.name != "nt":
        os.execv(command[0], command)  # noqa: S606 (nox replaces this process, so Ctrl-C reaches it directly)
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
