"""A patch as an upstream pull request: its title, and a body in the sections of upstream's PR template."""

from __future__ import annotations

from scripts.series.patch import FileChange, Patch
from scripts.ship.checklist import Check, render_checklist

TESTS_DIR = "/tests/"


def pr_title(patch: Patch) -> str:
    """The PR title: the patch subject, which already carries upstream's ``Python:`` prefix."""
    return patch.subject


def _files(changes: list[FileChange]) -> str:
    return ", ".join(f"`{change.path}` (+{change.added}/-{change.deleted})" for change in changes) or "none"


def _description(patch: Patch, depends_on: list[str]) -> list[str]:
    sources = [change for change in patch.changes if TESTS_DIR not in change.path]
    tests = [change for change in patch.changes if TESTS_DIR in change.path]
    impact = f"Changes {_files(sources)}; tests: {_files(tests)}."
    if depends_on:
        impact += f" It applies on top of {', '.join(depends_on)}, which change(s) the same files: send those first."
    change = patch.paragraphs[-1] if len(patch.paragraphs) > 1 else patch.subject.removeprefix("Python: ")
    change = " ".join(change.split())  # one line, so the paragraph stays inside its list item
    return [
        f"- **What are the major changes?** {change}",
        f"- **What is the impact of these changes?** {impact}",
        f"- **What do you want reviewers to focus on?** The changes to {_files(sources)}.",
    ]


def _related(patch: Patch) -> list[str]:
    lines = [f"Fixes {issue}" for issue in patch.values("Fixes")]
    lines += [f"Related: {issue}" for issue in patch.values("Refs")]
    if not patch.values("Fixes"):
        lines.append("No `Fixes:` trailer: link the issue this fixes before sending, or the PR may be closed.")
    return lines


def pr_body(patch: Patch, depends_on: list[str], checks: list[Check]) -> str:
    """The PR body: motivation and description from the patch, related issues from its trailers, the checklist."""
    motivation = patch.paragraphs[:-1] if len(patch.paragraphs) > 1 else patch.paragraphs
    sections = [
        "### Motivation & Context",
        "\n\n".join(motivation),
        "### Description & Review Guide",
        "\n".join(_description(patch, depends_on)),
        "### Related Issue",
        "\n\n".join(_related(patch)),
        "### Contribution Checklist",
        render_checklist(checks),
    ]
    return "\n\n".join(sections) + "\n"
