"""What a patch file says about itself, as the patch guide shows it: subject, trailers, files, regression tests."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scripts.sources.checkout import CORE_PACKAGE
from scripts.series.patch import PatchInfo, read_patch_info

DIFF_HEADER = re.compile(r"^diff --git a/\S+ b/(?P<path>\S+)$")
ADDED_TEST = re.compile(r"^\+(?:async )?def (?P<name>test_\w+)\(")


@dataclass(frozen=True)
class PatchSummary:
    """A patch's metadata, the non-test files it changes and the test functions it adds (``file::name``)."""

    info: PatchInfo
    changes: tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def anchor(self) -> str:
        """The id of the patch's entry in the patch guide: its file name without ``.patch``."""
        return self.info.path.stem


def summarize(patch: Path) -> PatchSummary:
    """Read ``patch``: its metadata, the files its diff touches, and the test functions it adds."""
    files: list[str] = []
    tests: list[str] = []
    for line in patch.read_text().splitlines():
        header = DIFF_HEADER.match(line)
        if header:
            files.append(header["path"])
            continue
        test = ADDED_TEST.match(line)
        if test and files and Path(files[-1]).name.startswith("test_"):
            tests.append(f"{Path(files[-1]).relative_to(CORE_PACKAGE)}::{test['name']}")
    changes = tuple(name for name in files if not Path(name).name.startswith("test_"))
    return PatchSummary(read_patch_info(patch), changes, tuple(tests))


def render_entry(summary: PatchSummary, number: int) -> str:
    """The heading and fact list of one patch guide entry (the prose below it is written by hand)."""
    info = summary.info
    title = info.subject.removeprefix("Python: ")
    facts = [f"- **Patch file:** `{info.path.name}` (number {number} in the series)"]
    facts += [f"- **Upstream status:** {info.upstream_status}"]
    facts += [f"- **{key}:** {', '.join(info.values(key))}" for key in ("Fixes", "Refs") if info.values(key)]
    facts += [f"- **Changes:** {', '.join(f'`{name}`' for name in summary.changes)}"]
    files = dict.fromkeys(test.split("::")[0] for test in summary.tests)
    for name in files:
        tests = [test.split("::")[1] for test in summary.tests if test.startswith(f"{name}::")]
        facts += [f"- **Regression tests** in `{name}`:", *(f"    - `{test}`" for test in tests)]
    return "\n".join([f"## {number}. {title} {{#{summary.anchor}}}", "", *facts])
