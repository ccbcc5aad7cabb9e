"""The docs site's rendering of data files: the contract in docs/validation/data-formats.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.docs_tables import DataError, render_dataset

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
    row = {"base": "1.22.0", "benchmark": "chain", "ratio": 1.0041, "extra": "ignored"}
    data = _write(tmp_path, "bench", {"produced": STAMP, "rows": [row], "summary": "Worst time ratio 1.004."})
    text = render_dataset("bench", data, SERIES)
    assert "Produced **2026-11-29T19:30:00+00:00** on Linux x86_64" in text
    assert "Worst time ratio 1.004." in text
    assert "| 1.22.0 | chain | 1.004 |" in text
    assert "ignored" not in text
    assert "spread" not in text, "an optional column shows only when a row has it"
    assert "older series" not in text


def test_a_file_from_another_series_is_flagged_as_stale(tmp_path: Path) -> None:
    data = _write(tmp_path, "redgreen", {"produced": {**STAMP, "series": "ffffffffffff"}, "rows": []})
    assert "Produced with an older series" in render_dataset("redgreen", data, SERIES)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"rows": []}, "'produced' must be an object"),
        ({"produced": {"at": "now"}, "rows": []}, "has no 'on'"),
        ({"produced": STAMP}, "'rows' must be a list"),
        (
            {"produced": STAMP, "rows": [{"base": "1.22.0", "patch": "p", "test": "t", "red": "r"}]},
            "rows[0] has no 'green'",
        ),
    ],
)
def test_a_file_without_a_required_key_names_it(tmp_path: Path, body: object, message: str) -> None:
    with pytest.raises(DataError, match=message.replace("[", r"\[").replace("]", r"\]")):
        render_dataset("redgreen", _write(tmp_path, "redgreen", body), SERIES)


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
