"""A streaming WorkflowAgent turn dropped mid-superstep, then a run of the agent's workflow itself that is not read
yet: the agent's next turn is refused as the agent refuses a turn it cannot start (``AgentException``), whatever
status the dropped turn left."""

import asyncio
import gc

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, handler
from agent_framework.exceptions import AgentException, WorkflowException

TIMEOUT = 10.0


class Chat(Executor):
    """Yields an output, then waits for I/O that the test never completes."""

    def __init__(self) -> None:
        super().__init__(id="chat")
        self.waiting = asyncio.Event()

    @handler
    async def handle(self, messages: list[Message], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"answer to {messages[-1].text}")
        self.waiting.set()
        await asyncio.Event().wait()


async def test_a_turn_of_an_agent_whose_workflow_another_run_holds_is_refused_with_agent_exception() -> None:
    chat = Chat()
    agent = WorkflowBuilder(start_executor=chat).build().as_agent()
    workflow = agent.workflow

    stream = agent.run("first", stream=True)
    first = await asyncio.wait_for(anext(aiter(stream)), TIMEOUT)
    assert first.text == "answer to first"
    await asyncio.wait_for(chat.waiting.wait(), TIMEOUT)
    del stream  # dropped mid-superstep
    gc.collect()
    held = None
    for _ in range(100):  # let the loop finalize the dropped turn (a bounded number of turns)
        try:
            held = workflow.run([Message(role="user", contents=["direct"])], stream=True)
        except WorkflowException:  # still held by the dropped turn: "already running"
            await asyncio.sleep(0)
        else:
            break
    assert held is not None, "the dropped turn kept the workflow"

    try:
        error: Exception | None = None
        try:
            await asyncio.wait_for(agent.run("second"), TIMEOUT)
        except Exception as exc:
            error = exc
        assert isinstance(error, AgentException), f"the busy agent raised {error!r}"
    finally:
        await asyncio.wait_for(held.close(), TIMEOUT)
