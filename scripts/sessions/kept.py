"""Tools' findings on checkouts, and test runs that passed, kept by content, so a warm validation skips them.

A tool's run (pyright on a core package, mypy on the tests a series touches) needs one checkout's core package
installed in the session's venv: the runs that need the same one are made at once after a single install, as many
at once as there are CPUs, then the next core's. A test run is kept only once it passed, under everything it
depends on: this repo's files, the core's checkout and the session's venv.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nox

from scripts.series.common import side_by_side
from scripts.series.locations import REPO_ROOT
from scripts.sessions.glue import environment, install_core
from scripts.validate.results_cache import load, load_findings, store, store_findings, tree, work_tree


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


@dataclass(frozen=True)
class SuiteRun:
    """A pytest run of the tests session (``label``), made by ``run`` with the core package of ``core`` installed."""

    label: str
    core: Path
    run: Callable[[], object]


def kept_passes(session: nox.Session, runs: Sequence[SuiteRun]) -> None:
    """Make each of ``runs`` unless it passed before on the same inputs; a failure fails the session, as always.

    The inputs: this repo's files as they are now (``work_tree``: the tests, the tooling, the series, the pins), the
    core checkout's tree and the session's venv (its Python and distributions). So ``python3 run.py`` run again with
    nothing changed says so rather than running the same tests again; CI, on a fresh clone, runs them all.
    """
    inputs = (work_tree(REPO_ROOT), environment(session))
    for suite in runs:
        key = (*inputs, suite.label, tree(suite.core))
        if load("tests", *key) is not None:
            session.log(f"{suite.label}: passed before on these very inputs (this repo, the core, the venv); kept")
            continue
        install_core(session, suite.core)
        suite.run()
        store("tests", {"passed": suite.label}, *key)
