"""The sessions that ship the series: the patched wheel and the PR export."""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

from scripts.series.listing import current_series
from scripts.series.locations import REPO_ROOT, docs_data_dir
from scripts.sessions.gate import patch_gate_checks
from scripts.sessions.glue import (
    PINS,
    TEST_TOOLS,
    UPSTREAM_TEST_DEPS,
    fresh_venv,
    install,
    install_core,
    install_into,
    parser,
    patched_bases,
    run_pytest,
    scratch,
    test_root,
)
from scripts.ship.evidence import NOT_RUN, breaking_check, issue_checks, new_test_check, ruff_check, wheel_check
from scripts.ship.export import check_sources, export_series, submitter
from scripts.ship.wheel import add_manifest, local_version, only_wheel, series_manifest, stage_build_tree
from scripts.validate.junit import outcomes
from scripts.validate.repro import load_record

DIST = REPO_ROOT / "dist"


EXPORT = REPO_ROOT / "export"


def wheel(session: nox.Session) -> None:
    """`-- --base V`: build agent-framework-core V+runguard.<hash> into dist/; test it in a fresh venv."""
    install(session, "wheel")
    series = current_series()
    for version, _, patched in patched_bases(session):
        work = scratch(session) / f"wheel-{version}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "packed").mkdir(parents=True)
        tree = stage_build_tree(patched.path, version, local_version(version, series), work / "tree")
        built = work / "built"
        session.run("uv", "build", "--wheel", "--quiet", "--build-constraint", PINS, "--out-dir", str(built), str(tree))
        session.run("python", "-m", "wheel", "unpack", "--dest", str(work / "unpacked"), str(only_wheel(built)))
        unpacked = add_manifest(work / "unpacked", series_manifest(version, series))
        session.run("python", "-m", "wheel", "pack", "--dest-dir", str(work / "packed"), str(unpacked))
        DIST.mkdir(exist_ok=True)
        path = (work / "packed" / only_wheel(built).name).replace(DIST / only_wheel(built).name)
        session.log(f"{version}: built {path}")
        venv = fresh_venv(session, f"fresh-{version}")
        install_into(session, venv, str(path), *TEST_TOOLS)
        env = {"RUNGUARD_BASE": version, "RUNGUARD_WHEEL": str(path)}
        run_pytest(session, f"wheel-{version}", "tests/scenarios", "tests/wheel", env=env, venv=venv)
        session.log(f"{version}: {path.name} passes the scenario tests in a fresh venv")


def export(session: nox.Session) -> None:
    """PR material per patch in export/: title, body (checklist from the checks run here), mbox, range-diff."""
    arguments = parser(session)
    arguments.add_argument("--author", help="'Name <email>': who signs the mboxes (default: git config user.*)")
    given = arguments.parse_args(session.posargs)
    author = submitter(REPO_ROOT, given.author)
    install(session, "ruff", *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    series = current_series()
    check_sources(series)
    checks = {patch.name: [*NOT_RUN, *issue_checks(patch), breaking_check(patch)] for patch in series.patches}
    bases = list(patched_bases(session, given.base or ""))
    for version, _, patched in bases:
        for name, gate in patch_gate_checks(session, version, patched, series).items():
            checks[name] += gate
        added = patched.added_tests()
        found: dict[str, str] = {}
        if added:
            install_core(session, patched.path)
            root = test_root(session, patched.path, f"export-{version}")
            found = outcomes(run_pytest(session, f"export-{version}", "-q", *added, cwd=root, must_pass=False))
        for patch in series.exportable:  # a backport is never sent: no checklist to fill
            checks[patch.name] += [
                new_test_check(version, patch, found),
                ruff_check(Path(session.bin) / "ruff", patched.path, version, patch),
                wheel_check(DIST, version, series),
            ]
    versions = [version for version, _, _ in bases]
    record = load_record(docs_data_dir() / "repro.json")
    rows = export_series(series, EXPORT, checks, bases[0][1], bases=versions, record=record, author=author)
    for row in rows:
        session.log(f"{row['patch']}: {row['upstream status']}; {row['since last export']}; {row['what to do']}")
    session.log(f"PR material for {len(rows)} patch(es) in {EXPORT}")
    if author is None:
        session.log("the mboxes keep the series' own author: pass `-- --author 'Name <email>'` (or set git's user.name"
                    " and user.email) to sign them as the submitter")  # fmt: skip
