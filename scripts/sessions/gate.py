"""Upstream's gate beyond ruff and pyright: mypy on the tests the series adds, bandit on the source it touches.

Each compares findings before and after (the base and the patched copy in ``lint``/``typecheck``; a patch's parent
and its commit in ``export``): a finding the change adds fails the session, or leaves the checklist item unticked.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path

import nox

from scripts.apply.copies import PatchedCheckout
from scripts.series.listing import Series
from scripts.sessions.glue import install, install_core, run_in_venv, scratch, session_venv
from scripts.sessions.kept import ToolRun
from scripts.ship.checklist import Check
from scripts.ship.evidence import gate_check
from scripts.validate.differential import new_errors
from scripts.validate.gate import (
    WORKSPACE,
    bandit_arguments,
    bandit_findings,
    gated_sources,
    gated_tests,
    mypy_arguments,
    mypy_findings,
    mypy_key,
    present,
    write_configs,
)
from scripts.validate.prefixes import check_out, clone_prefixes

MYPY, BANDIT = "mypy", "bandit[toml]"  # versions in pins.txt
Base = tuple[str, Path, PatchedCheckout]


def _configs(session: nox.Session) -> tuple[Path, Path]:
    return write_configs(scratch(session) / "gate")


def mypy_run(session: nox.Session, repo: Path, tests: list[str], cache: str) -> Counter[str]:
    """Mypy's findings on those of ``tests`` that exist in ``repo``, with the agent_framework installed now."""
    files = present(repo, tests)
    if not files:
        return Counter()
    config, _ = _configs(session)
    arguments = mypy_arguments(config, scratch(session) / f"mypy-{cache}", files)
    output = run_in_venv(
        session, session_venv(session), "mypy", *arguments, cwd=repo / WORKSPACE, codes=(0, 1), silent=True
    )
    return mypy_findings(output)


def bandit_run(session: nox.Session, repo: Path, sources: list[str]) -> Counter[str]:
    """Bandit's findings on those of ``sources`` that exist in ``repo``."""
    files = present(repo, sources)
    if not files:
        return Counter()
    _, config = _configs(session)
    with session.chdir(repo):
        output = session.run("bandit", *bandit_arguments(config, files), silent=True, success_codes=[0, 1], stderr=None)
    return bandit_findings(str(output))


def fail_on_new(session: nox.Session, tool: str, version: str, added: list[str]) -> None:
    """Log each finding ``tool`` has on the patched checkout and not on the base; fail the session if there is one."""
    for finding in added:
        session.log(f"{version}: NEW {tool} finding: {finding}")
    if added:
        session.error(f"{version}: the series adds {len(added)} {tool} finding(s) with upstream's settings")
    session.log(f"{version}: the series adds no {tool} finding with upstream's settings")


def lint_gate(session: nox.Session, bases: list[Base]) -> None:
    """Bandit with upstream's settings on the source files the series touches: nothing new versus each base."""
    install(session, BANDIT)
    for version, base, patched in bases:
        sources = gated_sources(patched.touched_python_files())
        added = new_errors(bandit_run(session, base, sources), bandit_run(session, patched.path, sources))
        fail_on_new(session, "bandit", version, added)


def mypy_checks(
    session: nox.Session, version: str, base: Path, patched: PatchedCheckout, environment: str
) -> list[ToolRun]:
    """Mypy on the tests the series touches, in the base and in the patched checkout, each with its own core installed.

    A checkout's findings are kept by content (see ``mypy_key``); one that has none of those tests needs no core (mypy
    does not run). Mypy must be installed already, and ``environment`` describe the session's venv
    (``glue.environment``).
    """
    tests = gated_tests(patched.touched_python_files())
    return [
        ToolRun(
            "mypy", repo, mypy_key(repo, tests, environment), repo if present(repo, tests) else None,
            partial(mypy_run, session, repo, tests, version),
        )
        for repo in (base, patched.path)
    ]  # fmt: skip


def patch_gate_checks(
    session: nox.Session, version: str, patched: PatchedCheckout, series: Series
) -> dict[str, list[Check]]:
    """Per applied patch, mypy and bandit on its own prefix: its commit against its parent."""
    install(session, MYPY, BANDIT)
    repo = scratch(session) / f"gate-prefixes-{version}"
    steps = clone_prefixes(patched, repo)
    checks: dict[str, list[Check]] = {}
    for step in steps:
        patch = series.get(step.name)
        if patch is None or patch.is_backport:
            continue
        tests, sources = gated_tests(patch.paths), gated_sources(patch.paths)
        found: list[tuple[Counter[str], Counter[str]]] = []
        for commit in (step.parent, step.commit):
            check_out(repo, commit)
            if tests:  # mypy sees agent_framework as installed, so install this prefix's
                install_core(session, repo)
            found.append((mypy_run(session, repo, tests, f"prefix-{version}"), bandit_run(session, repo, sources)))
        checks[patch.name] = [
            gate_check("mypy", version, tests, new_errors(found[0][0], found[1][0])),
            gate_check("bandit", version, sources, new_errors(found[0][1], found[1][1])),
        ]
    return checks
