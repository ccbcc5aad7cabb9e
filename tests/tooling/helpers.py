"""Synthetic agent-framework-like repos and patch series, and a runner for ``python -m scripts``."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER_FILE = "python/packages/core/agent_framework/_workflows/_runner.py"
RUNNER_LINES = [f"line {number}" for number in range(1, 31)]
TIMEOUT_SECONDS = 60


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; return its stripped output."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2001-01-01T00:00:00Z"}
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True, timeout=TIMEOUT_SECONDS
    )
    return result.stdout.strip()


def write_lines(repo: Path, relative: str, lines: list[str]) -> None:
    """Write ``lines`` to ``repo/relative``, creating directories."""
    path = repo / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def commit_all(repo: Path, message: str) -> str:
    """Commit every change in ``repo``; return the new commit id."""
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", message)
    return git(repo, "rev-parse", "HEAD")


def make_framework_repo(path: Path) -> Path:
    """A git repo laid out like microsoft/agent-framework, with one commit on ``main``."""
    git(path.parent, "init", "--quiet", "--initial-branch=main", str(path))
    write_lines(path, RUNNER_FILE, RUNNER_LINES)
    write_lines(path, "python/packages/core/agent_framework/__init__.py", ["# core"])
    commit_all(path, "Initial framework")
    return path


@dataclass
class SeriesBuilder:
    """Writes ``git format-patch`` mbox patches made from commits on a scratch clone of a framework repo."""

    source: Path
    patches: Path
    scratch: Path

    def add(
        self,
        slug: str,
        lines: list[str],
        trailers: str = "Upstream-Status: not forwarded",
        files: dict[str, list[str]] | None = None,
        body: str = "Why it changes.",
    ) -> Path:
        """Record a patch that sets ``RUNNER_FILE`` to ``lines`` (and writes ``files``), relative to the source HEAD."""
        if not self.scratch.exists():
            git(self.source.parent, "clone", "--quiet", str(self.source), str(self.scratch))
        for relative, content in {RUNNER_FILE: lines, **(files or {})}.items():
            write_lines(self.scratch, relative, content)
        git(self.scratch, "add", "--all")
        git(self.scratch, "commit", "--quiet", "--message", f"Python: {slug}\n\n{body}\n\n{trailers}")
        number = len(self.names()) + 1
        name = f"{number:04d}-{slug}.patch"
        (self.patches / name).write_text(git(self.scratch, "format-patch", "-1", "--stdout", "HEAD") + "\n")
        with (self.patches / "series").open("a") as series:
            series.write(name + "\n")
        return self.patches / name

    def names(self) -> list[str]:
        """The patch names listed in the series so far."""
        lines = (self.patches / "series").read_text().splitlines()
        return [line for line in lines if line and not line.startswith("#")]


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``python -m scripts`` from this repo with ``env`` added, to completion."""
    return run_module("scripts", *args, env=env)


def run_module(module: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``python -m MODULE`` from this repo with ``env`` added, to completion."""
    with start_cli(*args, env=env, module=module) as process:
        stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def start_cli(*args: str, env: dict[str, str], module: str = "scripts") -> subprocess.Popen[str]:
    """Start ``python -m scripts`` (or another module) from this repo with ``env`` added, its output captured."""
    # A child inherits an ignored SIGINT (pytest run as a background job) but not a handler: give the CLI
    # the SIGINT a user at a terminal has, which the interrupt tests send it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def make_lived_in(repo: Path) -> None:
    """Give a checkout what a user's has: a stash, staged and unstaged changes and untracked files."""
    write_lines(repo, "notes.txt", ["mine"])
    git(repo, "stash", "push", "--include-untracked", "--quiet")
    write_lines(repo, "python/packages/core/agent_framework/__init__.py", ["# edited, staged"])
    git(repo, "add", "python/packages/core/agent_framework/__init__.py")
    write_lines(repo, RUNNER_FILE, ["unstaged edit", *RUNNER_LINES[1:]])
    write_lines(repo, "untracked/scratch.py", ["print('mine')"])


def checkout_state(repo: Path) -> dict[str, object]:
    """Everything a user would notice: status, HEAD, branches, stash, worktrees, index and file hashes."""
    files = {
        str(path.relative_to(repo)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(repo.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(repo).parts
    }
    return {
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "head": git(repo, "rev-parse", "HEAD"),
        "symbolic": subprocess.run(
            ["git", "symbolic-ref", "-q", "HEAD"], cwd=repo, capture_output=True, text=True, check=False
        ).stdout,
        "branches": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "stash": git(repo, "stash", "list"),
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
        "index": git(repo, "ls-files", "--stage"),
        "files": files,
    }
