"""A patch's entry in the patch guide: the heading and the facts the patch file states (subject, trailers, files,
regression tests); the prose below it is written by hand."""

from __future__ import annotations

from scripts.series.errors import RunguardError
from scripts.series.patch import Patch


def _label(patch: Patch, position: int) -> int:
    """The number the docs call a patch by: its file's (one number per patch), else its place in the series."""
    return position if patch.number is None else patch.number


def render_entry(patch: Patch, position: int) -> str:
    """The heading and fact list of one patch guide entry (``position``: its place in ``patches/series``, from 1).

    Its id is the patch's file name without ``.patch``.
    """
    title = patch.subject.removeprefix("Python: ")
    facts = [f"- **Patch file:** `{patch.name}` (applied as number {position} of `patches/series`)"]
    facts += [f"- **Upstream status:** {patch.upstream_status}"]
    facts += [f"- **{key}:** {', '.join(patch.values(key))}" for key in ("Fixes", "Refs") if patch.values(key)]
    changes = [change.path for change in patch.changes if not change.is_test]
    facts += [f"- **Changes:** {', '.join(f'`{name}`' for name in changes)}"]
    source, tests = patch.source_lines, patch.test_lines
    facts += [f"- **Lines:** source +{source[0]}/-{source[1]} under `agent_framework/`, tests +{tests[0]}/-{tests[1]}"]
    if patch.is_backport:
        facts += ["- **Backport:** never sent as a PR; dropped once every base has it"]
    by_file: dict[str, list[str]] = {}
    for test in patch.test_functions:
        file, _, name = test.partition("::")
        by_file.setdefault(file, []).append(name)
    for file, names in by_file.items():
        facts += [f"- **Regression tests** in `{file}`:", *(f"    - `{name}`" for name in names)]
    return "\n".join([f"## {_label(patch, position)}. {title} {{#{patch.stem}}}", "", *facts])


def render_review_heading(patch: Patch, position: int) -> str:
    """The heading of one PR's section in the review record, linking its patch guide entry; backports have none."""
    if patch.is_backport:
        raise RunguardError(f"{patch.name} is a backport: it is never sent, so it gets no review section")
    title = patch.subject.removeprefix("Python: ")
    return "\n".join([
        f"## {_label(patch, position)}. {title} {{#review-{patch.stem}}}",
        "",
        f"Patch guide: [{patch.stem}](../patches.md#{patch.stem}); exported as `export/{patch.stem}/body.md`.",
    ])  # fmt: skip
