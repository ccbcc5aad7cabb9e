"""Run git with settings that never touch a user's hooks, editor or identity."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from scripts.series.errors import RunguardError

IDENTITY = {
    "GIT_AUTHOR_NAME": "runguard",
    "GIT_AUTHOR_EMAIL": "runguard@localhost",
    "GIT_COMMITTER_NAME": "runguard",
    "GIT_COMMITTER_EMAIL": "runguard@localhost",
}
# Hooks could write into the user's checkout and auto-gc could repack it: neither may run. Signing needs keys.
SAFE_CONFIG = tuple(
    arg
    for setting in ("core.hooksPath=/dev/null", "gc.auto=0", "maintenance.auto=false", "commit.gpgSign=false")
    for arg in ("-c", setting)
)


def run_git(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``git args`` in ``cwd``; raise a one-line RunguardError when ``check`` and git fails."""
    full_env = {**os.environ, **IDENTITY, "GIT_EDITOR": "true", "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    result = subprocess.run(
        ["git", *SAFE_CONFIG, *args],
        cwd=cwd,
        input=stdin,
        env=full_env,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()
        reason = detail[-1] if detail else f"exit code {result.returncode}"
        raise RunguardError(f"git {args[0]} failed in {cwd}: {reason}")
    return result


def git_output(*args: str, cwd: Path, stdin: str | None = None) -> str:
    """Return the stripped standard output of a git command that must succeed."""
    return run_git(*args, cwd=cwd, stdin=stdin).stdout.strip()
