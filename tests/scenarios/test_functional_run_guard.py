"""Run guards of functional workflows and their agents, checked through the public API of the patched framework.

The invariant: a run guard is released by the run that took it, exactly once, when that run has really
ended (finished, failed, cancelled, or never started and can no longer start); a run admitted after it never
executes beside the one it closed. A ``close()`` between reads, or of a stream never read, has ended the run when
it returns. A ``close()`` during another task's pull raises the release's ``RuntimeError`` ("already running")
at once and cancels nothing: the run goes on, and its guard stays held (the next run is refused as already
running), until that pull returns; the reader then completes the close, the run ends and the next run is admitted.
"""

import asyncio
import gc
from collections.abc import Callable
from typing import Any

import pytest
from agent_framework import FunctionalWorkflow, FunctionalWorkflowAgent, ResponseStream, WorkflowEvent, workflow

from tests.scenarios.ledger import Ledger

TIMEOUT = 5.0


def open_all(ledger: Ledger) -> None:
    for name in ("first", "second", "third"):
        ledger.gate(name).set()


def build(ledger: Ledger) -> FunctionalWorkflow:
    @workflow
    async def parked(message: str) -> str:
        with ledger.running(message):
            await ledger.gate(message).wait()
            return message

    return parked.build()


def admitted(target: FunctionalWorkflow | FunctionalWorkflowAgent, message: str) -> ResponseStream[Any, Any] | None:
    """Start a streaming run, or return None when the run guard refuses it."""
    try:
        return target.run(message, stream=True)
    except RuntimeError:
        return None


async def drain(stream: ResponseStream[Any, Any]) -> list[Any]:
    return [item async for item in stream]


def outputs(events: list[WorkflowEvent[Any]]) -> list[Any]:
    return [event.data for event in events if event.type == "output"]


async def read_until_admitted(
    stream: ResponseStream[Any, Any],
    target: FunctionalWorkflow | FunctionalWorkflowAgent,
    pulled: Callable[[Any], bool],
) -> tuple[list[Any], ResponseStream[Any, Any] | None]:
    """Read ``stream`` to its end; when the update ``pulled`` picks arrives, ask the run guard for a run "second"."""
    updates: list[Any] = []
    second: ResponseStream[Any, Any] | None = None
    async for update in stream:
        updates.append(update)
        if pulled(update):
            second = admitted(target, "second")
    return updates, second


async def close_while_the_run_executes(
    stream: ResponseStream[Any, Any], target: FunctionalWorkflow | FunctionalWorkflowAgent, ledger: Ledger
) -> tuple[BaseException | None, set[str], str]:
    """Close ``stream`` while run "first" executes; what close() raised, the live bodies, and the guard's refusal."""
    error: BaseException | None = None
    try:
        await stream.close()
    except Exception as exc:
        error = exc
    live = set(ledger.live)
    try:
        probe = target.run("second", stream=True)
    except RuntimeError as exc:
        return error, live, str(exc)
    await probe.close()
    return error, live, ""


async def test_close_during_another_tasks_pull_holds_the_guard_until_the_run_ends() -> None:
    ledger = Ledger()
    wf = build(ledger)
    first = wf.run("first", stream=True)
    reader = asyncio.ensure_future(read_until_admitted(first, wf, lambda event: event.type == "output"))
    await asyncio.wait_for(ledger.entry("first").wait(), TIMEOUT)

    try:
        error, live, refusal = await asyncio.wait_for(close_while_the_run_executes(first, wf, ledger), TIMEOUT)
    finally:
        ledger.gate("first").set()
        await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)
    first_events, while_reading = reader.result()
    second = admitted(wf, "second")
    ledger.gate("second").set()
    second_events = await asyncio.wait_for(drain(second), TIMEOUT) if second is not None else []

    assert isinstance(error, RuntimeError) and "already running" in str(error), f"close() during a pull: {error!r}"
    assert live == {"first"}, "close() during another task's pull ended the run's body"
    assert "already running" in refusal, "a run was admitted while the closed run's body still executed"
    assert outputs(first_events) == ["first"], "the refused close cut the read short"
    assert while_reading is None, "a run was admitted while the read of the run went on"
    assert second is not None, "the guard was still held once the read had ended"
    assert outputs(second_events) == ["second"]
    assert ledger.overlaps == []
    assert ledger.cancelled == set()
    assert (await asyncio.wait_for(first.get_final_response(), TIMEOUT)).get_outputs() == ["first"]


async def test_cancelled_consumer_ends_the_run_and_the_next_run_is_admitted() -> None:
    ledger = Ledger()
    wf = build(ledger)
    reader = asyncio.ensure_future(wf.run("first"))
    await asyncio.wait_for(ledger.entry("first").wait(), TIMEOUT)
    reader.cancel()
    await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)

    second = admitted(wf, "second")
    assert second is not None
    open_all(ledger)
    assert outputs(await asyncio.wait_for(drain(second), TIMEOUT)) == ["second"]
    assert ledger.overlaps == []


async def test_failed_run_that_unwinds_late_leaves_the_next_runs_guard_alone() -> None:
    ledger = Ledger()
    open_all(ledger)
    wf = build(ledger)
    parked = asyncio.Event()
    resume = asyncio.Event()

    def block(_: WorkflowEvent[Any]) -> None:
        raise ValueError("blocked by policy")

    async def slow_cleanup() -> None:
        parked.set()
        await resume.wait()

    first = wf.run("first", stream=True).with_update_gate(block).with_cleanup_hook(slow_cleanup)
    reader = asyncio.ensure_future(drain(first))
    await asyncio.wait_for(parked.wait(), TIMEOUT)
    # The clean-up hooks run before the failed run is closed: it has not ended yet.
    assert admitted(wf, "second") is None, "a run was admitted while the failed run was still suspended"
    resume.set()
    await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)
    second = admitted(wf, "second")

    assert second is not None, "the guard was still held after the failed run had ended"
    assert admitted(wf, "third") is None, "the first run's late end released the second run's guard"
    assert outputs(await asyncio.wait_for(drain(second), TIMEOUT)) == ["second"]
    assert isinstance(reader.exception(), ValueError)


async def test_runs_that_never_start_release_the_guard() -> None:
    ledger = Ledger()
    open_all(ledger)
    wf = build(ledger)

    dropped = admitted(wf, "first")
    assert dropped is not None
    del dropped
    gc.collect()
    closed = admitted(wf, "second")
    assert closed is not None, "a dropped stream that never started kept the guard"
    await asyncio.wait_for(closed.close(), TIMEOUT)

    async def cancel_before_start() -> None:
        task = asyncio.ensure_future(wf.run("third"))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    await asyncio.wait_for(asyncio.ensure_future(cancel_before_start()), TIMEOUT)
    gc.collect()

    last = admitted(wf, "first")
    assert last is not None, "a run cancelled before its first step kept the guard"
    assert outputs(await asyncio.wait_for(drain(last), TIMEOUT)) == ["first"]
    assert ledger.entered.keys() == {"first"}


@pytest.mark.parametrize("reads", [0, 1, 2])
async def test_closed_agent_response_lets_the_agent_run_again(reads: int) -> None:
    ledger = Ledger()
    open_all(ledger)
    agent = build(ledger).as_agent()
    response = agent.run("first", stream=True)
    for _ in range(min(reads, 1)):
        update = await asyncio.wait_for(response.__anext__(), TIMEOUT)
        assert update.text == "first"
    if reads == 2:
        assert await asyncio.wait_for(drain(response), TIMEOUT) == []

    async def close_then_run_again() -> ResponseStream[Any, Any] | None:
        await response.close()
        return admitted(agent, "second")

    second = await asyncio.wait_for(close_then_run_again(), TIMEOUT)
    assert second is not None, "close() returned while the agent's workflow run still held the guard"
    assert [update.text for update in await asyncio.wait_for(drain(second), TIMEOUT)] == ["second"]


async def test_closing_an_old_agent_response_again_leaves_the_newer_run_alone() -> None:
    ledger = Ledger()
    agent = build(ledger).as_agent()
    old = agent.run("first", stream=True)
    await asyncio.wait_for(old.close(), TIMEOUT)
    newer = agent.run("second", stream=True)
    reader = asyncio.ensure_future(drain(newer))
    await asyncio.wait_for(ledger.entry("second").wait(), TIMEOUT)

    await asyncio.wait_for(old.close(), TIMEOUT)
    del old
    gc.collect()
    third = admitted(agent, "third")
    open_all(ledger)
    await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)

    assert third is None, "closing an old response released the guard of the run after it"
    assert [update.text for update in reader.result()] == ["second"]
    assert ledger.overlaps == []


async def test_agent_response_closed_during_another_tasks_pull() -> None:
    ledger = Ledger()
    agent = build(ledger).as_agent()
    response = agent.run("first", stream=True)
    reader = asyncio.ensure_future(read_until_admitted(response, agent, lambda update: update.text == "first"))
    await asyncio.wait_for(ledger.entry("first").wait(), TIMEOUT)

    try:
        error, live, refusal = await asyncio.wait_for(close_while_the_run_executes(response, agent, ledger), TIMEOUT)
    finally:
        ledger.gate("first").set()
        await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)
    first_updates, while_reading = reader.result()
    second = admitted(agent, "second")
    ledger.gate("second").set()
    second_updates = await asyncio.wait_for(drain(second), TIMEOUT) if second is not None else []

    assert isinstance(error, RuntimeError) and "already running" in str(error), f"close() during a pull: {error!r}"
    assert live == {"first"}, "close() during another task's pull ended the run's body"
    assert "already running" in refusal, "a run was admitted while the closed response's run still executed"
    assert [update.text for update in first_updates] == ["first"], "the refused close cut the read short"
    assert while_reading is None, "a run was admitted while the read of the response went on"
    assert second is not None, "the guard was still held once the read had ended"
    assert [update.text for update in second_updates] == ["second"]
    assert ledger.overlaps == []
    assert ledger.cancelled == set()
    assert (await asyncio.wait_for(response.get_final_response(), TIMEOUT)).text == "first"


async def test_dropped_started_run_keeps_the_guard_until_it_has_ended() -> None:
    """The run's own ``finally`` releases the guard unconditionally: that is safe only while admission refuses a
    started run whose stream was dropped and is not finalized yet (upstream's #6407 question)."""
    ledger = Ledger()
    wf = build(ledger)
    first = wf.run("first", stream=True)
    await asyncio.wait_for(first.__anext__(), TIMEOUT)  # the run has started: it holds the guard
    del first
    gc.collect()  # the stream is gone; asyncio's finalizer closes the run on a later turn of the loop

    assert admitted(wf, "second") is None, "a run was admitted while a dropped started run had not ended"
    second = None
    for _ in range(100):  # the finalizer runs the dropped run's finally a few loop turns later
        await asyncio.sleep(0)
        second = admitted(wf, "second")
        if second is not None:
            break
    assert second is not None, "the dropped run kept the guard after it had ended"
    assert admitted(wf, "third") is None, "the dropped run's late finally released the next run's guard"
    open_all(ledger)
    assert outputs(await asyncio.wait_for(drain(second), TIMEOUT)) == ["second"]
    assert ledger.overlaps == []


async def test_stream_closed_before_its_first_pull_never_runs_beside_the_next_run() -> None:
    """The guard's release for a run that never started relies on PR 1: a closed stream's run can no longer start."""
    ledger = Ledger()
    wf = build(ledger)
    first = wf.run("first", stream=True)
    await asyncio.wait_for(first.close(), TIMEOUT)
    second = admitted(wf, "second")
    assert second is not None, "a stream closed before its first pull kept the guard"
    reading_first = asyncio.ensure_future(drain(first))
    reading_second = asyncio.ensure_future(drain(second))
    await asyncio.wait_for(ledger.entry("second").wait(), TIMEOUT)
    open_all(ledger)
    first_events, second_events = await asyncio.wait_for(asyncio.gather(reading_first, reading_second), TIMEOUT)
    assert first_events == [], "a stream closed before its first pull went on to run"
    assert outputs(second_events) == ["second"]
    assert ledger.overlaps == []
