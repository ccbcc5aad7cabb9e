"""The ``downstream`` session: the packages that depend on the core, their test suites before and after the series.

See :mod:`scripts.validate.downstream` for the packages, the frozen sets and the comparison. Each package gets a
fresh venv per base: the released core, the package at the base's release and its test dependencies, all from the
base's frozen set, with what upstream's own test environment has beside them (``UPSTREAM_TEST_DEPS``); its suite
runs, the patched core replaces the released one (nothing else changes, which is checked), and the suite runs again.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import nox

from scripts.apply.copies import PatchedCheckout
from scripts.series.common import venv_python
from scripts.series.datafiles import write_data
from scripts.series.listing import current_series
from scripts.series.locations import CORE_PACKAGE, docs_data_dir
from scripts.sessions.glue import (
    TEST_TOOLS,
    UPSTREAM_TEST_DEPS,
    fresh_venv,
    install_into,
    parser,
    patched_bases,
    run_pytest,
    scratch,
    test_root,
    try_install_into,
)
from scripts.sources.checkout import open_checkout, snapshot_checkout
from scripts.sources.pypi import fetch_sdist, unpack_sdist
from scripts.validate.downstream import (
    Downstream,
    FrozenSet,
    PackageRun,
    chosen,
    downstream_pythons,
    frozen_set,
    merge_rows,
    not_installed,
)
from scripts.validate.junit import node_id, outcomes

RECORD = "downstream"  # docs/data/downstream.json

# Upstream's own test command leaves out the tests that need a service; each test is bounded by pytest-timeout.
PYTEST_ARGS = ("-q", "--disable-warnings", "--continue-on-collection-errors", "-m", "not integration", "--timeout=300")

CORE = "agent-framework-core"


def pythons(found: list[str]) -> list[str]:
    """The Pythons among ``found`` that some downstream package is tested on."""
    return [python for python in found if python in downstream_pythons()]


@dataclass(frozen=True)
class SuiteSource:
    """Where a package's tests are: ``repo`` (an unpacked sdist or a checkout) and the package's folder in it."""

    repo: Path
    package: Path
    label: str  # "sdist", or "checkout <commit>"

    def test_root(self, session: nox.Session, name: str, tests: tuple[str, ...]) -> Path:
        """A copy of the package's ``pyproject.toml`` and tests to run pytest in (see ``glue.test_root``).

        From a checkout, the copy sits at the package's place in a tree whose other entries (upstream's samples,
        its declarative agents) are links to the checkout's, as the tests find them there; the package's own
        source is not linked, so the tests import the installed package.
        """
        top = scratch(session) / name
        shutil.rmtree(top, ignore_errors=True)
        root = test_root(session, self.repo, f"{name}/{self.package}", package=self.package, tests=tests)
        for parent in (Path(), Path("python")) if self.package.parts else ():
            for entry in (self.repo / parent).iterdir():
                if entry.name != ".git" and not (top / parent / entry.name).exists():
                    (top / parent / entry.name).symlink_to(entry)
        return root


def _sources(session: nox.Session, package: Downstream, version: str, checkout: Path | None) -> SuiteSource | None:
    """Where ``package``'s tests come from: its own sdist when it ships them, else the checkout (None: neither)."""
    if package.tests_in_sdist:
        unpacked = scratch(session) / f"sdist-{package.name}-{version}"
        shutil.rmtree(unpacked, ignore_errors=True)
        return SuiteSource(unpack_sdist(fetch_sdist(version, package.name), unpacked), Path(), "sdist")
    if checkout is None:
        return None
    return SuiteSource(checkout, Path(package.directory), f"checkout {checkout.name[:12]}")


def _freeze(session: nox.Session, venv: Path) -> str:
    """Every distribution in ``venv`` but the core, with its version."""
    python = str(venv_python(venv))
    return str(session.run("uv", "pip", "freeze", "--python", python, "--exclude", CORE, silent=True))


def _run_package(  # noqa: PLR0913 (one package on one base: what, where its tests are, which cores)
    session: nox.Session, package: Downstream, *, frozen: FrozenSet, tests: SuiteSource, base: Path,
    patched: PatchedCheckout,
) -> dict[str, object]:  # fmt: skip
    """Install ``package`` beside the released core, run its suite, swap in the patched core, run it again."""
    version, python, label = frozen.version(package), str(session.python), f"{package.name}-{frozen.base}"
    venv = fresh_venv(session, f"downstream-{label}")
    requirements = (f"{package.requirement}=={version}", *package.test_deps, *TEST_TOOLS, *UPSTREAM_TEST_DEPS)
    reason = try_install_into(session, venv, str(base / CORE_PACKAGE), *requirements, "-c", str(frozen.path))
    if reason:
        line = f"runguard: {package.name}=={version} cannot be installed on Python {python} with base {frozen.base}"
        session.warn(f"{line}: {reason}")
        return not_installed(frozen.base, python, package.name, version, reason)
    root = tests.test_root(session, f"tests-{label}", package.test_dirs)
    before = run_pytest(session, f"{label}-before", *PYTEST_ARGS, cwd=root, venv=venv, must_pass=False)
    frozen_before = _freeze(session, venv)
    install_into(session, venv, "--reinstall-package", CORE, "--no-deps", str(patched.path / CORE_PACKAGE))
    if _freeze(session, venv) != frozen_before:
        session.error(f"{label}: installing the patched core changed other distributions in the venv")
    after = run_pytest(session, f"{label}-after", *PYTEST_ARGS, cwd=root, venv=venv, must_pass=False)
    run = PackageRun(frozen.base, python, package.name, version, tests.label, outcomes(before), outcomes(after))
    alone: dict[str, str] = {}
    for number, test in enumerate(run.suspects):
        cases = run_pytest(
            session, f"{label}-alone-{number}", *PYTEST_ARGS, node_id(test, root), cwd=root, venv=venv,
            must_pass=False,
        )  # fmt: skip
        alone[test] = cases[test].outcome if test in cases else "not run"
    run = replace(run, alone=alone)
    for line in run.report():
        session.log(line)
    return run.row()


def downstream(session: nox.Session) -> None:
    """Packages built on the core, on PyPI: their own tests before vs after the series (`-- --checkout PATH`)."""
    arguments = parser(session)
    arguments.add_argument("--checkout", help="a git clone of microsoft/agent-framework: the tests of the packages")
    arguments.add_argument("--package", action="append", help="test this package only (repeatable)")
    given = arguments.parse_args(session.posargs)
    python = str(session.python)
    packages = [package for package in chosen(given.package or []) if python in package.pythons]
    if not packages:
        session.skip(f"no package chosen is tested on Python {python}")
    checkout = snapshot_checkout(open_checkout(Path(given.checkout))) if given.checkout else None
    selected = patched_bases(session, given.base or "")
    bases = [(frozen_set(version), base, patched) for version, base, patched in selected]
    if checkout is None:
        for package in packages:
            if not package.tests_in_sdist:
                session.log(
                    f"{package.name}: its sdist ships no tests; not run (pass `-- --checkout PATH`, a clone of "
                    "microsoft/agent-framework, to run the tests it has there)"
                )
    rows: list[dict[str, object]] = []
    for frozen, base, patched in bases:
        for package in packages:
            tests = _sources(session, package, frozen.version(package), checkout)
            if tests is None:
                continue
            if not (tests.repo / tests.package).is_dir():
                session.warn(f"runguard: {package.name}: the checkout has no {package.directory}; not run")
                continue
            rows.append(_run_package(session, package, frozen=frozen, tests=tests, base=base, patched=patched))
    record = docs_data_dir() / f"{RECORD}.json"
    earlier: dict[str, object] = json.loads(record.read_text()) if record.is_file() else {}
    body = merge_rows(earlier, rows, current_series().short_digest())
    command = f"python3 run.py -s {session.name}" + (" -- --checkout PATH" if checkout else "")
    path = write_data(RECORD, command, body)
    session.log(f"Python {python}: {len(rows)} package run(s) written to {path}")
    regressed = sorted({str(row["package"]) for row in rows if row.get("regressions")})
    missing = sorted({str(row["package"]) for row in rows if not row.get("installed")})
    if regressed:
        session.error(f"the series breaks tests of {', '.join(regressed)} that passed without it (listed above)")
    if missing:
        session.error(f"cannot install {', '.join(missing)} (listed above): their tests did not run")
