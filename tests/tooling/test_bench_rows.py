"""The rows of bench.json: merging a run's rows into the file's, each row's goal and verdict, and the summary."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.bench.runner import MEMORY, TIMED
from scripts.series.datafiles import Row
from scripts.series.errors import RunguardError
from scripts.validate.bench_rows import goal, merge, summary, within_goal
from scripts.validate.goals import BENCH_RATIO_GOALS


def _row(python: str, base: str, workload: str, ratio: float, **more: Any) -> Row:
    return {"python": python, "base": base, "workload": workload, "kind": "time", "ratio": ratio, **more}


def _memory(python: str, base: str, *, flat: bool) -> Row:
    return {**_row(python, base, "graph_memory", 1.0), "kind": "memory", "flat": flat}


def test_every_timed_workload_has_a_goal_and_every_goal_a_workload() -> None:
    assert {workload.name for workload in TIMED} == set(BENCH_RATIO_GOALS)
    assert BENCH_RATIO_GOALS["response_stream"] == 1.05
    assert BENCH_RATIO_GOALS["agent_stream"] == 1.01
    assert {BENCH_RATIO_GOALS[name] for name in ("functional_runs", "graph_runs", "chain", "fan_out")} == {1.02}
    assert all(goal({"kind": "memory", "workload": workload.name}) is None for workload in MEMORY)


def test_a_run_replaces_the_rows_of_the_pairs_it_measured_and_keeps_the_others() -> None:
    earlier = [
        _row("3.12", "1.22.0", "chain", 1.01),
        _row("3.12", "1.23.0", "chain", 1.02),
        _row("3.12", "1.23.0", "fan_out", 1.00),  # a workload the new run of 3.12 / 1.23.0 did not measure: gone too
        _row("3.10", "1.23.0", "chain", 1.03),
        {"base": "1.23.0", "workload": "chain", "kind": "time", "ratio": 1.5},  # from before rows named their Python
    ]
    new = [_row("3.12", "1.23.0", "chain", 1.001), _row("3.11", "1.23.0", "chain", 1.002)]
    merged = merge(earlier, new)
    assert [(row.get("python", ""), row["base"], row["ratio"]) for row in merged] == [
        ("", "1.23.0", 1.5),
        ("3.10", "1.23.0", 1.03),
        ("3.11", "1.23.0", 1.002),
        ("3.12", "1.22.0", 1.01),
        ("3.12", "1.23.0", 1.001),
    ]
    assert merge(merged, []) == merged


def test_rows_of_one_pair_keep_the_order_they_were_measured_in() -> None:
    rows = [_row("3.13", "1.22.0", name, 1.0) for name in ("response_stream", "chain", "agent_stream")]
    assert [row["workload"] for row in merge([], [*rows, _row("3.10", "1.22.0", "chain", 1.0)])] == [
        "chain", "response_stream", "chain", "agent_stream",
    ]  # fmt: skip


def test_each_time_row_is_held_to_its_workloads_goal_and_memory_to_flat_growth() -> None:
    assert within_goal(_row("3.11", "1.22.0", "response_stream", 1.05))
    assert not within_goal(_row("3.11", "1.22.0", "response_stream", 1.0501))
    assert within_goal(_row("3.11", "1.22.0", "graph_runs", 1.02))
    assert not within_goal(_row("3.11", "1.22.0", "agent_stream", 1.011))
    assert within_goal(_memory("3.11", "1.22.0", flat=True))
    assert not within_goal(_memory("3.11", "1.22.0", flat=False))


def test_a_time_row_of_a_workload_without_a_goal_is_an_error() -> None:
    with pytest.raises(RunguardError, match=r"^bench row 'tight_loop': no goal for this workload \(known: response"):
        goal(_row("3.11", "1.22.0", "tight_loop", 1.0))


def test_the_summary_counts_rows_within_their_goals_and_names_the_worst_against_its_goal() -> None:
    rows = [
        _row("3.10", "1.22.0", "response_stream", 1.04),  # the largest ratio, within its goal
        _row("3.12", "1.23.0", "agent_stream", 1.02),  # the furthest above its goal
        _row("3.12", "1.23.0", "chain", 1.0),
        _memory("3.12", "1.23.0", flat=False),
    ]
    assert summary(rows) == (
        "2 of 4 rows within their goals; worst ratio 1.020 (agent_stream, Python 3.12, base 1.23.0; goal 1.01)."
    )
    assert summary([_memory("3.12", "1.23.0", flat=True)]) == "1 of 1 rows within their goals."
