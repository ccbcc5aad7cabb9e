"""Workflow.cancel_pending_requests() runs beside an active run and clears that run's runtime tools.

cancel_pending_requests() runs supersteps on the runner, state and context that run() uses, but
it does not check the run guard. Called while a run is active, it is accepted, and on its way out
it clears the active run's runtime tools, which the active run's executor then no longer sees.
"""

import asyncio
import sys
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class Worker(Executor):
    def __init__(self) -> None:
        super().__init__(id="worker")
        self.invoked = asyncio.Event()
        self.gate = asyncio.Event()
        self.tools_seen: list[str] | None = None

    @handler
    async def handle(self, text: str, ctx: WorkflowContext[Any, str]) -> None:
        self.invoked.set()
        await self.gate.wait()
        self.tools_seen = [getattr(tool, "name", "?") for tool in ctx.get_runtime_tools() or []]
        await ctx.yield_output(text)


def lookup() -> str:
    """The active run's tool."""
    return "found"


async def main() -> bool:
    worker = Worker()
    workflow = WorkflowBuilder(start_executor=worker).build()
    stream = workflow.run("job", stream=True, tools=[lookup])
    events = stream.__aiter__()
    while (await asyncio.wait_for(events.__anext__(), TIMEOUT)).type != "executor_invoked":
        pass
    await asyncio.wait_for(worker.invoked.wait(), TIMEOUT)

    try:
        await asyncio.wait_for(workflow.cancel_pending_requests(["no-such-request"]), TIMEOUT)
        accepted = "accepted"
    except Exception as exc:
        accepted = f"refused ({type(exc).__name__})"
    worker.gate.set()
    await asyncio.wait_for(stream.get_final_response(), TIMEOUT)
    print(f"observed: cancel_pending_requests() beside the run was {accepted}; the run saw tools {worker.tools_seen}")
    print("expected: cancel_pending_requests() beside the run was refused; the run saw tools ['lookup']")
    return accepted.startswith("refused") and worker.tools_seen == ["lookup"]


sys.exit(0 if asyncio.run(main()) else 1)
