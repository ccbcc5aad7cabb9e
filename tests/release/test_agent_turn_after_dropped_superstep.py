"""A streaming WorkflowAgent turn dropped while its executor is mid-superstep, after it sent a message on: the next
turn is refused the way the agent refuses a turn it cannot start (``AgentException``), not with another error."""

import asyncio
import gc
from typing import Any

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, WorkflowRunState, handler
from agent_framework.exceptions import AgentException

TIMEOUT = 10.0


class Head(Executor):
    """Yields an output, sends a message on, then (turn "hang") waits for a reply that never comes."""

    def __init__(self, sent: asyncio.Event) -> None:
        super().__init__(id="head")
        self.sent = sent

    @handler
    async def handle(self, messages: list[Message], ctx: WorkflowContext[str, str]) -> None:
        text = messages[-1].text
        await ctx.yield_output(f"head {text}")
        await ctx.send_message(text)
        if text == "hang":
            self.sent.set()
            await asyncio.Event().wait()


class Tail(Executor):
    @handler
    async def handle(self, text: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"tail {text}")


async def test_a_turn_after_a_turn_dropped_mid_superstep_is_refused_as_the_agent_refuses() -> None:
    sent = asyncio.Event()
    head = Head(sent)
    agent = WorkflowBuilder(start_executor=head).add_edge(head, Tail(id="tail")).build().as_agent()

    workflow = agent.workflow
    stream = agent.run("hang", stream=True)
    first = await asyncio.wait_for(anext(aiter(stream)), TIMEOUT)
    assert first.text == "head hang"
    await asyncio.wait_for(sent.wait(), TIMEOUT)
    del stream  # dropped mid-superstep, with the message to "tail" queued
    gc.collect()
    for _ in range(100):  # let the loop finalize the dropped turn (a bounded number of turns)
        if workflow.status != WorkflowRunState.IN_PROGRESS:
            break
        await asyncio.sleep(0)

    try:
        response = await asyncio.wait_for(agent.run("again"), TIMEOUT)
    except AgentException:
        return  # the release refuses it ("invalid state to restart")
    assert "head again" in response.text
