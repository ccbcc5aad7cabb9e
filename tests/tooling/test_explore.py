"""The schedule explorer's own logic: operation text, shrinking and member classification.

Imports the installed agent-framework-core (the explorer builds its workflows from it), as the tests session has it.
"""

from __future__ import annotations

import random

import pytest

from scripts.explore import driver
from scripts.explore.invariants import Violation
from scripts.explore.operations import WEIGHTS, Op, format_ops, generate, parse_ops
from scripts.explore.subjects import FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_operation_text_round_trips(family: str) -> None:
    rng = random.Random(family)  # noqa: S311
    for _ in range(50):
        ops = generate(rng, family, rng.randint(1, 40))
        assert parse_ops(format_ops(ops)) == ops


def test_operation_text_names_the_target_only_where_it_matters() -> None:
    assert format_ops([Op("start"), Op("pull", 1), Op("gc"), Op("close")]) == "start,pull:1,gc,close:0"
    assert parse_ops("start,,drop") == [Op("start"), Op("drop")]
    with pytest.raises(ValueError, match="unknown operation 'jump'"):
        parse_ops("start,jump:1")
    assert set(WEIGHTS) >= {"start", "pull", "drop", "gc", "close", "cancel"}


def test_shrinking_keeps_the_first_start_and_what_the_violation_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    needed = {Op("drop", 0), Op("gc")}
    runs: list[list[Op]] = []

    def fake_run(family: str, seed: int, ops: list[Op]) -> list[Violation]:
        runs.append(ops)
        return [Violation("lost-write", "gone")] if needed <= set(ops) else [Violation("other", "")]

    monkeypatch.setattr(driver, "run_schedule", fake_run)
    ops = parse_ops("start,pull:0,start,drop:0,pull:1,wait:0,gc,close:0,settle")
    assert driver.shrink("graph", 7, ops, "lost-write") == parse_ops("start,drop:0,gc")
    assert len(runs) <= driver.SHRINK_BUDGET


def test_shrinking_stops_at_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    def never_violates(family: str, seed: int, ops: list[Op]) -> list[Violation]:
        return []

    monkeypatch.setattr(driver, "run_schedule", never_violates)
    monkeypatch.setattr(driver, "SHRINK_BUDGET", 3)
    ops = parse_ops("start,pull:0,drop:0,gc,close:0")
    assert driver.shrink("graph", 1, ops, "lost-write") == ops


@pytest.mark.parametrize(
    ("family", "violation", "member"),
    [
        ("graph", Violation("lost-write", "x"), "G1 late discard wipes the successor's staged write"),
        ("functional", Violation("lost-write", "x"), "other lost-write"),
        ("agent", Violation("guard-leaked", "invalid state to restart"), "G5 WorkflowAgent refuses the next turn"),
        ("functional-agent", Violation("guard-leaked", "x"), "F3 closing a FunctionalWorkflowAgent stream leaves "
         "the workflow running"),
        ("graph", Violation("exception", "generator is already running"), "F1 ResponseStream.close() during "
         "another task's pull"),
        ("graph", Violation("exception", "something else"), "other exception"),
    ],
)  # fmt: skip
def test_violations_are_classified_as_known_members(family: str, violation: Violation, member: str) -> None:
    assert driver.member_of(family, violation) == member
