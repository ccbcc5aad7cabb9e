"""A dropped workflow stream that the garbage collector frees in a reference cycle is closed several times.

A graph run's events come from nested async generators: the stream's generator iterates the
workflow's traced generator, which iterates the runner's. When a dropped stream is only freed by
the cycle collector, the collector finds all of them unreachable together, and asyncio's
async-generator finalizer schedules aclose() for each one. The first aclose() is still closing
the inner generators when the others start: "aclose(): asynchronous generator is already running".
"""

import asyncio
import gc
import sys
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class Slow(Executor):
    def __init__(self) -> None:
        super().__init__(id="slow")
        self.busy = asyncio.Event()
        self.release = asyncio.Event()  # never set: the rest of the work waits on it

    @handler
    async def handle(self, message: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(message)
        self.busy.set()
        await self.release.wait()


async def main() -> bool:
    loop = asyncio.get_running_loop()
    reported: list[str] = []

    def report(_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        reported.append(f"{context['message']}: {context.get('exception')!r}")

    loop.set_exception_handler(report)

    slow = Slow()
    workflow = WorkflowBuilder(start_executor=slow).build()
    stream = workflow.run("first", stream=True)
    async for event in stream:
        if event.type == "output":
            break
    await asyncio.wait_for(slow.busy.wait(), TIMEOUT)
    holder: list[Any] = [stream]
    holder.append(holder)  # the stream is kept by an object in a reference cycle, then dropped
    del stream, holder, event
    gc.collect()
    others = asyncio.all_tasks() - {asyncio.current_task()}
    if others:
        await asyncio.wait(others, timeout=TIMEOUT)
    del others
    gc.collect()  # a failed task reports its exception when it is freed

    print(f"observed: the loop reported {reported or 'nothing'} while it closed the dropped run")
    print("expected: the loop reported nothing: the dropped run is closed once, by its stream")
    return not reported


sys.exit(0 if asyncio.run(main()) else 1)
