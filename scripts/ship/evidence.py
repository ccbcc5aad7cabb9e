"""The checklist evidence for one patch, from checks that were run: its tests, ruff, mypy, bandit, the wheel, trailers.

Whatever the export session does not run is listed as not run, with the command that runs it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from scripts.series.listing import Series
from scripts.series.patch import Patch
from scripts.ship.checklist import Check, Item
from scripts.ship.wheel import local_version, series_manifest, wheel_manifest
from scripts.validate.gate import present
from scripts.validate.junit import selects

NOT_RUN = [
    Check(
        Item.BUILDS, "the source distribution: not built by runguard (`uv build --sdist` in python/packages/core)", None
    ),
    Check(
        Item.UNIT_TESTS,
        "upstream's own test suite: not run by export (`python3 run.py -s upstream -- --checkout PATH`)",
        None,
    ),
    Check(
        Item.GUIDELINES,
        "pyright with upstream's settings: not run by export (`python3 run.py -s typecheck`); the guidelines'"
        " other points: the submitter confirms them",
        None,
    ),
]


def new_test_check(version: str, patch: Patch, outcomes: dict[str, str]) -> Check:
    """Whether the tests the patch adds passed on ``version`` (with the series applied).

    Counted by the test functions the patch's diff adds, so that tests a later patch adds to a module this patch
    created are not counted as this patch's.
    """
    added = patch.test_functions or patch.added_tests
    if not added:
        return Check(Item.UNIT_TESTS, "the patch adds no test", None)
    mine = {test: outcome for test, outcome in outcomes.items() if any(selects(one, test) for one in added)}
    failed = sorted(test for test, outcome in mine.items() if outcome in {"failed", "error"})
    if not mine or failed:
        detail = ", ".join(failed) if failed else "none of them ran"
        return Check(Item.UNIT_TESTS, f"the tests this patch adds, on {version}: {detail}", False)
    return Check(
        Item.UNIT_TESTS, f"the {len(mine)} tests this patch adds pass on {version} with the series applied", True
    )


def ruff_check(ruff: Path, patched_repo: Path, version: str, patch: Patch) -> Check:
    """``ruff check`` and ``ruff format --check`` with upstream's settings on the Python files the patch changes."""
    files = present(patched_repo, [change.path for change in patch.changes if change.path.endswith(".py")])
    if not files:
        return Check(Item.GUIDELINES, f"ruff on {version}: the patch changes no Python file", True)
    commands = (["check", "--no-cache", "--quiet"], ["format", "--no-cache", "--check", "--quiet"])
    results = [subprocess.run([ruff, *command, *files], cwd=patched_repo, check=False) for command in commands]
    passed = all(result.returncode == 0 for result in results)
    verdict = "clean" if passed else "reports problems"
    text = f"ruff check and format with upstream's settings on its {len(files)} Python files, on {version}: {verdict}"
    return Check(Item.GUIDELINES, text, passed)


def wheel_check(dist: Path, version: str, series: Series) -> Check:
    """Whether `nox -s wheel` built this series on ``version`` into ``dist`` (the wheel's manifest must match)."""
    wanted = series_manifest(version, series)
    for wheel in sorted(dist.glob(f"agent_framework_core-{local_version(version, series)}-*.whl")):
        if wheel_manifest(wheel) == wanted:
            return Check(Item.BUILDS, f"wheel build (flit_core) on {version}: {wheel.name}", True)
    text = f"wheel build on {version}: no wheel of this series in {dist.name}/ (`python3 run.py -s wheel`)"
    return Check(Item.BUILDS, text, None)


def gate_check(tool: str, version: str, files: list[str], added: list[str]) -> Check:
    """Whether ``tool`` (mypy on the patch's tests, bandit on its source) finds nothing new on the patch's prefix."""
    if not files:
        return Check(Item.GUIDELINES, f"{tool} on {version}: the patch changes no file it checks", True)
    verdict = "no new finding" if not added else f"{len(added)} new finding(s): {'; '.join(added)}"
    text = f"{tool} with upstream's settings on its {len(files)} file(s), on {version} against its parent: {verdict}"
    return Check(Item.GUIDELINES, text, not added)


def issue_checks(patch: Patch) -> list[Check]:
    """The linked issue: a ``Fixes:`` trailer or issue drafts to file; the ready-for-implementation mark is manual."""
    fixes, drafts = patch.values("Fixes"), patch.issue_drafts
    ready = Check(Item.LINKED_ISSUE, "marked ready-for-implementation by a maintainer: the submitter checks", None)
    if fixes:
        return [Check(Item.LINKED_ISSUE, f"linked by the patch's Fixes: trailer: {', '.join(fixes)}", True), ready]
    if drafts:
        return [Check(Item.LINKED_ISSUE, f"issue draft(s) to file first: {', '.join(drafts)}", None), ready]
    return [Check(Item.LINKED_ISSUE, "the patch has no Fixes: trailer and no issue draft", False)]


def breaking_check(patch: Patch) -> Check:
    """No tool decides what is breaking: with behaviour changes listed, a maintainer judges them."""
    count = len(patch.behaviour_changes)
    if not count:
        return Check(Item.NOT_BREAKING, "no Behaviour-Change trailer; the submitter confirms", None)
    return Check(Item.NOT_BREAKING, f"{count} behaviour change(s) listed above: the submitter judges each", None)
