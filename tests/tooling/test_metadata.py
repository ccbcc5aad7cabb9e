"""Patch metadata read from the mbox with git: subject, trailers, upstream status, detectors."""

from __future__ import annotations

import pytest

from scripts.series.errors import RunguardError
from scripts.series.patch import Detector, read_patch_info
from tests.tooling.helpers import RUNNER_LINES, SeriesBuilder

TRAILERS = (
    "Fixes: #9473\nRefs: #10164\nUpstream-Status: forwarded https://example.invalid/pull/1\n"
    "Upstream-Detect: python/packages/core/agent_framework/_workflows/_runner.py owner = run_id"
)


def test_subject_and_trailers(series: SeriesBuilder) -> None:
    info = read_patch_info(series.add("guard-runs", ["changed", *RUNNER_LINES[1:]], TRAILERS))
    assert info.subject == "Python: guard-runs"
    assert info.values("fixes") == ["#9473"]
    assert info.values("Refs") == ["#10164"]
    assert info.upstream_status == "forwarded https://example.invalid/pull/1"
    assert info.detectors == [Detector("python/packages/core/agent_framework/_workflows/_runner.py", "owner = run_id")]


@pytest.mark.parametrize(
    "trailers",
    ["Fixes: #1", "Upstream-Status: sent somewhere", "Upstream-Status: not forwarded\nUpstream-Detect: only-a-path"],
)
def test_bad_trailers_are_errors(series: SeriesBuilder, trailers: str) -> None:
    patch = series.add("bad", ["changed", *RUNNER_LINES[1:]], trailers)
    with pytest.raises(RunguardError, match=r"0001-bad\.patch"):
        read_patch_info(patch)


def test_applied_upstream_status(series: SeriesBuilder) -> None:
    patch = series.add("old", ["changed", *RUNNER_LINES[1:]], "Upstream-Status: applied upstream in 1.24.0")
    assert read_patch_info(patch).upstream_status == "applied upstream in 1.24.0"


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("not forwarded", ("not forwarded", "")),
        ("forwarded https://example.invalid/pull/2", ("forwarded", "https://example.invalid/pull/2")),
        (
            "applied upstream in main after python-1.23.0 (#10204)",
            ("applied upstream", "main after python-1.23.0 (#10204)"),
        ),
    ],
)
def test_upstream_state_is_machine_readable(series: SeriesBuilder, status: str, state: tuple[str, str]) -> None:
    patch = series.add("any", ["changed", *RUNNER_LINES[1:]], f"Upstream-Status: {status}")
    assert read_patch_info(patch).upstream_state == state
