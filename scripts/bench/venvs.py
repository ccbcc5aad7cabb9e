"""The two framework venvs a benchmark compares: the base's core package and the patched copy's, same deps."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scripts.series.common import uv_program, venv_python
from scripts.series.errors import RunguardError
from scripts.series.git import git_output
from scripts.series.locations import CORE_PACKAGE

PACKAGE = "agent-framework-core"
READY = "ready"


@dataclass(frozen=True)
class FrameworkPair:
    """The interpreters of the unpatched and the patched venv of one base."""

    unpatched: Path
    patched: Path


def _run_uv(*args: str) -> str:
    result = subprocess.run([uv_program(), *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RunguardError(f"uv {args[0]} {args[1]} failed: {result.stderr.strip()}")
    return result.stdout


def _build_venv(venv: Path, repo: Path, constraints: Path, interpreter: str) -> Path:
    """A venv with ``repo``'s core package installed (not editable, bytecode compiled), deps as constrained."""
    _run_uv("venv", "--quiet", "--python", interpreter, str(venv))
    python = venv_python(venv)
    pins = ("--constraint", str(constraints)) if constraints.is_file() else ()
    _run_uv("pip", "install", "--quiet", "--compile-bytecode", "--python", str(python), *pins, str(repo / CORE_PACKAGE))
    return python


def framework_venvs(
    root: Path, version: str, base: Path, patched: Path, interpreter: str = sys.executable
) -> FrameworkPair:
    """Build (or reuse) the pair of venvs for ``version`` under ``root``, on ``interpreter`` (default: this one).

    The pair is keyed by both checkouts' commits and the interpreter, and is built as one: the patched
    venv is constrained to the dependency versions resolved for the unpatched one, so the two differ
    only in the series.
    """
    commits = [git_output("rev-parse", "HEAD", cwd=repo) for repo in (base, patched)]
    key = hashlib.sha256("\n".join([*commits, sys.version, interpreter]).encode()).hexdigest()[:16]
    home = root / f"{version}-{key}"
    constraints = home / "dependencies.txt"
    if not (home / READY).is_file():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        unpatched = _build_venv(home / "unpatched", base, constraints, interpreter)
        frozen = _run_uv("pip", "freeze", "--exclude", PACKAGE, "--python", str(unpatched))
        constraints.write_text(frozen)
        _build_venv(home / "patched", patched, constraints, interpreter)
        (home / READY).write_text("\n".join(commits) + "\n")
    return FrameworkPair(*(venv_python(home / name) for name in ("unpatched", "patched")))
