"""The sessions that apply the series: ``apply`` and the applicability matrix."""

from __future__ import annotations

import sys

import nox

from scripts.series.datafiles import written
from scripts.sessions.glue import options, patched_bases
from scripts.validate.applicability import write_applicability


def apply(session: nox.Session) -> None:
    """``-- --base V`` / ``-- --checkout PATH``: ``python -m scripts apply``; no arguments: every base."""
    if session.posargs:
        # interrupt_timeout=None: after Ctrl-C, wait for the apply to clean up instead of killing it.
        session.run(sys.executable, "-m", "scripts", "apply", *session.posargs, external=True, interrupt_timeout=None)
        return
    for version, base, patched in patched_bases(session):
        session.log(f"{version}: base checkout {base}")
        session.log(f"{version}: patched checkout {patched.path}")


def applicability(session: nox.Session) -> None:
    """Write docs/data/applicability.json: each patch's outcome on every base; `-- --checkout PATH` adds one."""
    given = options(session)
    command = " ".join(["python3 run.py -s applicability", *(["--", *session.posargs] if session.posargs else [])])
    session.log(f"results written to {written(write_applicability(given.base, given.checkout, command))}")
