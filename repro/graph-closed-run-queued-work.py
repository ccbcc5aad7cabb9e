"""Events and messages a closed workflow run left queued reach the next run.

A caller reads a run's stream up to its first output and closes it. The run is closed, but the
second output it had already queued, and the message it had sent for its next superstep, stay on
the runner context that all runs of the Workflow share. The next run delivers that output as its
own, and a run started with a new message is refused because of the closed run's message.
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


async def main() -> bool:
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


sys.exit(0 if asyncio.run(main()) else 1)
