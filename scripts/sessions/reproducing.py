"""The ``repro`` session: every issue reproduction on every base, unpatched (must reproduce) and patched (must not)."""

from __future__ import annotations

from pathlib import Path

import nox

from scripts.series.datafiles import write_data
from scripts.series.listing import current_series
from scripts.series.locations import REPO_ROOT
from scripts.series.repro import reproduction_scripts
from scripts.sessions.glue import install_core, patched_bases, scratch
from scripts.validate.repro import ReproRun, format_runs, repro_body, run_reproduction

COMMAND = "python3 run.py -s repro"


def repro(session: nox.Session) -> None:
    """Run repro/*.py against each base's released core package (exit 1) and the patched one (exit 0)."""
    scripts = reproduction_scripts(current_series().repro_dir)
    if not scripts:
        session.skip("repro/ has no reproduction script; nothing to run")
    python = str(Path(session.bin) / "python")
    workdir = scratch(session) / "repro"
    workdir.mkdir(exist_ok=True)
    runs: list[ReproRun] = []
    for version, base, patched in patched_bases(session):
        for variant, package in (("unpatched", base), ("patched", patched.path)):
            install_core(session, package)
            runs += [run_reproduction(python, script, version, variant, workdir) for script in scripts]
    version = str(session.run("python", "-c", "import platform; print(platform.python_version())", silent=True))
    path = write_data("repro", COMMAND, repro_body(runs, version.strip()))
    print(format_runs(runs))  # noqa: T201 (the session's report)
    session.log(f"results written to {path.relative_to(REPO_ROOT)}")
    wrong = [run.problem() for run in runs if not run.ok]
    if wrong:
        session.error(f"{len(wrong)} reproduction run(s) went wrong: {'; '.join(wrong)}")
