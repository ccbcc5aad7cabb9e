"""The explorer's differential mode: comparing two builds' outcomes, declared differences, the worker protocol."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from scripts.explore.differential import (
    Declared,
    Outcome,
    declared_differences,
    differences,
    diverged,
    judge,
    request,
    serve,
    steered,
)
from scripts.explore.driver import FIXED_SCHEDULES, fixed_schedules, observe_schedule
from scripts.explore.invariants import Violation
from scripts.explore.operations import parse_ops
from scripts.explore.subjects import FAMILIES
from scripts.series.errors import RunguardError
from scripts.series.patch import Patch


def _observation(**fields: Any) -> dict[str, Any]:
    run = {"name": "r0", "end": "completed", "outputs": ["r0:done"], "errors": []}
    return {"runs": [{**run, **fields}], "status": "IDLE", "pending": 0, "errors": [], "state": ["_kwargs", "x:r0"]}


def _outcome(*violations: Violation, **fields: Any) -> Outcome:
    return Outcome("start", violations, _observation(**fields))


def test_the_same_outcome_is_no_regression() -> None:
    assert judge(_outcome(), _outcome(), []).regressions == []


def test_an_undeclared_difference_is_a_regression_and_the_timing_of_an_end_is_not_compared() -> None:
    verdict = judge(_outcome(end="closed after 2 pulls"), _outcome(end="closed after 3 pulls", outputs=[]), [])
    assert verdict.regressions == ["difference outputs (undeclared): r0: ['r0:done'] -> []"]
    assert verdict.kind == "difference outputs"


def test_a_declared_difference_is_none_and_one_in_what_the_caller_saw_explains_what_follows() -> None:
    before, after = _outcome(), _outcome(errors=["pull: RuntimeError: refused"], outputs=[])
    assert [str(found) for found in differences(before.observation, after.observation)] == [
        "outputs r0: ['r0:done'] -> []",
        "errors r0: [] -> ['pull: RuntimeError: refused']",
    ]
    assert judge(before, after, [Declared("errors", "* -> *refused*", "p")]).regressions == []
    assert judge(before, after, [Declared("errors", "*something else*", "p")]).kind == "difference outputs"
    assert judge(before, after, [Declared("outputs", "r0: *", "p")]).kind == "difference errors"


REFUSED = "start: WorkflowException: Workflow is already running; concurrent runs are not allowed on the same instance."
ADMITTED = Declared("errors", f"r*: ?'{REFUSED}'? -> *", "p")  # run() admitted where the release refuses it


def test_a_run_admitted_where_the_release_refuses_it_takes_the_caller_on_another_path() -> None:
    """What the caller's later calls on the admitted run recorded (a second reader's read) follows from admitting it."""
    before, after = _outcome(end="refused", outputs=[], errors=[REFUSED]), _outcome(errors=["readmap: read an update"])
    assert diverged(before, after, [ADMITTED])
    assert judge(before, after, [ADMITTED]).regressions == []
    assert not diverged(before, after, [])
    assert judge(before, after, []).kind == "difference end"
    assert not diverged(before, after, [Declared("outputs", "*", "p")])  # a declared output is no other path


def test_the_framework_s_own_state_keys_are_not_compared() -> None:
    before, after = _outcome(), _outcome()
    after.observation["state"] = ["_other", "x:r0"]
    assert judge(before, after, []).regressions == []


def test_a_violation_of_the_patched_build_only_is_a_regression_whatever_is_declared() -> None:
    lost = Violation("exception", "pulling r0 raised RuntimeError: closed")
    verdict = judge(_outcome(), _outcome(lost), [Declared("errors", "*", "p")])
    assert verdict.regressions == ["violation exception (patched only): pulling r0 raised RuntimeError: closed"]
    assert judge(_outcome(lost), _outcome(lost), []).regressions == []  # a member the series leaves open


def test_an_unpatched_violation_explains_only_the_observations_it_changes() -> None:
    stale = Violation("status", "status is IN_PROGRESS after r0 was abandoned in progress")
    status_only = _outcome()
    status_only.observation["status"] = "CANCELLED"
    assert judge(_outcome(stale), status_only, []).regressions == []
    assert judge(_outcome(stale), _outcome(outputs=[]), []).kind == "difference outputs"
    assert judge(_outcome(Violation("hang", "x")), _outcome(outputs=[]), []).regressions == []


def _patch(*trailers: str) -> Patch:
    pairs = tuple(tuple(trailer.split(": ", 1)) for trailer in trailers)
    return Patch(Path("0001-x.patch"), "Python: x", pairs, (), (), ())  # type: ignore[arg-type]


def test_explore_tags_declare_differences_and_stay_out_of_the_behaviour_changes() -> None:
    patch = _patch(
        "Behaviour-Change: close() raises [explore: errors *close()*] and ends it [explore: end r*: open -> closed]",
        "Behaviour-Change: nothing the explorer sees",
    )
    assert patch.behaviour_changes == ["close() raises and ends it", "nothing the explorer sees"]
    assert declared_differences([patch]) == [
        Declared("errors", "*close()*", "0001-x.patch"),
        Declared("end", "r*: open -> closed", "0001-x.patch"),
    ]


def test_an_explore_tag_of_an_unknown_kind_is_an_error() -> None:
    with pytest.raises(RunguardError, match=r"0001-x.patch: \[explore: colour \.\.\.\]: the kind must be one of end"):
        declared_differences([_patch("Behaviour-Change: x [explore: colour red]")])


def test_a_worker_answers_each_request_with_the_schedule_s_outcome() -> None:
    out = io.StringIO()
    ops = "start,pull:0,wait:0,drop:0,newloop,start,drain:0"
    serve(iter([json.dumps(request("graph", 0, ops)), json.dumps(request("chat", 3))]), out)
    first, second = (Outcome.from_json(json.loads(line)) for line in out.getvalue().splitlines())
    assert first.ops == ops
    assert [run["end"] for run in first.observation["runs"]] == ["dropped after 1 pulls", "completed"]
    assert first.observation["runs"][1]["outputs"] == ["r1:head", "r1:done"]
    assert second.ops.startswith("start")


def test_a_schedule_goes_on_in_a_new_event_loop_after_the_old_one_is_closed_by_hand() -> None:
    outcome = observe_schedule("functional", 2, parse_ops("start,newloop,start,drain:0"))
    assert [run["name"] for run in outcome.observation["runs"]] == ["r0", "r1"]
    assert outcome.observation["runs"][0]["end"].startswith("dropped with its event loop")


def test_every_fixed_schedule_names_a_family_and_parses() -> None:
    entries = json.loads(FIXED_SCHEDULES.read_text())["schedules"]
    assert entries
    assert {entry["family"] for entry in entries} <= set(FAMILIES)
    assert sum(len(fixed_schedules(family)) for family in FAMILIES) == len(entries)


STUCK = Violation("status", "status is IN_PROGRESS after r0 was abandoned in progress")


def test_a_status_the_series_unsticks_explains_a_workflow_agent_s_later_turns_only() -> None:
    """The agent refused r0's successor by the stuck status; patched, the turn runs: that follows from the fix."""
    before = _outcome(STUCK, end="refused", outputs=[], errors=["pull: AgentException: invalid state to restart"])
    after = _outcome()
    assert steered("agent", after)
    assert judge(before, after, [], steering=True).regressions == []
    assert not steered("graph", after)
    assert not steered("agent", _outcome(STUCK))  # still stuck patched: the path it took is not the fix's
    assert judge(before, after, []).kind == "difference end"
