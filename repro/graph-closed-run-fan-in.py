"""A fan-in edge half filled by a closed workflow run is completed by the next run.

Run A's fast branch reaches a fan-in edge while its slow branch is still running, and the caller
closes A's stream. The fan-in edge keeps A's message. In run B the fast branch's message arrives
again, and the fan-in fires with A's message and B's, instead of B's two.
"""

import asyncio
import sys
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class Forward(Executor):
    @handler
    async def handle(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)


class Slow(Executor):
    def __init__(self) -> None:
        super().__init__(id="slow")
        self.gate: dict[str, asyncio.Event] = {"a": asyncio.Event(), "b": asyncio.Event()}

    @handler
    async def handle(self, text: str, ctx: WorkflowContext[str]) -> None:
        await self.gate[text].wait()
        await ctx.send_message(text)


class Join(Executor):
    def __init__(self) -> None:
        super().__init__(id="join")
        self.joined: list[list[str]] = []

    @handler
    async def handle(self, texts: list[str], ctx: WorkflowContext[Any, str]) -> None:
        self.joined.append(sorted(texts))
        await ctx.yield_output("joined")


async def main() -> bool:
    start, fast, relay, slow, join = Forward(id="start"), Forward(id="fast"), Forward(id="relay"), Slow(), Join()
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_fan_out_edges(start, [fast, relay])
        .add_edge(relay, slow)
        .add_fan_in_edges([fast, slow], join)
        .build()
    )

    stream = workflow.run("a", stream=True)
    async for event in stream:
        if event.type == "executor_invoked" and event.executor_id == "slow":
            break  # A's fast branch has reached the fan-in; its slow branch has not
    await stream.close()

    slow.gate["b"].set()
    await asyncio.wait_for(workflow.run("b"), TIMEOUT)
    print(f"observed: the fan-in fired with {join.joined}")
    print("expected: the fan-in fired with [['b', 'b']]")
    return join.joined == [["b", "b"]]


sys.exit(0 if asyncio.run(main()) else 1)
