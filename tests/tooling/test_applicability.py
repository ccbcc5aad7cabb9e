"""The applicability matrix: past a conflict, each patch says whether it would apply to the target on its own."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from scripts.validate.applicability import applicability
from tests.tooling.helpers import RUNNER_FILE, RUNNER_LINES, SeriesBuilder, commit_all, write_lines

FIXED = ["fixed 1", *RUNNER_LINES[1:]]


def test_patches_past_a_conflict_say_whether_they_apply_on_their_own(
    framework: Path, series: SeriesBuilder, env: dict[str, str]
) -> None:
    series.add("fix-one", FIXED)
    series.add("fix-end", [*FIXED[:-1], "fixed 30"])
    series.add("fix-start-again", ["fixed again 1", *FIXED[1:-1], "fixed 30"])
    write_lines(framework, RUNNER_FILE, ["upstream 1", *RUNNER_LINES[1:]])
    commit_all(framework, "Upstream edits the first line")

    rows = cast("list[dict[str, str]]", applicability([("older", framework)])["rows"])

    assert [(row["patch"], row["outcome"], row["detail"].split(":")[0]) for row in rows] == [
        ("0001-fix-one.patch", "conflict", f"{RUNNER_FILE}, hunk @@ -1,4 +1,4 @@"),
        ("0002-fix-end.patch", "not reached", "an earlier patch conflicts; on its own"),
        ("0003-fix-start-again.patch", "not reached", "an earlier patch conflicts; on its own"),
    ]
    assert rows[1]["detail"] == "an earlier patch conflicts; on its own: applied clean"
    assert rows[2]["detail"].startswith(f"an earlier patch conflicts; on its own: conflict: {RUNNER_FILE}, hunk")
