"""Upstream's contribution checklist, ticked only where a check that was actually run passed."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Item(Enum):
    """The items of the Contribution Checklist in upstream's pull request template, in its order."""

    BUILDS_CLEAN = "The code builds clean without any errors or warnings"
    UNIT_TESTS = "All unit tests pass, and I have added new tests where possible"
    GUIDELINES = (
        "The PR follows the [Contribution Guidelines]"
        "(https://github.com/microsoft/agent-framework/blob/main/CONTRIBUTING.md)"
    )
    LINKED_ISSUE = (
        "This PR is linked to an issue and there is no other open PR for this issue (see Related Issue above)."
    )
    NOT_BREAKING = "**This is not a breaking change.**"


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
