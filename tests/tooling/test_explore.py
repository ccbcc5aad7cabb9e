"""The schedule explorer's own logic: operation text, shrinking and member classification.

Imports the installed agent-framework-core (the explorer builds its workflows from it), as the tests session has it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import random
import warnings
from collections.abc import AsyncGenerator, Awaitable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
from agent_framework import WorkflowEvent
from hypothesis import given
from hypothesis import strategies as st

from scripts.explore import driver, shards
from scripts.explore.__main__ import main as explore_main
from scripts.explore.differential import Declared, Outcome, request
from scripts.explore.invariants import LOST, Probe, Violation
from scripts.explore.operations import (
    WEIGHTS,
    Op,
    Run,
    Session,
    format_ops,
    generate,
    is_refusal,
    parse_ops,
    seen_error,
)
from scripts.explore.shards import Shard, read_rows
from scripts.explore.subjects import FAMILIES, build_subject


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


def test_an_operation_of_some_families_only_is_never_generated_for_the_others() -> None:
    rng = random.Random(3)  # noqa: S311
    assert not any(op.name == "resolve" for op in generate(rng, "functional", 400))
    assert any(op.name == "resolve" for op in generate(rng, "functional-awaitable", 400))


def test_shrinking_keeps_the_first_start_and_what_the_violation_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    needed = {Op("drop", 0), Op("gc")}
    runs: list[list[Op]] = []

    def fake_run(family: str, seed: int, ops: list[Op]) -> list[Violation]:
        runs.append(ops)
        return [Violation("lost-write", "gone")] if needed <= set(ops) else [Violation("other", "")]

    monkeypatch.setattr(driver, "run_schedule", fake_run)
    ops = parse_ops("start,pull:0,start,drop:0,pull:1,wait:0,gc,close:0,settle")
    assert driver.shrink("graph", 7, ops, Violation("lost-write", "x")) == parse_ops("start,drop:0,gc")
    assert len(runs) <= driver.SHRINK_BUDGET


def test_shrinking_keeps_the_member_not_only_the_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the second newloop, r2's write leaks as the open member's (lost with its loop): not what was found."""
    fixed, lost = Violation("leaked-write", "head:r2 is committed"), Violation("leaked-write", f"x (it was {LOST})")

    def fake_run(family: str, seed: int, ops: list[Op]) -> list[Violation]:
        return [fixed] if ops.count(Op("newloop")) == 2 else [lost]

    monkeypatch.setattr(driver, "run_schedule", fake_run)
    ops = parse_ops("start,newloop,start,pull:0,newloop,cancel_pending")
    assert driver.shrink("graph", 1818, ops, fixed) == parse_ops("start,newloop,newloop")


def test_shrinking_stops_at_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    def never_violates(family: str, seed: int, ops: list[Op]) -> list[Violation]:
        return []

    monkeypatch.setattr(driver, "run_schedule", never_violates)
    monkeypatch.setattr(driver, "SHRINK_BUDGET", 3)
    ops = parse_ops("start,pull:0,drop:0,gc,close:0")
    assert driver.shrink("graph", 1, ops, Violation("lost-write", "x")) == ops


G11 = "G11 a dropped run freed by the cycle collector is closed several times at once"
FINALIZER_FAILED = (
    "Task exception was never retrieved (the loop's aclose() of a collected async generator): RuntimeError: "
)


LOST_QUEUE = "L1 what a run dropped with its hand-closed event loop queued is executed by the next run"


@pytest.mark.parametrize(
    ("family", "violation", "member"),
    [
        ("graph", Violation("lost-write", "x"), "G1 late discard wipes the successor's staged write"),
        ("functional", Violation("lost-write", "x"), "other lost-write"),
        ("agent", Violation("guard-leaked", "invalid state to restart"), "G5 WorkflowAgent refuses the next turn"),
        ("agent", Violation("guard-leaked", "r2 refused (The underlying workflow is in an invalid state to restart: "
         "IN_PROGRESS.) though no run is live; r0 closed after 1 pulls, r1 closed after 1 pulls; r1 was stopped "
         "between supersteps"), "G5 WorkflowAgent refuses the next turn after a turn stopped between supersteps with "
         "work left (kept by PR 3, as on the release)"),
        ("functional-agent", Violation("guard-leaked", "x"), "F3 closing a FunctionalWorkflowAgent stream leaves "
         "the workflow running"),
        ("graph", Violation("exception", "generator is already running"), "F1 ResponseStream.close() during "
         "another task's pull fails (as on the release)"),
        ("graph", Violation("exception", "something else"), "other exception"),
        ("graph", Violation("foreign-tools", "slow of r1 sees runtime tools ['tool_r3']"), "G3 a dropped run's "
         "executor sees the successor's tools"),
        ("graph", Violation("foreign-tools", "slow of r1 sees runtime tools ['tool_r3'] (r1 was dropped with its "
         "event loop)"), LOST_QUEUE),
        ("graph", Violation("foreign-event", "the stream of r3 delivered 'r1:done' (r1 was dropped with its event "
         "loop)"), LOST_QUEUE),
        ("functional-buffered", Violation("exception", "generator is already running"), "S1 a buffered stream's "
         "close() during another task's read fails (as on the release)"),
        ("functional-awaitable", Violation("never-awaited", "x"), "S2 a from_awaitable() stream closed before its "
         "first read leaves its awaitable unawaited"),
        ("functional-awaitable", Violation("guard-leaked", "r0 closed after 0 pulls"), "S2 a resolved, unread "
         "from_awaitable() stream keeps the run guard after close()"),
        ("functional-awaitable", Violation("guard-leaked", "r0 closed during a pull after 0 pulls, r1 open"), "S2 a "
         "resolved, unread from_awaitable() stream keeps the run guard after close()"),
        ("functional-awaitable", Violation("guard-leaked", "r0 dropped after 0 pulls"), "F4 a cancelled or unstarted "
         "dropped FunctionalWorkflow run keeps the guard"),
        ("checkpointed", Violation("guard-leaked", "r1 refused though no run is live; r0 dropped with its event loop "
         "after 6 pulls"), "L1 a run whose event loop was closed by hand keeps the run guard"),
        ("checkpointed", Violation("cancel-pending-admitted", "x"), "G6 cancel_pending_requests() ignores the run "
         "guard"),
        ("agent", Violation("leaked-write", "head:r0 is committed, but head of r0 did not finish (it was lost with "
         "its event loop)"), "G2 a run's staged write is committed by the successor after the run's loop was closed "
         "by hand"),
        ("graph", Violation("leaked-write", "head:r0 is committed, but head of r0 did not finish"), "G2 a dropped "
         "run's staged write is committed by the successor"),
        ("checkpointed", Violation("mixed-fan-in", "join joined messages of runs ['r0', 'r1']; the earlier ones had "
         "completed"), "G10 (not covered) a fresh run joins the fan-in a completed run left beside its pending "
         "requests"),
        ("subworkflow", Violation("exception", "pulling r1 raised WorkflowException: Workflow is already running; "
         "concurrent runs are not allowed on the same instance."), "L1 a sub-workflow whose parent's event loop was "
         "closed by hand keeps the sub-workflow's run guard"),
        ("checkpointed", Violation("mixed-fan-in", "join joined messages of runs ['r0', 'r1']"), "G4b a closed run's "
         "fan-in buffer is joined by the next run (kept by PR 3, as on the release)"),
        ("chat", Violation("hang", "close() of r0 did not finish within 10s"), "S2 close() of an unread chat stream "
         "waits for the model call"),
        ("chat", Violation("hang", "a second reader of r0 got nothing within 10s"), "other hang"),
        ("graph", Violation("loop-error", FINALIZER_FAILED + "aclose(): asynchronous generator is already running"),
         G11),
        ("checkpointed", Violation("loop-error", FINALIZER_FAILED + "async generator ignored GeneratorExit"), G11),
        ("checkpointed", Violation("loop-error", FINALIZER_FAILED + "async generator raised StopAsyncIteration"), G11),
        ("checkpointed", Violation("loop-error", FINALIZER_FAILED.removesuffix("RuntimeError: ") +
                                   "StopAsyncIteration: "), G11),
        ("checkpointed", Violation("loop-error", "Task exception was never retrieved: RuntimeError: async generator "
         "raised StopAsyncIteration"), "other loop-error"),
        ("functional", Violation("loop-error", FINALIZER_FAILED + "async generator raised StopAsyncIteration"),
         "other loop-error"),
        ("agent", Violation("guard-leaked", "r3 refused (The underlying workflow is in an invalid state to restart: "
         "IN_PROGRESS.) though no run is live; r0 dropped with its event loop after 1 pulls"), "L1 a run whose event "
         "loop was closed by hand keeps the run guard"),
        ("agent", Violation("guard-leaked", "r2 refused (The underlying workflow is in an invalid state to restart: "
         "IN_PROGRESS.) though no run is live; r0 refused, r1 dropped after 1 pulls, then lost with its event loop"),
         "L1 a run whose event loop was closed by hand keeps the run guard"),
    ],
)  # fmt: skip
def test_violations_are_classified_as_known_members(family: str, violation: Violation, member: str) -> None:
    assert driver.member_of(family, violation) == member


async def _teardown_pulls_past_its_source() -> AsyncGenerator[int]:
    try:
        yield 1
    finally:
        await anext(_nothing())  # its StopAsyncIteration escapes: "async generator raised StopAsyncIteration"


async def _nothing() -> AsyncGenerator[int]:
    return
    yield


async def _close(items: AsyncGenerator[int]) -> None:
    await items.aclose()


async def _loop_error(work: Awaitable[Any]) -> Violation:
    """What the loop reports when the task running ``work`` fails and nobody retrieves its exception."""
    task = asyncio.ensure_future(work)
    (error,) = await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 5)
    return driver.loop_error({"message": "Task exception was never retrieved", "exception": error, "future": task})


async def test_a_loop_error_of_the_loop_s_close_of_a_collected_async_generator_says_so() -> None:
    """asyncio's async-generator finalizer runs a collected generator's aclose() as a task (G11's racing closes)."""
    finalizing, closing = _teardown_pulls_past_its_source(), _teardown_pulls_past_its_source()
    assert [await anext(finalizing), await anext(closing)] == [1, 1]

    by_the_loop = await _loop_error(finalizing.aclose())  # as the finalizer schedules it
    by_the_program = await _loop_error(_close(closing))  # the same error in a task of the program's

    assert [by_the_loop.detail, by_the_program.detail] == [
        FINALIZER_FAILED + "async generator raised StopAsyncIteration",
        "Task exception was never retrieved: RuntimeError: async generator raised StopAsyncIteration",
    ]


@given(first=st.integers(0, 10**6), schedules=st.integers(1, 500), count=st.integers(1, 12))
def test_shards_are_disjoint_and_together_are_the_unsharded_run(first: int, schedules: int, count: int) -> None:
    shards = [Shard(index, count).seeds(first, schedules) for index in range(1, count + 1)]
    seeds = [seed for shard in shards for seed in shard]
    assert seeds == list(range(first, first + schedules))  # in order, so also disjoint


def _explore(tmp_path: Path, name: str, *args: str) -> list[dict[str, Any]]:
    target = tmp_path / f"{name}.json"
    assert explore_main(["--family", "graph", "--schedules", "40", "--first-seed", "5", "--processes", "1",
                         "--json", str(target), *args]) == 1  # fmt: skip
    return read_rows(target)


def test_sharded_runs_merge_into_the_unsharded_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[int] = []

    def fake_run(family: str, seed: int, ops: list[Op]) -> list[Violation]:
        ran.append(seed)
        return [Violation("lost-write", "gone")] if seed % 7 == 0 else []

    monkeypatch.setattr(driver, "run_schedule", fake_run)

    def unshrunk(family: str, seed: int, ops: list[Op], kind: str) -> list[Op]:
        return ops

    monkeypatch.setattr(driver, "shrink", unshrunk)
    monkeypatch.setattr(driver, "quiet", lambda: None)
    [whole] = _explore(tmp_path, "whole")
    unsharded, ran[:] = list(ran), []
    shards = [_explore(tmp_path, f"shard-{index}", "--shard", f"{index}/3")[0] for index in (1, 2, 3)]
    assert sorted(ran) == unsharded == list(range(5, 45))
    assert [row["seed_range"] for row in shards] == [[5, 17], [18, 30], [31, 44]]
    merged_file = tmp_path / "merged.json"
    shard_files = [str(tmp_path / f"shard-{index}.json") for index in (1, 2, 3)]
    assert explore_main(["--merge", *shard_files, "--json", str(merged_file)]) == 0
    [merged] = read_rows(merged_file)
    timing = ("seconds", "date", "examples")
    assert {k: v for k, v in merged.items() if k not in timing} == {k: v for k, v in whole.items() if k not in timing}
    assert merged["examples"][0] == whole["examples"][0]
    capsys.readouterr()


@pytest.mark.parametrize("spec", ["3/2", "0/0", "1/0", "-1/2", "two/3", "1/2/3"])
def test_a_bad_shard_spec_is_one_line_and_writes_nothing(
    spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "stress.json"
    assert explore_main([f"--shard={spec}", "--json", str(target)]) == 1
    assert capsys.readouterr().err == f"runguard: error: shard {spec!r}: expected K/N with 1 <= K <= N, e.g. 1/2\n"
    assert not target.exists()


def test_merging_a_run_with_a_missing_shard_is_an_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {"base": "1.0", "variant": "patched", "family": "graph", "series": "s", "schedules": 5,
           "violating_schedules": 0, "seed_range": [0, 4], "shard": "1/2"}  # fmt: skip
    shard = tmp_path / "shard.json"
    shard.write_text(json.dumps({"rows": [row]}))
    target = tmp_path / "merged.json"
    assert explore_main(["--merge", str(shard), "--json", str(target)]) == 1
    assert capsys.readouterr().err == "runguard: error: 1.0/patched/graph/: shards ['1/2'] are not all of 1..2\n"
    assert not target.exists()


def test_every_family_has_a_place_in_the_start_order() -> None:
    assert sorted(driver.SLOWEST_FIRST) == sorted(FAMILIES)


@pytest.mark.parametrize("status", ["WorkflowRunState.IN_PROGRESS", "IN_PROGRESS", "WorkflowRunState.FAILED"])
def test_a_workflow_agent_that_will_not_start_a_turn_refuses_it_on_every_python(status: str) -> None:
    """By the workflow's status (3.11+ and 3.10 spellings); FAILED too (a run failed as its loop was closed, 3.13),
    which the leaked-guard check then judges as it judges any refusal with no run live."""
    assert is_refusal(AgentRefused(f"The underlying workflow is in an invalid state to restart: {status}."))
    assert not is_refusal(AgentRefused("The underlying workflow raised ValueError: boom."))


class AgentRefused(Exception):
    """Stands for agent_framework's AgentException."""


async def test_the_explorer_notes_which_answers_a_superstep_took_up() -> None:
    """The reanswer operation retries an answer only if it is pending again or was never taken up (PR 3's contract)."""
    subject = build_subject("graph")
    subject.probe.gate("r0").set()
    subject.probe.gate("r1").set()

    async def drain(stream: Any) -> list[Any]:
        return [item async for item in stream]

    asking = await asyncio.wait_for(drain(subject.start("r0?")), 5)
    (request,) = [request for item in asking for request in subject.observe(item)[2]]
    assert await subject.is_pending(request)
    assert request not in subject.drained

    await asyncio.wait_for(drain(subject.answer(request, "r1")), 5)

    assert request in subject.drained
    assert not await subject.is_pending(request)


async def test_the_explorer_notes_which_answers_a_functional_run_took_up() -> None:
    """A FunctionalWorkflow run takes its answer up when it completes; one closed before that leaves it pending."""
    subject = build_subject("functional")
    for run in ("r0", "r1", "r2"):
        subject.probe.gate(run).set()

    async def drain(stream: Any) -> list[Any]:
        return [item async for item in stream]

    asking = await asyncio.wait_for(drain(subject.start("r0?")), 5)
    (request,) = [request for item in asking for request in subject.observe(item)[2]]
    assert await subject.is_pending(request)

    closed = subject.answer(request, "r1")
    assert closed is not None
    await asyncio.wait_for(anext(aiter(closed)), 5)
    await asyncio.wait_for(closed.close(), 5)
    assert await subject.is_pending(request)
    assert request not in subject.drained

    answer = subject.answer(request, "r2")
    assert answer is not None
    await asyncio.wait_for(drain(answer), 5)
    assert request in subject.drained
    assert not await subject.is_pending(request)


@pytest.mark.parametrize(
    ("family", "seed", "ops"),
    [
        ("functional-agent", 912, "ask,answer,reanswer:1"),  # the answer run completes during the retry's reads
        ("functional-buffered", 340, "ask,answer,reanswer:0"),  # its first read buffers the whole, completed run
    ],
)
def test_an_answer_a_completed_functional_run_used_is_not_given_again(family: str, seed: int, ops: str) -> None:
    """The retry finds its request answered: every build refuses to replay it (nothing is pending), rightly."""
    outcome = driver.observe_schedule(family, seed, parse_ops(ops))
    assert [run["name"] for run in outcome.observation["runs"]] == ["r0", "r1"]
    assert list(outcome.violations) == []


class _PrivateRefusal(RuntimeError):
    """Stands for a framework's private error class, such as ``_ConcurrentReadError(RuntimeError)``."""


def test_an_error_of_a_private_class_is_seen_as_the_public_class_it_derives_from() -> None:
    """Builds are compared by what the caller catches: a private subclass of RuntimeError is a RuntimeError."""
    assert seen_error(_PrivateRefusal("busy at 0x7f00aa")) == "RuntimeError: busy at #"
    assert seen_error(AgentRefused("no")) == "AgentRefused: no"


def test_a_run_that_delivered_its_final_status_before_it_was_closed_is_judged_as_completed() -> None:
    """The answer run is read until its final IDLE status, then closed with only its end of iteration left to read.

    IDLE is its status then on every build (patch 3 sets CANCELLED only for a run closed before its final status).
    """
    outcome = driver.observe_schedule("checkpointed", 101, parse_ops("ask,drain:0,answer,until:0,close:0"))
    answer = outcome.observation["runs"][1]
    assert answer["end"].startswith("closed") and answer["outputs"] == ["r1:done"]
    assert outcome.observation["status"] == "IDLE"
    assert [violation for violation in outcome.violations if violation.kind == "status"] == []


def test_a_refusal_while_a_lazily_admitted_run_s_first_pull_was_in_flight_is_no_leaked_guard() -> None:
    """r2's first pull starts the agent's workflow run; the direct run r3 is refused meanwhile, rightly."""
    outcome = driver.observe_schedule("agent", 148, parse_ops("start,start,start,pull:0,drain:2,direct"))
    assert outcome.observation["runs"][3]["end"] == "refused"
    assert outcome.observation["runs"][2]["outputs"] == ["r2:head", "r2:done"]
    assert [violation for violation in outcome.violations if violation.kind == "guard-leaked"] == []


def test_a_run_closed_before_it_started_leaves_the_status_to_a_turn_that_got_going_meanwhile() -> None:
    """r0's first pull was in flight when the direct run r1 was closed unread: the status is r0's, still running."""
    outcome = driver.observe_schedule("agent", 703, parse_ops("start,pull:0,direct,close:0"))
    assert outcome.observation["runs"][0]["outputs"] == ["r0:head", "r0:done"]
    assert [violation for violation in outcome.violations if violation.kind == "status"] == []


@pytest.mark.parametrize("seed", [2, 1362])  # 2 takes that path on 3.11, 1362 on 3.12 and 3.13
def test_a_turn_that_ended_while_the_next_turn_s_first_pull_was_under_way_ends_first(seed: int) -> None:
    """r1's read ends, then r0's first update arrives, both in one quiet spell: r0 was admitted after r1 ended.

    Accounted in the order the pulls ended, r0 is not admitted while r1 still runs; and the IN_PROGRESS status seen as
    r1's end is accounted is r0's (its first pull was under way), judged when r0 ends.
    """
    ops = parse_ops("start,start,until:0,release:0,pull:0,settle,pull:1,readfin:0")
    outcome = driver.observe_schedule("agent", seed, ops)
    assert outcome.observation["runs"][1]["outputs"] == ["r1:head", "r1:done"]
    assert outcome.violations == []


def test_a_turn_refused_after_a_turn_stopped_between_supersteps_says_so() -> None:
    """r1 is closed during a read that its completed first superstep answers: what it queued stays (PR 3, open)."""
    ops = parse_ops("start,until:0,close:0,start,pull:0,close:0,start")
    outcome = driver.observe_schedule("agent", 214, ops)
    leaked = [violation for violation in outcome.violations if violation.kind == "guard-leaked"]
    assert [driver.member_of("agent", violation) for violation in leaked] in ([], [
        "G5 WorkflowAgent refuses the next turn after a turn stopped between supersteps with work left (kept by PR 3, "
        "as on the release)"
    ])  # fmt: skip


def test_a_pull_the_caller_left_with_its_event_loop_raises_to_nobody() -> None:
    """r3's pull, refused in the old loop's last turn, is not an exception the loop saw go unretrieved."""
    ops = parse_ops("start,direct,start,drain:1,readmap:0,start,pull:0,newloop")
    outcome = driver.observe_schedule("agent", 2, ops)
    assert [violation for violation in outcome.violations if violation.kind == "loop-error"] == []


@pytest.mark.parametrize("wrapper", ["readfin", "readmap"])
def test_a_second_reader_s_refusal_leaves_no_cycle_that_keeps_a_dropped_run_going(
    wrapper: str, caplog: pytest.LogCaptureFixture
) -> None:
    """r0 is read by a second task through a wrapper (refused), read to its request and dropped: it ends then.

    Reference counting frees the dropped stream, so the answer r1 is admitted. Automatic collections are off, as
    those of a long exploring process may not come in time: a reference cycle holding r0's stream would keep r0
    going, and r1 would be refused on both builds, or on one only, as the collections happen to fall.
    """
    gc.disable()
    try:
        # The refused read logs its failed clean-up with its traceback, as on the release: a captured record would
        # keep r0's frames, and so its stream, alive (an application's log handler does not keep its records).
        with caplog.at_level(logging.CRITICAL, logger="agent_framework"):
            outcome = driver.observe_schedule("subworkflow", 4978, parse_ops(f"ask,{wrapper}:0,upto:0,drop:0,answer"))
    finally:
        gc.enable()
    assert outcome.observation["runs"][0]["errors"] == [
        f"{wrapper}: RuntimeError: anext(): asynchronous generator is already running"
    ]
    assert outcome.observation["runs"][1]["end"] == "completed"
    assert [violation for violation in outcome.violations if violation.kind == "guard-leaked"] == []


@pytest.mark.parametrize("seed", range(40))
def test_a_handler_the_closed_loop_stepped_in_its_last_turn_dies_with_it(seed: int) -> None:
    """A pull begun just before the loop is closed by hand may enter the run in the loop's last turn: not a leftover."""
    outcome = driver.observe_schedule("functional-buffered", seed, parse_ops("start,pull:0,newloop"))
    assert [violation for violation in outcome.violations if violation.kind == "leftover"] == []


LOST_GUARD = Violation("guard-leaked", "r1 refused though no run is live; r0 dropped with its event loop after 2 pulls")
LOST_WRITE = Violation("lost-write", "r1 completed, but its writes ['head:r1'] are not in the state")


def test_only_an_open_member_both_builds_show_is_reported_rather_than_failed() -> None:
    """L1 is open: shared, it is reported; patched only it is a regression; G1 (fixed) and the unknown always fail."""
    assert driver.open_and_shared("graph", LOST_GUARD, [LOST_GUARD])
    assert not driver.open_and_shared("graph", LOST_GUARD, [])
    assert not driver.open_and_shared("graph", LOST_WRITE, [LOST_WRITE])
    unknown = Violation("hang", "teardown: r0 got no event within 10s with its gate open")
    assert not driver.open_and_shared("graph", unknown, [unknown])


STALE_JOIN = Violation("mixed-fan-in", "join joined messages of runs ['r0', 'r2']; the earlier ones had completed")


def test_an_open_member_reached_after_what_stopped_the_unpatched_build_is_reported_rather_than_failed() -> None:
    """Unpatched, a leaked guard refused r2; patched, r2 ran into G10 (open), as the release does when it gets there."""
    leaked = Violation("guard-leaked", "r2 refused though no run is live; r0 completed, r1 closed after 0 pulls")
    assert driver.open_and_shared("checkpointed", STALE_JOIN, [leaked], [STALE_JOIN])
    assert not driver.open_and_shared("checkpointed", STALE_JOIN, [leaked], [STALE_JOIN, leaked])  # nothing fixed
    assert not driver.open_and_shared("checkpointed", STALE_JOIN, [], [STALE_JOIN])  # nothing went wrong unpatched
    assert not driver.open_and_shared("graph", LOST_WRITE, [leaked], [LOST_WRITE])  # G1 is fixed: it always fails


NEVER_AWAITED = Violation("never-awaited", "a from_awaitable() stream was cleaned up, its awaitable never awaited")
REFUSED = "pull: RuntimeError: Workflow is already running. Concurrent executions are not allowed."


def test_an_open_member_reached_after_a_declared_refusal_is_reported_rather_than_failed() -> None:
    """Patched, r1 was refused (declared) and started again, and its new stream closed unread shows S2 (open)."""
    observed = [{"runs": [{"name": "r1", "end": "closed after 0 pulls", "outputs": [], "errors": errors}]}
                for errors in ([], [REFUSED])]  # fmt: skip
    refusal = [Declared("errors", f"r*: ?? -> ?'{REFUSED}'?", "p")]

    def judged(family: str, violation: Violation, declared: list[Declared]) -> str:
        release, series = Outcome("start", (), observed[0]), Outcome("start", (violation,), observed[1])
        return driver.judged(family, release, series, declared).kind

    assert judged("functional-awaitable", NEVER_AWAITED, refusal) == ""
    assert judged("functional-awaitable", NEVER_AWAITED, []) == "violation never-awaited"  # no declared path
    assert judged("graph", LOST_WRITE, refusal) == "violation lost-write"  # G1 is fixed: it always fails


def test_an_open_member_reached_on_the_path_a_declared_difference_opened_is_reported_rather_than_failed() -> None:
    """Unpatched, r2 is refused beside r1, kept at its final status; patched, PR 4 admits r2 and r3 runs into G10.

    The release shows G10 wherever it gets that far (``ask,drain:0,start``); a fixed member still fails.
    """
    assert driver.open_and_shared("checkpointed", STALE_JOIN, [], [STALE_JOIN], diverging=True)
    assert not driver.open_and_shared("checkpointed", STALE_JOIN, [], [STALE_JOIN])
    assert not driver.open_and_shared("graph", LOST_WRITE, [], [LOST_WRITE], diverging=True)
    refusal = "start: WorkflowException: Workflow is already running"
    run = {"name": "r2", "end": "completed", "outputs": ["r2:head"], "errors": []}
    refused = Outcome("ask", (), {"runs": [{**run, "end": "refused", "outputs": [], "errors": [refusal]}]})
    admitted = Outcome("ask", (STALE_JOIN,), {"runs": [run]})
    declared = [Declared("errors", "r*: ?'start: *already running*'? -> *", "p")]
    assert driver.judged("checkpointed", refused, admitted, declared).regressions == []
    assert driver.judged("checkpointed", refused, admitted, []).kind == "violation mixed-fan-in"


def test_an_open_member_reached_after_a_leak_the_series_fixed_is_shared_though_another_leak_shows_on_both() -> None:
    """Unpatched, r3's close during a pull left its run going, so r4 was refused; patched, r4 ran into G4 (open).

    Both builds also refuse r2 after r3 stopped between supersteps (G5, open): a leaked guard shows on both, but not
    the one that refused r4 on the release. What the series fixed is told apart by member, not by kind.
    """
    refused = Violation("guard-leaked", "r2 refused (The underlying workflow is in an invalid state to restart: "
                        "WorkflowRunState.IN_PROGRESS.) though no run is live; r3 closed during a pull after 0 pulls; "
                        "r3 was stopped between supersteps")  # fmt: skip
    leaked = Violation("guard-leaked", "r4 refused though no run is live; r3 closed during a pull after 0 pulls")
    queued = Violation("exception", "pulling r4 raised RuntimeError: Cannot start a new run with 'message' while "
                       "in-flight executor messages remain from a prior run.")  # fmt: skip
    assert driver.open_and_shared("agent", queued, [refused, leaked], [queued, refused])
    assert not driver.open_and_shared("agent", queued, [refused], [queued, refused])  # nothing fixed


@pytest.mark.parametrize(
    ("row", "fails"),
    [
        ({"regressions": 1}, True),
        ({"unexplained": 1}, True),
        ({}, False),  # its violations are all open members both builds show
        ({"differential": False}, True),  # the patched build explored alone: any violation fails
        ({"variant": "unpatched", "differential": False}, False),
    ],
)
def test_a_run_fails_on_a_regression_and_on_a_violation_no_open_shared_member_explains(
    row: dict[str, Any], fails: bool
) -> None:
    base = {"variant": "patched", "differential": True, "violating_schedules": 3, "regressions": 0, "unexplained": 0}
    assert shards.fails({**base, **row}) is fails


@dataclass
class _Workers:
    """Stands for both builds' workers: every schedule gets the same two outcomes."""

    unpatched: tuple[Violation, ...]
    patched: tuple[Violation, ...]

    def run(self, requests: list[dict[str, Any]]) -> list[tuple[Outcome, Outcome]]:
        def outcome(violations: tuple[Violation, ...], asked: dict[str, Any]) -> Outcome:
            return Outcome(asked["ops"] or "start", violations, {"runs": []})

        return [(outcome(self.unpatched, asked), outcome(self.patched, asked)) for asked in requests]


L1 = "L1 a run whose event loop was closed by hand keeps the run guard"


@pytest.mark.parametrize(
    ("builds", "unexplained", "regressions", "reported"),
    [
        (((LOST_GUARD,), (LOST_GUARD,)), 0, 0, []),  # an open member both builds show: counted, not failing
        (((LOST_WRITE,), (LOST_WRITE,)), 1, 0, ["G1 late discard wipes the successor's staged write"]),  # fixed: fails
        (((), (LOST_GUARD,)), 1, 1, [L1, "REGRESSION violation guard-leaked"]),  # only the patched build: a regression
    ],
)
def test_the_differential_explorer_counts_and_reports_what_fails_the_run(
    builds: tuple[tuple[Violation, ...], tuple[Violation, ...]],
    unexplained: int,
    regressions: int,
    reported: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What fails the run is reported even when the examples are used up (none allowed here); open members are not."""
    result = driver.FamilyResult("1.0", "patched", "graph", "s", differential=True)
    explorer = driver.DifferentialExplorer(result, lambda seed, ops: "", max_examples=0)
    explorer.pair = _Workers(*builds)  # type: ignore[assignment]
    explorer._judge([request("graph", 3, "start,gc")], 1)  # pyright: ignore[reportPrivateUsage]
    assert (result.violating_schedules, result.unexplained, result.regressions) == (1, unexplained, regressions)
    assert shards.fails(asdict(result)) is bool(unexplained or regressions)
    assert [example["member"] for example in result.examples] == reported
    capsys.readouterr()


def test_a_checkpoint_restored_after_the_loop_was_closed_by_hand_releases_the_old_run_s_work() -> None:
    """The resumed work waits on the gate of the run that took it, a run of the closed loop: not a hang."""
    outcome = driver.observe_schedule("checkpointed", 198, parse_ops("start,upto:0,newloop,restore"))
    assert [violation for violation in outcome.violations if violation.kind == "hang"] == []


@pytest.mark.parametrize(("family", "admitted_while_live"), [("checkpointed", False), ("functional", True)])
def test_a_graph_run_that_yielded_its_final_status_no_longer_holds_the_workflow(
    family: str, admitted_while_live: bool
) -> None:
    """r1 was read to its final IDLE status and kept: a graph workflow may admit r2 beside it (series PR 4).

    A FunctionalWorkflow run holds its guard until its stream ends (the schedule explorer's checkpointed seed 227).
    """
    subject = build_subject(family)

    async def settled() -> None:
        return None

    session = Session(subject, family, settled)
    kept = Run("r1", "r1", admitted=True, statuses=["IN_PROGRESS", "IDLE"])
    session.runs = [kept, Run("r2", "r2")]
    session._check_admitted(session.runs[1])  # pyright: ignore[reportPrivateUsage]
    assert bool(subject.probe.violations) is admitted_while_live


def test_a_write_staged_by_a_handler_lost_with_its_event_loop_is_named_so() -> None:
    """The collector closes the lost handler later (GeneratorExit): it stays lost, not aborted."""
    probe = Probe()
    with pytest.raises(GeneratorExit), probe.invoked("r0", "head") as invocation:
        probe.stage(invocation, "head:r0")
        probe.abandon()
        raise GeneratorExit
    probe.check_state({"head:r0": "r0"}, [])
    assert [str(found) for found in probe.violations] == [
        "leaked-write: head:r0 is committed, but head of r0 did not finish (it was lost with its event loop)"
    ]


def test_a_handler_aborted_in_the_last_turns_of_the_loop_its_caller_left_died_with_it() -> None:
    """The dropped stream's finalizer cancelled the handler before the loop was closed; its teardown never finished."""
    probe = Probe()
    with pytest.raises(asyncio.CancelledError), probe.invoked("r2", "head") as invocation:
        probe.stage(invocation, "head:r2")
        probe.leave(["r2"])
        raise asyncio.CancelledError
    probe.abandon()
    probe.check_state({"head:r2": "r2"}, [])
    assert [str(found) for found in probe.violations] == [
        "leaked-write: head:r2 is committed, but head of r2 did not finish (it was lost with its event loop)"
    ]


def test_a_write_of_a_run_whose_teardown_the_closed_loop_cut_short_is_the_open_g2_member() -> None:
    """r2's stream, dropped as the caller left its loop, began its teardown there; the next loop commits its write."""
    ops = "start,start,until:0,newloop,pull:1,cancel_pending,start,until:0,newloop,cancel_pending,drain:2"
    outcome = driver.observe_schedule("graph", 1818, parse_ops(ops))
    leaked = [violation for violation in outcome.violations if violation.kind == "leaked-write"]
    assert [driver.member_of("graph", violation) for violation in leaked] == [
        "G2 a run's staged write is committed by the successor after the run's loop was closed by hand"
    ]


def test_a_turn_dropped_just_before_its_loop_was_closed_by_hand_is_lost_with_it() -> None:
    """r0's stream is dropped mid-run and the loop closed at once: its teardown never runs, so r1 is refused (L1)."""
    outcome = driver.observe_schedule("agent", 2484, parse_ops("start,until:0,drop:0,newloop,start"))
    leaked = [violation for violation in outcome.violations if violation.kind == "guard-leaked"]
    assert [violation.detail.rsplit("; ", 1)[-1] for violation in leaked] == [
        "r0 dropped after 1 pulls, then lost with its event loop"
    ]
    assert [driver.member_of("agent", violation) for violation in leaked] == [
        "L1 a run whose event loop was closed by hand keeps the run guard"
    ]


def test_what_a_run_dropped_with_its_hand_closed_loop_queued_runs_in_the_next_run_and_is_the_open_l1() -> None:
    """r1's queued work is delivered by r3 on the next loop (its gate open, it finishes): L1, not G3 or G4.

    In some interleavings r1 keeps the guard instead and r3 is refused: L1 too.
    """
    ops = "ask,drain:0,start,settle,upto:0,ask,pull:1,readfin:0,pull:2,reanswer:1,newloop,answer"
    outcome = driver.observe_schedule("graph", 7355, parse_ops(ops))
    members = {driver.member_of("graph", violation) for violation in outcome.violations}
    assert members
    assert all(member.startswith("L1 ") for member in members), members


def test_a_gate_of_a_run_the_caller_forgot_with_its_closed_loop_is_open() -> None:
    """No caller can open it any more; a run of the new loop still has a gate of its own."""
    probe = Probe()
    probe.gate("r0")
    probe.leave(["r0"])
    probe.abandon()
    assert probe.gate("r0").is_set()
    assert not probe.gate("r1").is_set()


@pytest.mark.parametrize("seed", [0, 7172])  # 0 on 3.11, 7172 on 3.12
def test_the_status_a_run_lost_with_its_hand_closed_loop_left_is_l1_s_not_that_of_a_run_that_never_ran(
    seed: int,
) -> None:
    """r0 is dropped mid-run as its loop is closed by hand; on the new loop r1 is closed before any handler of it ran.

    The status is still r0's ``IN_PROGRESS``: its teardown never runs (L1, open), not a status r1 left (G5, fixed).
    """
    ops = parse_ops("start,until:0,newloop,direct,pull:0,start,close:1")
    outcome = driver.observe_schedule("agent", seed, ops)
    status = [violation for violation in outcome.violations if violation.kind == "status"]
    assert [driver.member_of("agent", violation) for violation in status] in (
        [],
        ["L1 a run whose event loop was closed by hand keeps its status"],
        # r1 closed as it began: it keeps the status it found, which the explorer may read as r1's (open either way)
        ["G5 status stays IN_PROGRESS after a run stopped between supersteps with work left (as on the release)"],
    )


def test_a_turn_dropped_and_torn_down_before_its_loop_was_closed_is_not_lost() -> None:
    """With a settle between the drop and the closed loop, r0's teardown finishes: it is not lost with the loop."""
    outcome = driver.observe_schedule("agent", 2484, parse_ops("start,until:0,drop:0,settle,newloop,start"))
    assert outcome.observation["runs"][0]["end"] == "dropped after 1 pulls"
    assert [violation for violation in outcome.violations if "lost" in violation.detail] == []


def test_cancel_pending_requests_finishes_the_work_an_ended_run_left_queued() -> None:
    """r1, cancelled between supersteps and dropped, left slow's message; slow waits on r1's gate: not a hang."""
    outcome = driver.observe_schedule("graph", 1058, parse_ops("ask,answer,start,start,reanswer:1,cancel_pending"))
    assert [violation for violation in outcome.violations if violation.kind == "hang"] == []


def test_cancel_pending_requests_after_a_run_yielded_its_final_status_is_not_beside_it() -> None:
    """r1 was read to its final IDLE status and kept: it has ended (series PR 4), on every build."""
    outcome = driver.observe_schedule("checkpointed", 412, parse_ops("ask,answer,ask,until:1,cancel_pending"))
    assert [violation for violation in outcome.violations if violation.kind == "cancel-pending-admitted"] == []


def test_the_status_after_a_run_closed_before_it_started_is_judged_as_its_predecessor_s() -> None:
    """r0, dropped between supersteps with work left, keeps IN_PROGRESS (G5, open); r1 closed unread never set it."""
    outcome = driver.observe_schedule("graph", 1172, parse_ops("start,upto:0,drop:0,start,start,close:1"))
    assert [str(violation) for violation in outcome.violations if violation.kind == "status"] == [
        "status: status is IN_PROGRESS after r0 was abandoned in progress"
    ]


def test_a_fan_in_joined_with_a_completed_run_s_messages_says_so() -> None:
    probe = Probe()
    probe.joined("join", ["r1", "r0"])
    probe.completed.add("r0")
    probe.joined("join", ["r2", "r0", "r2"])
    assert [found.detail for found in probe.violations] == [
        "join joined messages of runs ['r0', 'r1']",
        "join joined messages of runs ['r0', 'r2']; the earlier ones had completed",
    ]


def _outputs_seen(family: str, events: list[WorkflowEvent[Any]]) -> list[str]:
    """The outputs the observation records of a run that delivered ``events``."""

    async def settled() -> None:
        return None

    session = Session(build_subject(family), family, settled)
    run = Run("r1", "r1")
    session.runs.append(run)
    for event in events:
        session._received(run, event)  # pyright: ignore[reportPrivateUsage]
    return session.observation()["runs"][0]["outputs"]


def test_the_outputs_one_sub_workflow_call_forwards_are_compared_as_a_multiset() -> None:
    """A WorkflowExecutor yields its sub-workflow's outputs concurrently (the release too): they come in no order.

    The observation sorts them (schedule 9075 of the sub-workflow family: the answer's `r1:answered` and `r1:done`
    came in either order on both builds); the outputs of separate calls, and of a graph's own executors, keep theirs.
    """
    call = [
        WorkflowEvent.executor_invoked("sub", "r1"),
        WorkflowEvent("output", "r1:done", executor_id="sub"),
        WorkflowEvent("output", "r1:answered", executor_id="sub"),
        WorkflowEvent.executor_completed("sub", ["r1:done", "r1:answered"]),
    ]
    later = [WorkflowEvent.executor_invoked("sub", "r1"), WorkflowEvent("output", "r1:closing", executor_id="sub")]
    assert _outputs_seen("subworkflow", call + later) == ["r1:answered", "r1:done", "r1:closing"]
    own = [
        WorkflowEvent("output", "r1:done", executor_id="join"),
        WorkflowEvent("output", "r1:answered", executor_id="head"),
    ]
    assert _outputs_seen("graph", call[:1] + own + call[-1:]) == ["r1:done", "r1:answered"]


@pytest.mark.parametrize("loop_seed", range(6))
def test_the_answer_s_forwarded_outputs_are_observed_alike_on_every_interleaving(loop_seed: int) -> None:
    """Schedule 9075 (sub-workflow): the answer's outputs are observed in one order whichever order the loop gave."""
    outcome = driver.observe_schedule("subworkflow", 9075, parse_ops("ask,restore,answer,until:0"), loop_seed)
    assert outcome.observation["runs"][1]["outputs"] == ["r1:answered", "r1:done"]


def test_finding_the_type_of_an_aclose_leaves_no_awaitable_unawaited() -> None:
    """The explorer names the finalizer's aclose() tasks by their type; 3.13 warns of one found and left unawaited."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert driver.aclose_type() is driver.ACLOSE
        gc.collect()
    assert [str(warning.message) for warning in caught if warning.category is RuntimeWarning] == []
