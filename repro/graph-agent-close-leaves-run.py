"""Closing a WorkflowAgent response stream returns while the workflow run behind it keeps running.

WorkflowAgent.run(stream=True) iterates its workflow's stream with plain `async for`, which
does not close what it iterates. When the caller closes the agent's response after the first
update, close() returns, but the workflow run is only dropped: its executor keeps running until
the garbage collector finalizes the run later.
"""

import asyncio
import sys

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class Chat(Executor):
    def __init__(self) -> None:
        super().__init__(id="chat")
        self.cancelled = asyncio.Event()

    @handler
    async def handle(self, messages: list[Message], ctx: WorkflowContext[list[Message], str]) -> None:
        await ctx.yield_output(f"hello {messages[-1].text}")
        try:
            await asyncio.Event().wait()  # the rest of the answer
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


async def main() -> bool:
    chat = Chat()
    agent = WorkflowBuilder(start_executor=chat).build().as_agent()
    response = agent.run("first", stream=True)
    await asyncio.wait_for(response.__anext__(), TIMEOUT)
    await asyncio.wait_for(response.close(), TIMEOUT)
    ended = chat.cancelled.is_set()
    state = "ended" if ended else "not ended (its executor was still running)"
    print(f"observed: when close() returned, the workflow run had {state}")
    print("expected: when close() returned, the workflow run had ended")
    return ended


sys.exit(0 if asyncio.run(main()) else 1)
