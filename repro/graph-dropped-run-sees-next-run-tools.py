"""An executor of a dropped workflow run runs with the next run's runtime tools.

Run A's executor is awaiting I/O when the caller drops A's stream. run() for run B installs B's
runtime tools on the shared context at once, while A's executor is still running; when A's I/O
completes, A's executor sees B's tools.
"""

import asyncio
import gc
import sys
from dataclasses import dataclass

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


@dataclass
class Job:
    run: str


class Caller(Executor):
    def __init__(self) -> None:
        super().__init__(id="caller")
        self.invoked = asyncio.Event()
        self.io_done = asyncio.Event()
        self.tools_seen: dict[str, list[str]] = {}

    @handler
    async def handle(self, job: Job, ctx: WorkflowContext[Job, str]) -> None:
        if job.run == "a":
            self.invoked.set()
            await self.io_done.wait()  # run A's I/O
        self.tools_seen[job.run] = [getattr(tool, "name", "?") for tool in ctx.get_runtime_tools() or []]
        await ctx.yield_output(f"{job.run}-done")


def tool_a() -> str:
    """Run A's tool."""
    return "a"


def tool_b() -> str:
    """Run B's tool."""
    return "b"


async def main() -> bool:
    caller = Caller()
    workflow = WorkflowBuilder(start_executor=caller).build()

    async def start_then_drop() -> None:
        stream = workflow.run(Job("a"), stream=True, tools=[tool_a])
        async for event in stream:
            if event.type == "executor_invoked":
                break
        await asyncio.wait_for(caller.invoked.wait(), TIMEOUT)

    await start_then_drop()
    gc.collect()  # A's stream is gone; its generator is finalized later by the event loop

    stream_b = workflow.run(Job("b"), stream=True, tools=[tool_b])
    caller.io_done.set()  # A's I/O completes after B was admitted
    await asyncio.wait_for(stream_b.get_final_response(), TIMEOUT)
    seen_by_a = caller.tools_seen.get("a")
    print(f"observed: run A's executor saw runtime tools {seen_by_a}")
    print("expected: run A's executor sees only its own tools ['tool_a'], or is cancelled before it reads any")
    return seen_by_a in (None, ["tool_a"])


sys.exit(0 if asyncio.run(main()) else 1)
