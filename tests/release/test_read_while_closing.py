"""A read of a WorkflowAgent stream that starts while another task closes that stream ends the iteration, as after
the close, even when the close waits for the workflow run's teardown."""

import asyncio
from typing import Any

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 10.0


class Blocked(Executor):
    """Yields an output, then waits for I/O that never comes: its superstep is in progress when the stream closes."""

    @handler
    async def handle(self, messages: list[Message], ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"got {messages[-1].text}")
        await asyncio.Event().wait()


async def test_a_read_that_starts_while_an_agent_stream_is_closed_ends_the_iteration() -> None:
    agent = WorkflowBuilder(start_executor=Blocked(id="blocked")).build().as_agent()
    stream = agent.run("hello", stream=True)
    first = await asyncio.wait_for(anext(aiter(stream)), TIMEOUT)
    assert first.text == "got hello"

    reader = asyncio.ensure_future(anext(aiter(stream), "ended"))  # scheduled; it starts while close() runs
    await stream.close()  # awaited here, not in a task of its own, so that it runs before the read starts
    (outcome,) = await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)

    assert outcome == "ended", f"a read that started during close() got {outcome!r}"
