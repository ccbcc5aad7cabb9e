#!/usr/bin/env python3
"""Bootstrap: create ``.venv-tools`` with the pinned nox and uv from ``pins.txt``, then run nox with the given args.

Usage: ``python3 run.py`` (validate the series on every base, on this Python), ``python3 run.py --all-pythons``
(the same on every CPython 3.10+ found) or ``python3 run.py -s tests`` (the test suite). Needs only Python >= 3.10
and git.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

from scripts.series.common import sha256_of, venv_python  # standard library only, like this file

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
    if os.name != "nt":
        os.execv(command[0], command)  # noqa: S606 (nox replaces this process, so Ctrl-C reaches it directly)
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
