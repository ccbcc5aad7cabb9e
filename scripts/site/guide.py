"""A patch's entry in the patch guide: the heading and the facts the patch file states (subject, trailers, files,
regression tests); the prose below it is written by hand."""

from __future__ import annotations

from scripts.series.patch import Patch


def render_entry(patch: Patch, number: int) -> str:
    """The heading and fact list of one patch guide entry; its id is the patch's file name without ``.patch``."""
    title = patch.subject.removeprefix("Python: ")
    facts = [f"- **Patch file:** `{patch.name}` (number {number} in the series)"]
    facts += [f"- **Upstream status:** {patch.upstream_status}"]
    facts += [f"- **{key}:** {', '.join(patch.values(key))}" for key in ("Fixes", "Refs") if patch.values(key)]
    changes = [change.path for change in patch.changes if not change.is_test]
    facts += [f"- **Changes:** {', '.join(f'`{name}`' for name in changes)}"]
    by_file: dict[str, list[str]] = {}
    for test in patch.test_functions:
        file, _, name = test.partition("::")
        by_file.setdefault(file, []).append(name)
    for file, names in by_file.items():
        facts += [f"- **Regression tests** in `{file}`:", *(f"    - `{name}`" for name in names)]
    return "\n".join([f"## {number}. {title} {{#{patch.stem}}}", "", *facts])
