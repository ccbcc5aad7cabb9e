"""The ``repro`` session: every issue reproduction on every base, unpatched (must reproduce) and patched (must not)."""

from __future__ import annotations

from pathlib import Path

import nox

from scripts.series.datafiles import write_data, written
from scripts.series.listing import current_series
from scripts.series.repro import reproduction_scripts
from scripts.sessions.glue import environment, install_core, patched_bases, scratch
from scripts.validate.repro import ReproRun, format_runs, keep_run, kept_run, repro_body, run_key, run_reproductions

COMMAND = "python3 run.py -s repro"


def _runs(  # noqa: PLR0913 (the session, the scripts, and what they run against)
    session: nox.Session, scripts: list[Path], version: str, variant: str, package: Path, *, venv: str
) -> list[ReproRun]:
    """Each script run against ``package``'s core; a run is reused when nothing it depends on changed since."""
    keys = {script: run_key(script, package, venv) for script in scripts}
    runs = {script: kept_run(script, version, variant, key) for script, key in keys.items()}
    missing = [script for script, run in runs.items() if run is None]
    if len(missing) < len(scripts):
        session.log(f"{version} {variant}: {len(scripts) - len(missing)} run(s) reused, their inputs unchanged")
    if missing:
        install_core(session, package, compiled=True)  # many interpreters import it
        workdir = scratch(session) / "repro"
        workdir.mkdir(exist_ok=True)
        python = str(Path(session.bin) / "python")
        for script, run in zip(missing, run_reproductions(python, missing, version, variant, workdir), strict=True):
            keep_run(run, keys[script])
            runs[script] = run
    return [run for run in runs.values() if run is not None]


def repro(session: nox.Session) -> None:
    """Run repro/*.py against each base's released core package (exit 1) and the patched one (exit 0)."""
    scripts = reproduction_scripts(current_series().repro_dir)
    if not scripts:
        session.skip("repro/ has no reproduction script; nothing to run")
    bases = list(patched_bases(session))
    install_core(session, bases[0][1], compiled=True)  # the environment of the runs includes the core's dependencies
    venv = environment(session)
    runs: list[ReproRun] = []
    for version, base, patched in bases:
        for variant, package in (("unpatched", base), ("patched", patched.path)):
            runs += _runs(session, scripts, version, variant, package, venv=venv)
    version = str(session.run("python", "-c", "import platform; print(platform.python_version())", silent=True))
    path = write_data("repro", COMMAND, repro_body(runs, version.strip()))
    print(format_runs(runs))  # noqa: T201 (the session's report)
    session.log(f"results written to {written(path)}")
    wrong = [run.problem() for run in runs if not run.ok]
    if wrong:
        session.error(f"{len(wrong)} reproduction run(s) went wrong: {'; '.join(wrong)}")
