"""A streaming WorkflowAgent turn dropped in an event loop that is then closed by hand (without
``shutdown_asyncgens()``, as a sync wrapper with ``new_event_loop()`` does) leaves the workflow free for a new loop."""

import asyncio
import gc

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, handler

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

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(first_turn()) == "echo hang"
    finally:
        loop.close()  # no shutdown_asyncgens(): the dropped turn's generators are never finalized on this loop
    gc.collect()

    async def next_run() -> list[str]:
        result = await asyncio.wait_for(workflow.run([Message("user", ["again"])]), TIMEOUT)
        return [str(output) for output in result.get_outputs()]

    assert asyncio.run(next_run()) == ["echo again"]
