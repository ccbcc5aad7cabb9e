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


def _by_item(checks: list[Check]) -> dict[Item, list[Check]]:
    """Each item's checks, in the template's order; an item no tool checks gets :data:`NOT_CHECKED`."""
    return {
        item: [check for check in checks if check.item is item] or [Check(item, NOT_CHECKED, None)] for item in Item
    }


def render_checklist(checks: list[Check]) -> str:
    """Every item, ticked when all its checks ran and passed, with the checks that ran listed under it.

    The PR body is for upstream's maintainers: what was not run, and how to run it, is the submitter's list
    (:func:`render_before_sending`).
    """
    lines: list[str] = []
    for item, mine in _by_item(checks).items():
        ticked = all(check.passed is True for check in mine)
        lines.append(f"- [{'x' if ticked else ' '}] {item.value}")
        ran = [check for check in mine if check.passed is not None]
        lines += [f"  - {'passed' if check.passed else 'FAILED'}: {check.text}" for check in ran]
    return "\n".join(lines)


def render_before_sending(checks: list[Check]) -> str:
    """The submitter's list: each checklist item left unticked, with what is still to run or confirm for it."""
    lines = [
        "# Before sending",
        "",
        "The PR body's checklist ticks an item only where every check for it ran and passed. Run or confirm these,",
        "then tick the item in `body.md`:",
        "",
    ]
    for item, mine in _by_item(checks).items():
        if open_ones := [check for check in mine if check.passed is not True]:
            lines.append(f"- [ ] {item.value}")
            lines += [f"  - {'FAILED' if check.passed is False else 'not run'}: {check.text}" for check in open_ones]
    return "\n".join(lines) + "\n"


def passed_checks(checks: list[Check]) -> list[str]:
    """The texts of the checks that ran and passed: what was verified by running."""
    return [check.text for check in checks if check.passed is True]
