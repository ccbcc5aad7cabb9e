"""A patch as an upstream pull request: its title, and a body in the sections of upstream's current PR template.

The commit message gives the motivation (its first paragraph) and the major changes (the rest);
``patches/pr/<stem>.md`` the impact and the review focus (and optionally ``## Motivation``); the trailers give the
behaviour changes, dependencies and issues.
"""

from __future__ import annotations

from scripts.series.patch import FileChange, Patch
from scripts.ship.checklist import Check, passed_checks, render_checklist

MOTIVATION, IMPACT, REVIEW_FOCUS = "Motivation", "Impact", "Review focus"
ISSUES_DIR = "issues"  # export/issues/<slug>.md


def pr_title(patch: Patch) -> str:
    """The PR title: the patch subject, which already carries upstream's ``Python:`` prefix."""
    return patch.subject


def _files(changes: list[FileChange]) -> str:
    return ", ".join(f"`{change.path}` (+{change.added}/-{change.deleted})" for change in changes) or "none"


def _item(question: str, text: str) -> str:
    """A list item whose answer may have several paragraphs or a list: they are indented under it."""
    indented = "\n".join(f"  {line}" if line else "" for line in text.strip().splitlines()).lstrip()
    return f"- **{question}**\n\n  {indented}" if indented.startswith("- ") else f"- **{question}** {indented}"


def _description(patch: Patch) -> list[str]:
    sources = [change for change in patch.changes if not change.is_test]
    tests = [change for change in patch.changes if change.is_test]
    # The commit message's first paragraph is the problem, which the Motivation section already gives.
    described = patch.paragraphs[1:] or patch.paragraphs
    paragraphs = [" ".join(paragraph.split()) for paragraph in described]  # git's wrapping undone
    changes = "\n\n".join([*paragraphs, f"Source: {_files(sources)}. Tests: {_files(tests)}."])
    return [
        _item("What are the major changes?", changes),
        _item("What is the impact of these changes?", patch.pr_section(IMPACT)),
        _item("What do you want reviewers to focus on?", patch.pr_section(REVIEW_FOCUS)),
    ]


def _depends_on(dependencies: list[Patch]) -> str:
    if not dependencies:
        return "None: this PR applies on its own to upstream's main."
    lines = [f"- `{patch.stem}`: {patch.subject}" for patch in dependencies]
    return "This PR applies on top of these PRs of the series; send them first:\n\n" + "\n".join(lines)


def _related(patch: Patch, drafts: dict[str, str]) -> str:
    lines = [f"Fixes {issue}" for issue in patch.values("Fixes")]
    lines += [f"Related: {issue}" for issue in patch.values("Refs")]
    lines += [
        f"Issue: post `{ISSUES_DIR}/{slug}.md` ({title}) first, as its header says (a comment on the thread it"
        " continues); link that thread here once a maintainer marks it ready-for-implementation."
        for slug, title in drafts.items()
    ]
    return "\n\n".join(lines) or "No linked issue: file one and link it before sending, or the PR may be closed."


def _ai_assistance(checks: list[Check]) -> str:
    verified = len(passed_checks(checks))
    ran = f"the {verified} checks marked passed in the checklist below" if verified else "nothing yet"
    return "\n".join([
        "- [ ] No material AI assistance was used.",
        "- [x] This is an AI-assisted contribution.",
        "",
        "AI assistance details: the fix, its regression tests, the issue reproductions and this description were"
        f" prepared with AI assistance. Verified by running: {ran}.",
    ])  # fmt: skip


def pr_body(patch: Patch, dependencies: list[Patch], checks: list[Check], drafts: dict[str, str]) -> str:
    """The PR body in upstream's current template, plus Behaviour changes and Depends on.

    ``drafts`` maps the patch's issue draft slugs to their titles.
    """
    motivation = dict(patch.pr_sections).get(MOTIVATION) or next(iter(patch.paragraphs), patch.subject)
    behaviour = "\n".join(f"- {change}" for change in patch.behaviour_changes) or "None."
    sections = [
        "### Motivation & Context", motivation,
        "### Description & Review Guide", "\n".join(_description(patch)),
        "### Behaviour changes", behaviour,
        "### Depends on", _depends_on(dependencies),
        "### Related Issue", _related(patch, drafts),
        "### AI Assistance", _ai_assistance(checks),
        "### Contribution Checklist", render_checklist(checks),
    ]  # fmt: skip
    return "\n\n".join(sections) + "\n"
