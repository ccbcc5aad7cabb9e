"""nox sessions that validate, prove and ship the runguard patch series.

``nox`` alone runs the default sessions (``nox -l`` marks them with ``*``) on every base in ``patches/bases``;
``nox -s SESSION -- --base V`` narrows a session to one base; ``nox -t data`` runs the sessions that write
``docs/data``. Sessions that run framework code run on every CPython found (``tests-3.10`` ... ``tests-3.13``;
``-p X.Y`` or ``-- --python X.Y`` narrows): by default on the running one only, all with ``RUNGUARD_ALL_PYTHONS=1``
(``python3 run.py --all-pythons``); see :mod:`scripts.sessions.matrix`. Each session calls one function of
:mod:`scripts.sessions` or runs ``python -m scripts.<module>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox
from nox import registry

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripts.sessions import applying, dependents, glue, matrix, reproducing, shipping, site, validation
from scripts.sessions.glue import reported

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"

WRITES_DOCS_DATA = ["data"]
SHIPS = ["ship"]
BESIDE = "beside"  # default sessions the main job (run.py) runs in a second nox process, beside the others
glue.command_line(sys.argv)  # -t data / -- --record: record in docs/data; a bad -- --base: one error, nothing runs
PYTHONS = matrix.session_pythons()  # every CPython 3.10+ found; reports a missing one once


@nox.session(python=False, default=False)
@reported
def apply(session: nox.Session) -> None:
    """Apply the series: `-- --base V` (cached copy) or `-- --checkout PATH` (new branch); no args: every base."""
    applying.apply(session)


@nox.session(python=PYTHONS)
@reported
@matrix.cell
def tests(session: nox.Session) -> None:
    """Tooling tests; per base, the tests the series adds to upstream and the scenario tests (per Python)."""
    validation.tests(session)


@nox.session(python=PYTHONS, default=False)
@reported
@matrix.cell
def upstream(session: nox.Session) -> None:
    """Upstream's workflow/agent tests before vs after the series: `-- --checkout PATH` or `-- --tests-from PATH`."""
    validation.upstream(session)


# On the Pythons the downstream packages are tested on (3.11; ag-ui on 3.13 too) that are found here.
@nox.session(python=dependents.pythons(PYTHONS), venv_backend="uv", default=False, tags=WRITES_DOCS_DATA)
@reported
@matrix.cell
def downstream(session: nox.Session) -> None:
    """Packages built on the core, from PyPI: their own tests before vs after the series (`-- --checkout PATH`)."""
    dependents.downstream(session)


@nox.session
@reported
def lint(session: nox.Session) -> None:
    """Ruff with upstream's settings on the files the series touches, and with this repo's settings here."""
    validation.lint(session)


@nox.session(tags=[BESIDE])
@reported
def typecheck(session: nox.Session) -> None:
    """Pyright strict on this repo; on each base, pyright errors the series adds to the core package."""
    validation.typecheck(session)


@nox.session
@reported
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors, then check it with tests/docs."""
    site.docs(session)


@nox.session(default=False)
@reported
def browser(session: nox.Session) -> None:
    """Load the site's diagram pages in headless chromium: `-- --screenshots DIR` also saves a picture of each."""
    site.browser(session)


@nox.session(python=False, default=False, tags=WRITES_DOCS_DATA)
@reported
def applicability(session: nox.Session) -> None:
    """Write docs/data/applicability.json: each patch's outcome on every base; `-- --checkout PATH` adds one."""
    applying.applicability(session)


@nox.session(python=PYTHONS, venv_backend="uv", default=False, tags=SHIPS)
@reported
@matrix.cell
def wheel(session: nox.Session) -> None:
    """`-- --base V`: build agent-framework-core V+runguard.<hash> into dist/; test it in a fresh venv."""
    shipping.wheel(session)


@nox.session(default=False, tags=SHIPS)
@reported
def export(session: nox.Session) -> None:
    """PR material per patch in export/: title, body (checklist from the checks run here), mbox, range-diff."""
    shipping.export(session)


@nox.session(tags=WRITES_DOCS_DATA)
@reported
def repro(session: nox.Session) -> None:
    """Every repro/*.py on each base: exits 1 on the released package, 0 patched; docs/data/repro.json."""
    reproducing.repro(session)


@nox.session(python=PYTHONS, venv_backend="uv", tags=[*WRITES_DOCS_DATA, BESIDE])
@reported
@matrix.cell
def redgreen(session: nox.Session) -> None:
    """Per base and patch: its added tests fail by an assertion on the series prefix without it, then pass."""
    validation.redgreen(session)


@nox.session(python=PYTHONS, default=False)  # writes docs/data/stress.json only with --record
@reported
@matrix.cell
def stress(session: nox.Session) -> None:
    """Schedule explorer on each base (`--unpatched`: without the series); explorer args pass through."""
    validation.stress(session)


@nox.session(python=False, default=False, tags=WRITES_DOCS_DATA)
@reported
def bench(session: nox.Session) -> None:
    """Patched vs unpatched time and memory, per Python: `-- [--base V] [--python X.Y] [--all-pythons] [--quick]`."""
    glue.report(session, "scripts.bench")


@nox.session(python=False, default=False, tags=WRITES_DOCS_DATA)
@reported
def timing(session: nox.Session) -> None:
    """How long `python3 run.py` takes cold (a fresh clone of HEAD) and warm: docs/data/validation-timing.json."""
    glue.report(session, "scripts.validate.timing")


nox.options.sessions = matrix.default_sessions(registry.get())  # `nox` alone: on the running Python
