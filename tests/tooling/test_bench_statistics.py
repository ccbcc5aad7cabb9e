"""The benchmark's statistics: the ratio summary of paired timings and the growth of traced memory."""

from __future__ import annotations

from dataclasses import astuple

import pytest

from scripts.bench.measure import ALLOWANCE_BYTES, FLAT_BYTES_PER_RUN, Growth, RatioSummary, growth, ratio_summary


def test_ratio_summary_is_median_quartiles_and_range_of_the_pair_ratios() -> None:
    summary = ratio_summary([2.0, 2.0, 2.0, 2.0, 2.0], [2.0, 2.2, 2.4, 2.6, 2.8])
    rounded = RatioSummary(*(round(value, 9) for value in astuple(summary)))
    assert rounded == RatioSummary(median=1.2, q1=1.1, q3=1.3, low=1.0, high=1.4)


def test_ratio_summary_pairs_in_order_and_of_one_pair_is_that_ratio() -> None:
    assert ratio_summary([4.0], [5.0]) == RatioSummary(1.25, 1.25, 1.25, 1.25, 1.25)
    assert (ratio_summary([1.0, 2.0], [2.0, 2.0]).low, ratio_summary([1.0, 2.0], [2.0, 2.0]).high) == (1.0, 2.0)
    with pytest.raises(ValueError, match=r"shorter|longer"):
        ratio_summary([1.0, 2.0], [1.0])


def test_growth_is_measured_between_the_first_and_the_last_checkpoint() -> None:
    points = [[100, 5_000, 9_000], [1_100, 5_500, 9_000], [10_100, 6_000, 12_000]]
    assert growth(points) == Growth(runs=10_000, current=1_000, peak=3_000)
    assert growth(points).per_run() == {"current": 0.1, "peak": 0.3}


def test_growth_is_flat_below_a_per_run_slope_plus_an_allowance() -> None:
    runs = 10_000
    limit = FLAT_BYTES_PER_RUN * runs + ALLOWANCE_BYTES
    assert Growth(runs, current=int(limit) - 1, peak=0).flat
    assert not Growth(runs, current=0, peak=int(limit) + 1).flat
