"""The docs site's rendering of data files: the contract in docs/validation/data-formats.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scripts.site.tables import DataError, render_dataset

SERIES = "0123456789ab"
STAMP = {"at": "2026-11-29T19:30:00+00:00", "on": "Linux x86_64", "series": SERIES, "command": "python3 run.py -s X"}


def _write(directory: Path, name: str, body: object) -> Path:
    (directory / f"{name}.json").write_text(json.dumps(body))
    return directory


def test_a_missing_file_says_which_session_produces_it(tmp_path: Path) -> None:
    text = render_dataset("stress", tmp_path, SERIES)
    assert "Not yet produced" in text
    assert "python3 run.py -s stress" in text


def test_rows_render_with_the_stamp_and_extra_fields_are_ignored(tmp_path: Path) -> None:
    row = {"python": "3.12", "base": "1.22.0", "workload": "chain", "benchmark": "graph chain", "ratio": 1.0041,
           "extra": "ignored"}  # fmt: skip
    data = _write(tmp_path, "bench", {"produced": STAMP, "rows": [row], "summary": "Worst time ratio 1.004."})
    text = render_dataset("bench", data, SERIES)
    assert "Produced **2026-11-29T19:30:00+00:00** on Linux x86_64" in text
    assert "1 of 1 rows within their goals; worst ratio 1.004 (chain, Python 3.12, base 1.22.0; goal 1.02)." in text
    assert "| Python | base | workload | measures | patched / unpatched | goal | verdict |" in text
    assert "| 3.12 | 1.22.0 | chain | graph chain | 1.004 | at most 1.02 | within goal |" in text
    assert "ignored" not in text
    assert "spread" not in text, "an optional column shows only when a row has it"
    assert "older series" not in text


def test_a_stored_summary_is_shown_above_the_table(tmp_path: Path) -> None:
    row = {"run": "cold", "seconds": 120.0, "goal_seconds": 150, "meets_goal": True}
    data = _write(tmp_path, "validation-timing", {"produced": STAMP, "rows": [row], "summary": "It took 120 s."})
    assert "It took 120 s.\n\n| run |" in render_dataset("validation-timing", data, SERIES)


def test_a_benchmark_above_its_goal_is_marked_and_a_short_run_says_so(tmp_path: Path) -> None:
    measured = {"python": "3.10", "base": "1.22.0"}
    rows = [
        {**measured, "workload": "chain", "benchmark": "chain", "kind": "time", "ratio": 1.005, "pairs": 3},
        {**measured, "workload": "response_stream", "benchmark": "tight", "kind": "time", "ratio": 1.049, "pairs": 3},
        {**measured, "workload": "agent_stream", "benchmark": "agent", "kind": "time", "ratio": 1.798, "pairs": 3},
        {**measured, "workload": "graph_memory", "benchmark": "memory", "kind": "memory", "ratio": 1.0, "flat": True},
    ]
    stored = "Worst time ratio 1.798 (goal: at most 1.01)"
    data = _write(tmp_path, "bench", {"produced": STAMP, "rows": rows, "summary": stored})
    text = render_dataset("bench", data, SERIES)
    assert (
        "3 of 4 rows within their goals; worst ratio 1.798 (agent_stream, Python 3.10, base 1.22.0; goal 1.01)." in text
    )
    assert "Measured with 3 interleaved pair(s) per workload, fewer than a full run's 11." in text
    assert "| 3.10 | 1.22.0 | response_stream | tight | 1.049 | at most 1.05 | within goal |" in text
    assert "| 3.10 | 1.22.0 | agent_stream | agent | 1.798 | at most 1.01 | **misses** |" in text
    assert "| 3.10 | 1.22.0 | graph_memory | memory | 1.000 | flat memory | within goal |" in text
    assert stored not in text


def test_the_timing_file_names_the_timing_session(tmp_path: Path) -> None:
    assert "python3 run.py -s timing" in render_dataset("validation-timing", tmp_path, SERIES)
    stale: dict[str, object] = {"produced": {**STAMP, "series": "ba9876543210"}, "rows": []}
    text = render_dataset("validation-timing", _write(tmp_path, "validation-timing", stale), SERIES)
    assert "Run `python3 run.py -s timing -- --record` again" in text


def test_the_timing_table_shows_the_load_each_run_started_under(tmp_path: Path) -> None:
    row = {"run": "warm", "seconds": 41.5, "goal_seconds": 60, "meets_goal": True, "load_before": 2.5}
    text = render_dataset(
        "validation-timing", _write(tmp_path, "validation-timing", {"produced": STAMP, "rows": [row]}), SERIES
    )
    assert "| run | seconds | goal (seconds) | meets the goal | load average before (1 min) |" in text
    assert "| warm | 41.500 | 60 | yes | 2.500 |" in text


def test_a_file_from_another_series_is_flagged_as_stale(tmp_path: Path) -> None:
    data = _write(tmp_path, "stress", {"produced": {**STAMP, "series": "ffffffffffff"}, "rows": []})
    assert "Produced with an older series" in render_dataset("stress", data, SERIES)


def test_stress_lists_each_run_and_how_soon_each_member_was_found(tmp_path: Path) -> None:
    rows = [
        {"base": "1.22.0", "variant": "patched", "family": "graph", "schedules": 10000, "violating_schedules": 0},
        {
            "base": "1.22.0", "variant": "unpatched", "family": "graph", "schedules": 2000, "violating_schedules": 72,
            "members_found_after": {"G1 late discard": 919}, "python": "3.12.1",
        },
    ]  # fmt: skip
    text = render_dataset("stress", _write(tmp_path, "stress", {"produced": STAMP, "rows": rows}), SERIES)
    assert "| 1.22.0 | - | patched | graph | 10,000 | 0 |" in text  # a row from before the matrix names no Python
    assert "| 1.22.0 | 3.12.1 | unpatched | graph | G1 late discard | 919 |" in text


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"rows": []}, "'produced' must be an object"),
        ({"produced": {"at": "now"}, "rows": []}, "has no 'on'"),
        ({"produced": STAMP}, "'rows' must be a list"),
        ({"produced": STAMP, "rows": [{"base": "1.22.0", "workload": "chain"}]}, "rows[0] has no 'python', 'ratio'"),
        (
            {"produced": STAMP, "rows": [{"base": "1.22.0", "python": "3.11", "workload": "loop", "ratio": 1.0}]},
            "bench.json: bench row 'loop': no goal for this workload",
        ),
    ],
)
def test_a_file_without_a_required_key_names_it(tmp_path: Path, body: object, message: str) -> None:
    with pytest.raises(DataError, match=re.escape(message)):
        render_dataset("bench", _write(tmp_path, "bench", body), SERIES)


def test_redgreen_renders_the_redgreen_sessions_evidence(tmp_path: Path) -> None:
    test = "tests.workflow.test_x::test_y"
    proven = {"test": test, "red": {"ok": True, "detail": "lost the write"}, "green": {"ok": True, "detail": "passed"}}
    unproven = {**proven, "test": "tests.workflow.test_x::test_z", "green": {"ok": False, "detail": "AssertionError"}}
    evidence: dict[str, object] = {
        "produced": STAMP,
        "python": "3.11.7",
        "ok": False,
        "patches": [
            {"base": "1.22.0", "patch": "0001-a.patch", "tests": [proven, unproven]},
            {"base": "1.22.0", "patch": "0002-b.patch", "tests": []},
        ],
    }
    text = render_dataset("redgreen", _write(tmp_path, "redgreen", evidence), SERIES)
    assert "Produced **2026-11-29T19:30:00+00:00** on Linux x86_64" in text
    assert "older series" not in text
    assert "| base | Python 3.11.7 |" in text
    assert "| 1.22.0 | **FAIL:** 1/3 proven |" in text
    assert "| 1.22.0 | `0001-a.patch` | `test_x::test_y` | lost the write | proven |" in text
    assert "| `test_x::test_z` | lost the write | 3.11.7: green **FAIL:** AssertionError |" in text
    assert "| 1.22.0 | `0002-b.patch` | - | - | 3.11.7: **FAIL:** no test ran |" in text
    assert "Every test failed without its patch" not in text


def test_redgreen_is_a_base_by_python_matrix(tmp_path: Path) -> None:
    proven = {"test": "t::a", "red": {"ok": True, "detail": "lost"}, "green": {"ok": True, "detail": "passed"}}
    skipped = {**proven, "red": {"ok": False, "detail": "skipped"}, "skipped": "no count on 3.10"}
    patches = [
        {"python": "3.10.13", "base": "1.22.0", "patch": "0001-a.patch", "tests": [skipped]},
        {"python": "3.12.1", "base": "1.22.0", "patch": "0001-a.patch", "tests": [proven]},
    ]
    evidence = {"produced": STAMP, "ok": True, "patches": patches}
    text = render_dataset("redgreen", _write(tmp_path, "redgreen", evidence), SERIES)
    assert "**Every test failed without its patch and passed with it, on every Python.**" in text
    assert "| base | Python 3.10.13 | Python 3.12.1 |" in text
    assert "| 1.22.0 | 0/1 proven, 1 skipped (not for this Python) | 1/1 proven |" in text
    assert "| 1.22.0 | `0001-a.patch` | `t::a` | skipped | 3.10.13: skipped: no count on 3.10; 3.12.1: proven |" in text


def test_redgreen_without_its_patches_list_names_it(tmp_path: Path) -> None:
    data = _write(tmp_path, "redgreen", {"produced": STAMP, "rows": []})
    with pytest.raises(DataError, match="'patches' must be a list"):
        render_dataset("redgreen", data, SERIES)


def test_applicability_is_a_patch_by_target_matrix_with_details_below(tmp_path: Path) -> None:
    patches = [{"name": "0001-a.patch", "upstream_status": "not forwarded"}]
    rows = [
        {"target": "1.22.0", "patch": "0001-a.patch", "outcome": "applied clean", "detail": ""},
        {"target": "1.23.0", "patch": "0001-a.patch", "outcome": "applied with offset", "detail": "Hunk #1 at 12"},
    ]
    data = _write(tmp_path, "applicability", {"produced": STAMP, "patches": patches, "rows": rows})
    text = render_dataset("applicability", data, SERIES)
    assert "| patch | upstream status | 1.22.0 | 1.23.0 |" in text
    assert "| `0001-a.patch` | not forwarded | applied clean | applied with offset |" in text
    assert "- 1.23.0, `0001-a.patch`: Hunk #1 at 12" in text


def test_an_unknown_data_name_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no renderer"):
        render_dataset("nonsense", tmp_path, SERIES)


def test_repro_renders_each_script_base_and_package(tmp_path: Path) -> None:
    row = {"slug": "leak", "base": "1.22.0", "variant": "unpatched", "exit_code": 1, "ok": True,
           "observed": "observed: lost", "expected": "expected: kept", "script_sha256": "ab"}  # fmt: skip
    text = render_dataset(
        "repro", _write(tmp_path, "repro", {"produced": STAMP, "python": "3.11.7", "rows": [row]}), SERIES
    )
    assert "| leak | 1.22.0 | unpatched | 1 |" in text
    assert "observed: lost" in text


def test_redgreen_details_keep_one_column_for_the_pythons(tmp_path: Path) -> None:
    proven = {"test": "t::a", "red": {"ok": True, "detail": "lost"}, "green": {"ok": True, "detail": "passed"}}
    patches = [
        {"python": python, "base": "1.22.0", "patch": "0001-a.patch", "tests": [proven]}
        for python in ("3.10.13", "3.11.7", "3.12.1", "3.13.0")
    ]
    text = render_dataset("redgreen", _write(tmp_path, "redgreen", {"produced": STAMP, "patches": patches}), SERIES)
    assert "| base | patch | test | without the patch (red) | on each Python |" in text
    assert "| 1.22.0 | `0001-a.patch` | `t::a` | lost | proven on every Python |" in text
