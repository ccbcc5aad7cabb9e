"""Breaking out of a workflow's stream mid-run and running the workflow again at once works."""

import asyncio

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 10.0


class Chatty(Executor):
    """Yields an output, then (for "a") waits for I/O that the caller does not wait for."""

    @handler
    async def handle(self, text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"first {text}")
        if text == "a":
            await asyncio.Event().wait()
        await ctx.yield_output(f"last {text}")


async def test_a_run_started_right_after_breaking_out_of_the_previous_stream() -> None:
    workflow = WorkflowBuilder(start_executor=Chatty(id="chatty")).build()
    async for event in workflow.run("a", stream=True):
        if event.type == "output":
            break  # the stream is dropped here, mid-superstep

    result = await asyncio.wait_for(workflow.run("b"), TIMEOUT)
    assert result.get_outputs() == ["first b", "last b"]
