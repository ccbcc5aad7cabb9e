"""A graph run dropped mid-superstep in an event loop that is then closed by hand (without ``shutdown_asyncgens()``)
is torn down only when the garbage collector finds it, which may be while the next run, on a new loop, is going: that
teardown must leave the next run's work alone."""

import asyncio
import gc
from dataclasses import dataclass

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 10.0


@dataclass
class Job:
    run: str


class Waiting(Executor):
    """Waits for its run's I/O, then yields an output."""

    def __init__(self) -> None:
        super().__init__(id="waiting")
        self.started: dict[str, asyncio.Event] = {}
        self.io: dict[str, asyncio.Event] = {}

    def add(self, run: str) -> None:
        self.started[run], self.io[run] = asyncio.Event(), asyncio.Event()

    @handler
    async def handle(self, job: Job, ctx: WorkflowContext[Job, str]) -> None:
        self.started[job.run].set()
        await self.io[job.run].wait()
        await ctx.yield_output(f"{job.run}-done")


def test_the_teardown_of_a_run_lost_with_its_loop_leaves_the_next_runs_message() -> None:
    waiting = Waiting()
    workflow = WorkflowBuilder(start_executor=waiting).build()

    async def first_run() -> None:
        waiting.add("a")
        stream = workflow.run(Job("a"), stream=True)
        async for event in stream:
            if event.type == "executor_invoked":
                break
        await asyncio.wait_for(waiting.started["a"].wait(), TIMEOUT)
        del stream  # dropped mid-superstep: the loop starts to close the run, which waits for its executor
        for _ in range(10):
            await asyncio.sleep(0)

    async def next_run() -> list[object]:
        waiting.add("b")
        waiting.io["b"].set()
        stream = workflow.run(Job("b"), stream=True)
        events = aiter(stream)
        while (await asyncio.wait_for(anext(events), TIMEOUT)).type != "superstep_started":
            pass  # the next run has queued its message for its first superstep
        gc.collect()  # the lost run is collected now
        async for _ in events:
            pass
        return (await stream.get_final_response()).get_outputs()

    gc.disable()  # the lost run is collected only where the program says so
    try:
        loop = asyncio.new_event_loop()
        loop.run_until_complete(first_run())
        loop.close()  # by hand, without shutdown_asyncgens()
        del loop
        outputs = asyncio.run(next_run())
    finally:
        gc.enable()

    assert outputs == ["b-done"]
