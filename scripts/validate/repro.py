"""Issue reproductions run against every base: unpatched they must reproduce (exit 1), patched they must not (exit 0).

The ``repro`` session writes the runs to ``docs/data/repro.json``; the export reads it back to say whether an issue
draft's reproduction was verified, on which bases, and what it printed. A run is kept by content (see ``run_key``), so
a script runs again only when it, the checkout it runs against or the environment changed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from scripts.series.common import aligned_table, sha256_of, side_by_side
from scripts.series.errors import RunguardError
from scripts.validate.results_cache import load, store, tree

EXPECTED_EXIT = {"unpatched": 1, "patched": 0}
TIMEOUT_SECONDS = 120
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}
RUNNER = Path(__file__)  # how a script is run and read back: part of what a kept run depends on
OUTCOME = ("exit_code", "observed", "expected")  # what a kept run records; the rest names the script and the base


@dataclass(frozen=True)
class ReproRun:
    """One run of ``repro/<slug>.py`` on a base; ``exit_code`` is None when it timed out."""

    slug: str
    base: str
    variant: str  # "unpatched" (the released package) or "patched" (with the series)
    exit_code: int | None
    observed: str
    expected: str
    script_sha256: str

    @property
    def ok(self) -> bool:
        """Whether it exited as it must: 1 (reproduces) unpatched, 0 (does not) patched."""
        return self.exit_code == EXPECTED_EXIT[self.variant]

    def problem(self) -> str:
        """What went wrong, in a few words."""
        got = "timed out" if self.exit_code is None else f"exited {self.exit_code}"
        must = "reproduce (exit 1)" if self.variant == "unpatched" else "not reproduce (exit 0)"
        return f"{self.slug} {got} on {self.base} {self.variant}, must {must}"


def run_reproduction(  # noqa: PLR0913 (what runs, where, and the bound)
    python: str, script: Path, base: str, variant: str, cwd: Path, *, timeout: float = TIMEOUT_SECONDS
) -> ReproRun:
    """Run ``script`` with ``python`` in ``cwd`` (away from any source tree), bounded by ``timeout`` seconds."""
    try:
        done = subprocess.run(
            [python, str(script)], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
            env={**os.environ, **NO_BYTECODE},
        )  # fmt: skip
        code: int | None = done.returncode
        output = done.stdout
    except subprocess.TimeoutExpired:
        code, output = None, ""
    return ReproRun(
        script.stem, base, variant, code, _line(output, "observed:"), _line(output, "expected:"), sha256_of(script)
    )


def run_reproductions(  # noqa: PLR0913 (as run_reproduction, for several scripts)
    python: str, scripts: Sequence[Path], base: str, variant: str, cwd: Path, *, timeout: float = TIMEOUT_SECONDS
) -> list[ReproRun]:
    """``run_reproduction`` for each of ``scripts``, as many at once as there are CPUs; the runs in script order."""

    def run(script: Path) -> ReproRun:
        return run_reproduction(python, script, base, variant, cwd, timeout=timeout)

    return side_by_side(run, scripts)


def run_key(script: Path, package: Path, environment: str) -> tuple[str, ...]:
    """What a run of ``script`` depends on, by content.

    The script, the tree of the checkout whose core package it runs against, the environment (the Python and the
    installed distributions) and this runner (how a script runs, its timeout, what is read from its output).
    """
    return (sha256_of(script), tree(package), environment, sha256_of(RUNNER))


def kept_run(script: Path, base: str, variant: str, key: tuple[str, ...]) -> ReproRun | None:
    """The run of ``script`` recorded under ``key``, named for this base and variant; None when there is none."""
    kept = load("repro", *key)
    outcome = cast("dict[str, Any]", kept) if isinstance(kept, dict) else {}
    if set(outcome) != set(OUTCOME):
        return None
    return ReproRun(script.stem, base, variant, **outcome, script_sha256=sha256_of(script))


def keep_run(run: ReproRun, key: tuple[str, ...]) -> None:
    """Record a run under ``key``, unless it timed out (that depends on the machine's load: it is tried again)."""
    if run.exit_code is not None:
        store("repro", {name: getattr(run, name) for name in OUTCOME}, *key)


def _line(output: str, prefix: str) -> str:
    return next((line.strip() for line in reversed(output.splitlines()) if line.startswith(prefix)), "")


def format_runs(runs: list[ReproRun]) -> str:
    """The session's table: one row per script, base and variant."""
    rows = [("script", "base", "variant", "exit", "verdict")]
    rows += [
        (run.slug, run.base, run.variant, "timeout" if run.exit_code is None else str(run.exit_code),
         "ok" if run.ok else "MISMATCH")
        for run in runs
    ]  # fmt: skip
    return "\n".join(aligned_table(rows))


def repro_body(runs: list[ReproRun], python: str) -> dict[str, object]:
    """The body of ``docs/data/repro.json`` (the shared writer adds the stamp)."""
    return {"python": python, "rows": [{**dataclasses.asdict(run), "ok": run.ok} for run in runs]}


@dataclass(frozen=True)
class ReproRecord:
    """``docs/data/repro.json`` as read back: the interpreter, the machine and every run."""

    python: str
    system: str
    runs: tuple[ReproRun, ...]

    def verified(self, slug: str, script_sha256: str, bases: list[str]) -> list[ReproRun]:
        """The runs of this very script, when it behaved as it must on every base and variant; else none."""
        mine = [run for run in self.runs if run.slug == slug and run.script_sha256 == script_sha256]
        covered = {(run.base, run.variant) for run in mine if run.ok}
        wanted = {(base, variant) for base in bases for variant in EXPECTED_EXIT}
        return mine if wanted <= covered and all(run.ok for run in mine) else []


def load_record(path: Path) -> ReproRecord | None:
    """Read a ``repro.json``; None when it does not exist."""
    if not path.is_file():
        return None
    try:
        data = cast("dict[str, Any]", json.loads(path.read_text()))
        fields = {field.name for field in dataclasses.fields(ReproRun)}
        runs = tuple(ReproRun(**{key: row[key] for key in fields}) for row in data["rows"])
        return ReproRecord(str(data["python"]), str(data["produced"]["on"]).split(",")[0], runs)
    except (ValueError, KeyError, TypeError) as error:
        raise RunguardError(f"{path}: not a repro data file ({error})") from error
