"""PR material per patch: title, body sections, checklist ticked only on passed checks, mbox, range-diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.listing import read_series
from scripts.ship.checklist import Check, Item, render_checklist
from scripts.ship.export import export_series
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder

FIRST = ["changed 1", *RUNNER_LINES[1:]]
SECOND = [*FIRST[:19], "changed 20", *FIRST[20:]]
APPLIED = "Upstream-Status: applied upstream in main after python-1.23.0 (#10204)"


def make_series(series: SeriesBuilder) -> None:
    series.add("first", FIRST, "Fixes: #9473\nRefs: #7859\nUpstream-Status: not forwarded")
    series.add("second", SECOND, f"Refs: #9473\n{APPLIED}")


def export(framework: Path, patches: Path, out: Path) -> list[dict[str, str]]:
    checks = {"0001-first.patch": [Check(Item.UNIT_TESTS, "3 new tests pass", True)]}
    return export_series(read_series(patches), out, checks, framework)


def test_each_patch_gets_title_body_and_mbox(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path
) -> None:
    make_series(series)
    rows = export(framework, patches, tmp_path / "export")
    first = tmp_path / "export" / "0001-first"
    assert (first / "title.txt").read_text() == "Python: first\n"
    assert (first / "0001-first.patch").read_bytes() == (patches / "0001-first.patch").read_bytes()
    body = (first / "body.md").read_text()
    for section in ("Motivation & Context", "Description & Review Guide", "Related Issue", "Contribution Checklist"):
        assert f"### {section}\n" in body
    assert "Fixes #9473\n\nRelated: #7859" in body
    assert "- [x] All unit tests pass, and I have added new tests where possible\n  - passed: 3 new tests pass" in body
    assert "- [ ] The code builds clean" in body
    assert not (first / "range-diff.txt").exists()
    assert [row["since last export"] for row in rows] == ["no earlier version exported", "no earlier version exported"]
    summary = json.loads((tmp_path / "export" / "series.json").read_text())
    assert summary["patches"][1]["upstream state"] == "applied upstream"
    assert summary["patches"][1]["upstream detail"] == "main after python-1.23.0 (#10204)"
    assert "do not send: applied upstream in main after python-1.23.0 (#10204)" in rows[1]["what to do"]
    second_body = (tmp_path / "export" / "0002-second" / "body.md").read_text()
    assert "It applies on top of `0001-first`" in second_body


def test_changed_patch_gets_a_range_diff_until_the_series_changes_again(
    framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path
) -> None:
    make_series(series)
    out = tmp_path / "export"
    export(framework, patches, out)
    second = patches / "0002-second.patch"
    second.write_text(second.read_text().replace("Why it changes.", "Why it changes, reworded."))
    for _ in range(2):  # exporting the same series again still compares it with the previous one
        rows = export(framework, patches, out)
        assert [row["since last export"] for row in rows] == ["unchanged", "changed"]
        range_diff = (out / "0002-second" / "range-diff.txt").read_text()
        assert "-    Why it changes." in range_diff
        assert "+    Why it changes, reworded." in range_diff
        assert not (out / "0001-first" / "range-diff.txt").exists()


def test_bad_patch_changes_nothing(framework: Path, series: SeriesBuilder, patches: Path, tmp_path: Path) -> None:
    make_series(series)
    out = tmp_path / "export"
    export(framework, patches, out)
    before = {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}
    series.add("third", [*SECOND[:25], "changed 26", *SECOND[26:]], "Upstream-Status: sent somewhere")
    with pytest.raises(RunguardError, match=r"0003-third\.patch"):
        export(framework, patches, out)
    assert {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()} == before


def test_item_is_ticked_only_when_every_check_ran_and_passed() -> None:
    text = render_checklist(
        [
            Check(Item.BUILDS_CLEAN, "ruff", True),
            Check(Item.BUILDS_CLEAN, "pyright", None),
            Check(Item.UNIT_TESTS, "new tests", True),
            Check(Item.LINKED_ISSUE, "Fixes", False),
        ]
    )
    assert "- [ ] The code builds clean" in text
    assert "  - not run: pyright" in text
    assert "- [x] All unit tests pass" in text
    assert "  - FAILED: Fixes" in text
    assert "- [ ] **This is not a breaking change.**\n  - not run: not checked by a tool" in text
