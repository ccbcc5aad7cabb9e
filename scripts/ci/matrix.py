"""The CI job matrix: sessions x Pythons x bases from ``nox -l --json``, the explorer sharded by seed range.

Works with sessions nox parametrizes by Python (``tests-3.12``, with ``"python": "3.12"``) and with sessions that
run on the interpreter running nox (``"python"`` null or false): each listed session CI runs becomes one job per
base, and the explorer's one job per base and shard.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from scripts.series.errors import RunguardError
from scripts.series.locations import REPO_ROOT

# The sessions CI runs per base, in this order; `docs` builds the site once, after the jobs (in the merge job).
CI_SESSIONS = ("tests", "lint", "typecheck", "redgreen", "repro", "wheel", "stress", "downstream")
SHARDED = "stress"
STRESS_SHARDS = 2
STRESS_SCHEDULES = 1000  # per family and base, split over the shards


@dataclass(frozen=True)
class Cell:
    """One job: a nox session (as nox names it) on one base, and for the explorer one shard of the seeds."""

    id: str
    session: str
    python: str  # "3.12", or "" for the interpreter that runs nox
    base: str
    args: str  # what the job passes after `--`


def nox_sessions(listing: str) -> list[dict[str, Any]]:
    """The sessions in ``nox -l --json``'s output."""
    try:
        loaded: object = json.loads(listing)
        sessions = cast("list[object]", loaded) if isinstance(loaded, list) else []
        if sessions is not loaded or not all(isinstance(entry, dict) and "session" in entry for entry in sessions):
            raise TypeError("not a list of sessions")
    except (ValueError, TypeError) as error:
        raise RunguardError(f"not the output of `nox -l --json`: {error}") from None
    return cast("list[dict[str, Any]]", sessions)


def list_sessions() -> str:
    """``nox -l --json`` for the sessions CI runs, as nox lists them (with every Python a session is run on)."""
    command = [sys.executable, "-m", "nox", "-f", str(REPO_ROOT / "noxfile.py"), "-l", "--json", "-s", *CI_SESSIONS]
    listed = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    if listed.returncode != 0:
        last = (listed.stderr.strip().splitlines() or ["no output"])[-1]
        raise RunguardError(f"`nox -l --json` failed: {last.removeprefix('nox > ')}")
    return listed.stdout


def _python(entry: dict[str, Any]) -> str:
    python = entry.get("python")
    return python if isinstance(python, str) else ""


def build_matrix(
    sessions: Sequence[dict[str, Any]], bases: Sequence[str], shards: int = STRESS_SHARDS,
    schedules: int = STRESS_SCHEDULES,
) -> list[Cell]:  # fmt: skip
    """One cell per CI session x Python x base (x shard for the explorer); an empty matrix is an error."""
    if shards < 1 or schedules < shards:
        raise RunguardError(f"{shards} explorer shard(s) of {schedules} schedules: need 1 <= shards <= schedules")
    order = {name: rank for rank, name in enumerate(CI_SESSIONS)}
    # nox lists each session as "session" (what -s takes: tests-3.12) and "name" (the function: tests).
    chosen = sorted((s for s in sessions if s["name"] in order), key=lambda s: (order[s["name"]], s["session"]))
    cells: list[Cell] = []
    for entry in chosen:
        name: str = entry["session"]
        for base in bases:
            if entry["name"] != SHARDED:
                cells.append(Cell(f"{name}-{base}", name, _python(entry), base, f"--base {base}"))
                continue
            for index in range(1, shards + 1):
                args = f"--base {base} --schedules {schedules} --shard {index}/{shards} --record"
                cells.append(Cell(f"{name}-{base}-{index}of{shards}", name, _python(entry), base, args))
    if not cells:
        listed = ", ".join(sorted({str(s["name"]) for s in sessions})) or "nothing"
        raise RunguardError(
            f"the matrix is empty: bases {list(bases)}, nox lists {listed}, CI runs {', '.join(CI_SESSIONS)}"
        )
    return cells


def github_matrix(cells: Sequence[Cell]) -> str:
    """The ``strategy.matrix`` value for GitHub Actions, as one line of JSON."""
    return json.dumps({"include": [asdict(cell) for cell in cells]}, separators=(",", ":"))
