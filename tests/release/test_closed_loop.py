"""A streaming WorkflowAgent turn dropped in an event loop that is then closed by hand (without
``shutdown_asyncgens()``, as a sync wrapper with ``new_event_loop()`` does) leaves the workflow free for a new loop."""

import asyncio
import gc
import subprocess
import sys
import warnings

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, WorkflowException, handler

TIMEOUT = 10.0


class Echo(Executor):
    """Echoes each turn; the turn "hang" then waits for a reply that never comes."""

    @handler
    async def handle(self, messages: list[Message], ctx: WorkflowContext[list[Message], str]) -> None:
        text = messages[-1].text
        await ctx.yield_output(f"echo {text}")
        if text == "hang":
            await asyncio.Event().wait()


def test_a_turn_dropped_in_a_closed_loop_leaves_the_workflow_to_the_next_loop() -> None:
    workflow = WorkflowBuilder(start_executor=Echo(id="echo")).build()
    agent = workflow.as_agent()

    async def first_turn() -> str:
        stream = agent.run("hang", stream=True)
        update = await asyncio.wait_for(anext(aiter(stream)), TIMEOUT)
        return update.text  # the stream is dropped here, mid-turn

    # As in a sync wrapper's program, nothing records the warnings of the loop's close (the "coroutine ... was never
    # awaited" warning of a dropped generator's aclose() would keep that generator, and the run with it, alive).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        loop = asyncio.new_event_loop()
        try:
            assert loop.run_until_complete(first_turn()) == "echo hang"
        finally:
            loop.close()  # no shutdown_asyncgens(): the dropped turn's generators are never finalized on this loop
        del loop  # the closed loop and what it still held are garbage now
        gc.collect()

    async def next_run() -> list[str]:
        result = await asyncio.wait_for(workflow.run([Message("user", ["again"])]), TIMEOUT)
        return [str(output) for output in result.get_outputs()]

    assert asyncio.run(next_run()) == ["echo again"]


def test_a_turn_dropped_in_a_loop_that_turns_on_before_it_is_closed_leaves_the_workflow_to_the_next_loop() -> None:
    """The loop starts to close the dropped turn before it is closed: that close never ends, and nothing collects it.

    The next loop's ``cancel_pending_requests()`` and ``run()`` of the workflow itself are admitted all the same.
    """
    workflow = WorkflowBuilder(start_executor=Echo(id="echo")).build()
    agent = workflow.as_agent()

    async def first_turn() -> str:
        stream = agent.run("hang", stream=True)
        text = (await asyncio.wait_for(anext(aiter(stream)), TIMEOUT)).text
        del stream  # dropped mid-turn: the loop starts to close it, and that close waits for the turn's workflow run
        for _ in range(10):
            await asyncio.sleep(0)
        return text

    async def next_calls() -> list[str]:
        outcomes: list[str] = []
        try:
            await asyncio.wait_for(workflow.cancel_pending_requests([]), TIMEOUT)
            outcomes.append("cancelled")
            result = await asyncio.wait_for(workflow.run([Message("user", ["again"])]), TIMEOUT)
            outcomes.extend(str(output) for output in result.get_outputs())
        except WorkflowException as exc:  # "already running"
            outcomes.append(f"refused: {exc}")
        return outcomes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        gc.disable()  # what the closed loop still holds is not collected before the next calls
        try:
            loop = asyncio.new_event_loop()
            try:
                first = loop.run_until_complete(first_turn())
            finally:
                loop.close()  # no shutdown_asyncgens()
            outcomes = asyncio.run(next_calls())
        finally:
            gc.enable()
    assert first == "echo hang"
    assert outcomes == ["cancelled", "echo again"]


# Run in an interpreter of its own, as a sync wrapper's program would be: nothing else holds on to the closed loop.
FUNCTIONAL_PROGRAM = """
import asyncio, gc
from agent_framework import RunContext, step, workflow

gates = {}

@step
async def io(run: str) -> str:
    await gates.setdefault(run, asyncio.Event()).wait()
    return run

@workflow
async def flow(turn: str, ctx: RunContext) -> str:
    await io(turn)
    return f"{turn}:done"

functional = flow.build()

async def first_run():
    stream = functional.run("r0", stream=True)
    items = aiter(stream)
    while True:  # read until a read is pending while the step waits on its I/O
        pending = asyncio.ensure_future(anext(items))
        for _ in range(50):
            await asyncio.sleep(0)
        if not pending.done():
            break
    del stream, items, pending  # dropped mid-step

loop = asyncio.new_event_loop()
loop.run_until_complete(first_run())
loop.close()  # no shutdown_asyncgens()
gates.clear()
gc.collect()
loop = asyncio.new_event_loop()

async def next_run():
    gates["r1"] = asyncio.Event()
    gates["r1"].set()
    result = await asyncio.wait_for(functional.run("r1"), 10)
    print(result.get_outputs())

loop.run_until_complete(next_run())
loop.close()
"""


def test_a_functional_run_dropped_in_a_closed_loop_leaves_the_workflow_to_the_next_loop() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FUNCTIONAL_PROGRAM], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['r1:done']"
