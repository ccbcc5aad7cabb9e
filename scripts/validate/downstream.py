"""Packages built on agent-framework-core, their own tests before and after the series, compared per test.

As Rust's crater does for compiler changes: each package of :data:`PACKAGES` is installed from PyPI, at the release
that came out with the base (the base's frozen set, ``downstream/constraints-<base>.txt``), beside the released core,
and its test suite runs; then the patched core replaces the released one in the same venv and the suite runs again.
A test that passed before and fails after is a regression once it fails again when rerun alone; one that passes alone
is listed as flaky. Tests that fail in both runs (version skew, no credentials, no service) cancel out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from scripts.series.errors import RunguardError
from scripts.series.locations import REPO_ROOT
from scripts.validate.differential import regressed_tests

FROZEN_SETS = REPO_ROOT / "downstream"
FAILING = frozenset({"failed", "error"})


@dataclass(frozen=True)
class Downstream:
    """A package on PyPI built on the core's workflows and streams, and where its own tests are."""

    name: str  # on PyPI
    directory: str  # its folder in upstream's repo; a checkout has its tests there
    tests_in_sdist: bool  # its sdist ships its tests (then they match the installed release exactly)
    pythons: tuple[str, ...] = ("3.11",)
    test_dirs: tuple[str, ...] = ("tests",)  # relative to ``directory`` (and to the sdist's top)
    extras: str = ""  # the optional features its tests import, as ``[a,b]``
    test_deps: tuple[str, ...] = ()  # what its tests import beyond it and the test tools (a framework package among
    # them is pinned by the frozen set too)

    @property
    def requirement(self) -> str:
        """What to install: the package with its tested extras (the version comes from the frozen set)."""
        return f"{self.name}{self.extras}"


PACKAGES = (
    Downstream(
        "agent-framework-ag-ui", "python/packages/ag-ui", tests_in_sdist=True, pythons=("3.11", "3.13"),
        test_deps=("agent-framework-orchestrations",),
    ),
    Downstream("agent-framework-orchestrations", "python/packages/orchestrations", tests_in_sdist=False),
    Downstream(
        "agent-framework-declarative", "python/packages/declarative", tests_in_sdist=False, test_deps=("mcp[ws]",)
    ),
    Downstream(
        "agent-framework-devui", "python/packages/devui", tests_in_sdist=False,
        test_deps=("agent-framework-orchestrations",),
    ),
    Downstream("agent-framework-a2a", "python/packages/a2a", tests_in_sdist=False),
    Downstream(
        "agent-framework-lab", "python/packages/lab", tests_in_sdist=False,
        test_dirs=("gaia/tests", "lightning/tests", "tau2/tests"), extras="[gaia,lightning,tau2]",
        test_deps=("agent-framework-openai",),
    ),
    Downstream("agent-framework-hosting", "python/packages/hosting", tests_in_sdist=False),
    Downstream(
        "agent-framework-hosting-responses", "python/packages/hosting-responses", tests_in_sdist=False,
        test_deps=("fastapi", "httpx"),
    ),
    Downstream(
        "agent-framework-foundry-hosting", "python/packages/foundry_hosting", tests_in_sdist=False,
        test_deps=("agent-framework-foundry",),
    ),
)  # fmt: skip


def chosen(names: Sequence[str], packages: Sequence[Downstream] = PACKAGES) -> list[Downstream]:
    """The packages named (all when none is); an unknown name is an error naming the known ones."""
    unknown = sorted(set(names) - {package.name for package in packages})
    if unknown:
        known = ", ".join(package.name for package in packages)
        raise RunguardError(f"no downstream package {', '.join(unknown)}; known: {known}")
    return [package for package in packages if not names or package.name in names]


def downstream_pythons(packages: Iterable[Downstream] = PACKAGES) -> list[str]:
    """Every Python some package is tested on, oldest first."""
    found = {python for package in packages for python in package.pythons}
    return sorted(found, key=lambda version: tuple(map(int, version.split("."))))


PIN = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)==(?P<version>\S+)$")


@dataclass(frozen=True)
class FrozenSet:
    """A base's frozen set: the core and each package at the release that came out with it, as constraints."""

    base: str
    path: Path
    versions: dict[str, str]

    def version(self, package: Downstream) -> str:
        """The release of ``package`` in this set."""
        return self.versions[package.name]


def frozen_set(base: str, packages: Sequence[Downstream] = PACKAGES, directory: Path = FROZEN_SETS) -> FrozenSet:
    """Read ``downstream/constraints-<base>.txt``; it must pin the core to ``base`` and every package."""
    path = directory / f"constraints-{base}.txt"
    if not path.is_file():
        raise RunguardError(f"no frozen set for base {base}: write {path} (see the other bases' files)")
    versions: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        pin = PIN.match(text)
        if pin is None:
            raise RunguardError(f"{path}:{number}: expected NAME==VERSION, found {text!r}")
        versions[pin["name"].lower()] = pin["version"]
    if versions.get("agent-framework-core") != base:
        raise RunguardError(f"{path} must pin agent-framework-core=={base}")
    missing = [package.name for package in packages if package.name not in versions]
    if missing:
        raise RunguardError(f"{path} pins no release of {', '.join(missing)}")
    return FrozenSet(base, path, versions)


@dataclass(frozen=True)
class PackageRun:
    """One package's suite on one base and Python: per test, its outcome before and after the series.

    ``alone`` holds, for each test that passed before and failed after, its outcome when rerun alone after.
    """

    base: str
    python: str
    package: str
    version: str
    tests_from: str  # "sdist", or "checkout <commit>"
    before: Mapping[str, str]
    after: Mapping[str, str]
    alone: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def suspects(self) -> list[str]:
        """Tests that passed before the series and fail after it, in the whole suite."""
        return regressed_tests(dict(self.before), dict(self.after))

    @property
    def regressions(self) -> list[str]:
        """Suspects that did not pass when rerun alone (or were not rerun): the series broke them."""
        return [test for test in self.suspects if self.alone.get(test) != "passed"]

    @property
    def flaky(self) -> list[str]:
        """Suspects that passed when rerun alone."""
        return [test for test in self.suspects if self.alone.get(test) == "passed"]

    def row(self) -> dict[str, Any]:
        """The run as a row of ``docs/data/downstream.json``."""
        passed = [sum(outcome == "passed" for outcome in run.values()) for run in (self.before, self.after)]
        both = [test for test, outcome in self.after.items() if outcome in FAILING and self.before.get(test) in FAILING]
        return {
            **_key(self.base, self.python, self.package), "version": self.version, "installed": True,
            "tests_from": self.tests_from, "tests": len(self.after), "passed_before": passed[0],
            "passed_after": passed[1], "failed_both": len(both), "regressions": self.regressions, "flaky": self.flaky,
        }  # fmt: skip

    def report(self) -> list[str]:
        """The session's lines about this run: counts, then each regression and each flaky test."""
        row = self.row()
        label = f"{self.package} {self.version} on {self.base}, Python {self.python} (tests from {self.tests_from})"
        lines = [
            f"{label}: {row['tests']} tests, {row['passed_before']} passed before the series, "
            f"{row['passed_after']} after, {row['failed_both']} failed in both"
        ]
        lines += [f"{label}: REGRESSION passed before, fails after, also alone: {test}" for test in self.regressions]
        lines += [f"{label}: flaky: failed after in the suite, passed alone: {test}" for test in self.flaky]
        return lines


def not_installed(base: str, python: str, package: str, version: str, reason: str) -> dict[str, Any]:
    """The row of a package that could not be installed, and why."""
    return {**_key(base, python, package), "version": version, "installed": False, "reason": reason}


def _key(base: str, python: str, package: str) -> dict[str, str]:
    return {"base": base, "python": python, "package": package}


def _identity(row: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(row.get("base")), str(row.get("python")), str(row.get("package")))


def merge_rows(earlier: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], series: str) -> dict[str, Any]:
    """The body of ``docs/data/downstream.json``: ``rows`` with ``earlier``'s rows for packages not run this time.

    Earlier rows are kept only when they were produced with the same series: every row then belongs to ``series``.
    """
    same_series = cast("Mapping[str, Any]", earlier.get("produced", {})).get("series") == series
    kept = cast("list[dict[str, Any]]", earlier.get("rows", []) if same_series else [])
    merged = {_identity(row): dict(row) for row in [*kept, *rows]}
    ordered = sorted(merged.values(), key=lambda row: (not row.get("regressions"), *_identity(row)))
    regressions = sum(len(row.get("regressions", [])) for row in ordered)
    missing = [row for row in ordered if not row.get("installed")]
    summary = f"{len(ordered)} package runs, {regressions} regression(s)" + (
        f", {len(missing)} package(s) not installed" if missing else ""
    )
    return {"summary": summary + ".", "regressions": regressions, "rows": ordered}
