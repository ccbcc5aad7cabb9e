"""Upstream's contribution checklist, ticked only where a check that was actually run passed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Item(Enum):
    """The items of the Contribution Checklist in upstream's current pull request template, in its order."""

    BUILDS = "The core wheel and source distribution build successfully."
    UNIT_TESTS = "All unit tests pass, and I have added new tests where possible."
    GUIDELINES = (
        "The PR follows the [Contribution Guidelines]"
        "(https://github.com/microsoft/agent-framework/blob/main/CONTRIBUTING.md)."
    )
    LINKED_ISSUE = "This PR links to an issue marked ready-for-implementation by a maintainer."
    NOT_BREAKING = "This is not a breaking change."


@dataclass(frozen=True)
class Check:
    """One piece of evidence for an item: passed, failed, or ``None`` when it was not run (and why, in ``text``)."""

    item: Item
    text: str
    passed: bool | None


NOT_CHECKED = "not checked by a tool: the submitter confirms it before ticking"


def render_checklist(checks: list[Check]) -> str:
    """Every item, ticked when it has checks and all of them ran and passed, with its checks listed under it."""
    lines: list[str] = []
    for item in Item:
        mine = [check for check in checks if check.item is item] or [Check(item, NOT_CHECKED, None)]
        ticked = all(check.passed is True for check in mine)
        lines.append(f"- [{'x' if ticked else ' '}] {item.value}")
        for check in mine:
            mark = {True: "passed", False: "FAILED", None: "not run"}[check.passed]
            lines.append(f"  - {mark}: {check.text}")
    return "\n".join(lines)


def passed_checks(checks: list[Check]) -> list[str]:
    """The texts of the checks that ran and passed: what was verified by running."""
    return [check.text for check in checks if check.passed is True]
