"""Tools' findings on checkouts, kept by content; the runs not kept are made side by side, grouped by their core.

A tool's run (pyright on a core package, mypy on the tests a series touches) needs one checkout's core package
installed in the session's venv: the runs that need the same one are made at once after a single install, as many
at once as there are CPUs, then the next core's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nox

from scripts.series.common import side_by_side
from scripts.sessions.glue import install_core
from scripts.validate.results_cache import load_findings, store_findings


@dataclass(frozen=True)
class ToolRun:
    """A tool's run on ``repo``; ``find`` runs it and returns its findings.

    ``key`` is everything the findings depend on (None: they are not kept, the tool runs every time); ``core`` is the
    checkout whose core package must be installed while it runs (None: any, or none).
    """

    kind: str
    repo: Path
    key: tuple[str, ...] | None
    core: Path | None
    find: Callable[[], Counter[str]]


def kept_findings(session: nox.Session, runs: Sequence[ToolRun]) -> dict[ToolRun, Counter[str]]:
    """Each run's findings: reused where recorded under its key, else found (and recorded).

    The runs left are grouped by ``core``, in the order the cores first appear; each group's core is installed once,
    then its runs are made side by side in the order given (the longest first keeps the cores busy).
    """
    findings = {run: None if run.key is None else load_findings(run.kind, *run.key) for run in runs}
    for run, kept in findings.items():
        if kept is not None:
            reused = sum(kept.values())
            session.log(f"{run.repo.name}: unchanged since {run.kind} last checked it; reusing its {reused} finding(s)")
    missing = [run for run, kept in findings.items() if kept is None]
    for core in dict.fromkeys(run.core for run in missing):
        if core is not None:
            install_core(session, core)
        group = [run for run in missing if run.core == core]
        for run, found in zip(group, side_by_side(lambda run: run.find(), group), strict=True):
            if run.key is not None:
                store_findings(run.kind, found, *run.key)
            findings[run] = found
    return {run: found or Counter() for run, found in findings.items()}
