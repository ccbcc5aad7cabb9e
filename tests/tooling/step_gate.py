"""A fake ``git`` that holds the tooling right after one named git step, so a test can act at exactly that point.

The fake runs the real git, then, at the chosen occurrence of the step, connects to the test's loopback socket and
waits until the test closes the connection (the step then returns normally) or the tooling kills it (after a
signal). Every other git call passes straight through. Nothing in the tooling knows about it: only PATH changes.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.tooling.helpers import TIMEOUT_SECONDS

# Calls that cannot be the step go straight to git; the others run through the Python gate below.
FAKE_GIT = """#!/bin/sh
case " $* " in
  *" $STEP_GATE_STEP "*) exec "{python}" "{gate}" "$@" ;;
  *) exec "$STEP_GATE_REAL_GIT" "$@" ;;
esac
"""
GATE = """
import os, socket, subprocess, sys

args = sys.argv[1:]
while args[:1] == ["-c"]:
    args = args[2:]
step = os.environ["STEP_GATE_STEP"].split()
code = subprocess.run([os.environ["STEP_GATE_REAL_GIT"], *sys.argv[1:]]).returncode
if args[: len(step)] == step:
    with open(os.environ["STEP_GATE_COUNT"], "a+") as count:
        count.write("x")
        count.seek(0)
        occurrence = len(count.read())
    if occurrence == int(os.environ["STEP_GATE_OCCURRENCE"]):
        with socket.create_connection(("127.0.0.1", int(os.environ["STEP_GATE_PORT"]))) as gate:
            gate.recv(1)
sys.exit(code)
"""


@dataclass
class Gate:
    """The listening side: ``env`` makes a tooling process stop at the step; ``wait`` returns once it has."""

    env: dict[str, str]
    server: socket.socket
    held: socket.socket | None = None

    def wait(self) -> None:
        """Block (bounded) until the tooling has run the step and is held there."""
        self.held, _ = self.server.accept()

    def release(self) -> None:
        """Let the held step return, so the tooling carries on."""
        if self.held is not None:
            self.held.close()


@contextmanager
def step_gate(directory: Path, step: str, occurrence: int = 1) -> Generator[Gate, None, None]:
    """A gate at the ``occurrence``-th git call whose subcommand starts with ``step`` (e.g. ``"worktree add"``)."""
    real_git = shutil.which("git")
    assert real_git is not None
    directory.mkdir()
    (directory / "gate.py").write_text(GATE)
    fake = directory / "git"
    fake.write_text(FAKE_GIT.format(python=sys.executable, gate=directory / "gate.py"))
    fake.chmod(0o755)
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(TIMEOUT_SECONDS)
        env = {
            "PATH": f"{directory}{os.pathsep}{os.environ['PATH']}",
            "STEP_GATE_REAL_GIT": real_git,
            "STEP_GATE_STEP": step,
            "STEP_GATE_OCCURRENCE": str(occurrence),
            "STEP_GATE_COUNT": str(directory / "count"),
            "STEP_GATE_PORT": str(server.getsockname()[1]),
        }
        gate = Gate(env, server)
        try:
            yield gate
        finally:
            gate.release()
