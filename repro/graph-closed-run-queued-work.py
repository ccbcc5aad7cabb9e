"""Events, messages and fan-in buffers a closed workflow run left behind reach the next run.

A caller reads a run's stream up to its first output and closes it. The run is closed, but the
second output it had already queued, and the message it had sent for its next superstep, stay on
the runner context that all runs of the Workflow share. The next run delivers that output as its
own, and a run started with a new message is refused because of the closed run's message.

Likewise, when run A's fast branch has reached a fan-in edge while its slow branch is still running
and the caller closes A's stream, the fan-in edge keeps A's message: in run B it fires with A's
message and B's, instead of B's two.
"""

import asyncio
import sys
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class TwoOutputs(Executor):
    @handler
    async def handle(self, text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"{text}-first")
        await ctx.yield_output(f"{text}-second")
        await ctx.send_message(text)


class Sink(Executor):
    @handler
    async def handle(self, text: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"{text}-sink")


async def queued_work() -> bool:
    source, sink = TwoOutputs(id="source"), Sink(id="sink")
    workflow = WorkflowBuilder(start_executor=source).add_edge(source, sink).build()

    stream = workflow.run("a", stream=True)
    async for event in stream:
        if event.type == "output":
            break
    await stream.close()

    try:
        outputs: Any = (await asyncio.wait_for(workflow.run("b"), TIMEOUT)).get_outputs()
    except RuntimeError as exc:
        outputs = f"RuntimeError: {exc}"
    expected = ["b-first", "b-second", "b-sink"]
    print(f"observed: the next run returned {outputs}")
    print(f"expected: the next run returns {expected}")
    return outputs == expected


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


async def fan_in() -> bool:
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


async def main() -> bool:
    return all([await queued_work(), await fan_in()])


sys.exit(0 if asyncio.run(main()) else 1)
