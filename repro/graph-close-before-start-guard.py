"""A workflow run whose stream is closed before its first read keeps the run guard.

run() takes the run guard when it returns the stream, and the guard is a weak reference to that
stream. Closing the stream before reading it ends the run, but while the caller still holds the
closed stream object, every later run() on the workflow is refused as "already running".
"""

import asyncio
import sys
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class Echo(Executor):
    @handler
    async def handle(self, text: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(text)


async def main() -> bool:
    workflow = WorkflowBuilder(start_executor=Echo(id="echo")).build()
    closed = workflow.run("a", stream=True)
    await asyncio.wait_for(closed.close(), TIMEOUT)
    try:
        outcome: Any = (await asyncio.wait_for(workflow.run("b"), TIMEOUT)).get_outputs()
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    print(f"observed: run('b') after closing run('a')'s unread stream gave {outcome}")
    print("expected: run('b') after closing run('a')'s unread stream gave ['b']")
    del closed
    return outcome == ["b"]


sys.exit(0 if asyncio.run(main()) else 1)
