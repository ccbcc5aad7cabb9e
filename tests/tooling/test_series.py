"""The series and bases files: quilt format, comments, and the inconsistencies that are errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.series.errors import RunguardError
from scripts.series.listing import read_bases, read_series
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder


def test_empty_series_is_valid(patches: Path) -> None:
    assert read_series(patches).patches == ()


def test_series_keeps_order_and_ignores_comments(series: SeriesBuilder, patches: Path) -> None:
    first = series.add("first", ["changed", *RUNNER_LINES[1:]])
    second = series.add("second", ["changed", "again", *RUNNER_LINES[2:]])
    (patches / "series").write_text(f"# header\n{first.name}  # trailing comment\n\n{second.name}\n")
    assert [patch.path for patch in read_series(patches).patches] == [first, second]


def test_digest_follows_patch_contents(series: SeriesBuilder, patches: Path) -> None:
    patch = series.add("first", ["changed", *RUNNER_LINES[1:]])
    before = read_series(patches).digest()
    patch.write_text(patch.read_text() + "\n")
    assert read_series(patches).digest() != before


@pytest.mark.parametrize(
    ("series_text", "message"),
    [
        ("0001-missing.patch\n", "series lists 0001-missing.patch, which does not exist"),
        ("0001-first.patch\n0001-first.patch\n", "duplicate entry '0001-first.patch'"),
        ("", "0001-first.patch is in"),
        ("0001-first.patch -p1\n", "expected one name per line"),
    ],
)
def test_inconsistent_series_is_an_error(series: SeriesBuilder, patches: Path, series_text: str, message: str) -> None:
    series.add("first", ["changed", *RUNNER_LINES[1:]])
    (patches / "series").write_text(series_text)
    with pytest.raises(RunguardError, match=message):
        read_series(patches)


def test_every_missing_and_unlisted_patch_is_reported_at_once(series: SeriesBuilder, patches: Path) -> None:
    for name in ("first", "second", "third"):
        series.add(name, [name, *RUNNER_LINES[1:]])
    (patches / "series").write_text("0003-third.patch\n0008-gone.patch\n0009-gone.patch\n")
    with pytest.raises(RunguardError) as raised:
        read_series(patches)
    assert str(raised.value) == (
        f"series lists 0008-gone.patch, 0009-gone.patch, which do not exist in {patches}; "
        f"0001-first.patch, 0002-second.patch are in {patches} but not listed in the series"
    )


def test_missing_series_file_is_an_error(patches: Path) -> None:
    (patches / "series").unlink()
    with pytest.raises(RunguardError, match="series does not exist"):
        read_series(patches)


def test_bases_file(patches: Path) -> None:
    assert read_bases(patches) == ["9.9.9"]
    (patches / "bases").write_text("# none\n")
    with pytest.raises(RunguardError, match="lists no base version"):
        read_bases(patches)
