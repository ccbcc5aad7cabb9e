"""The next run commits, and checkpoints, a state write staged by a dropped run's unfinished superstep.

Run A stages a write and is still in its superstep when the caller drops A's stream. Run B is
admitted as soon as the stream is collected, before A's generator has been finalized, and B's
first commit commits A's staged write. B's checkpoints then carry it.
"""

import asyncio
import gc
import sys
from dataclasses import dataclass

from agent_framework import Executor, InMemoryCheckpointStorage, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


@dataclass
class Job:
    run: str


class Stager(Executor):
    def __init__(self) -> None:
        super().__init__(id="stager")
        self.staged = asyncio.Event()

    @handler
    async def handle(self, job: Job, ctx: WorkflowContext[Job, str]) -> None:
        ctx.set_state(f"{job.run}_key", f"from-{job.run}")
        if job.run == "a":
            self.staged.set()
            await asyncio.Event().wait()  # run A is abandoned in the middle of this superstep
        await ctx.yield_output(f"{job.run}-done")


async def main() -> bool:
    stager = Stager()
    workflow = WorkflowBuilder(start_executor=stager).build()

    async def start_then_drop() -> None:
        stream = workflow.run(Job("a"), stream=True)
        async for event in stream:
            if event.type == "executor_invoked":
                break
        await asyncio.wait_for(stager.staged.wait(), TIMEOUT)

    await start_then_drop()
    gc.collect()  # A's stream is gone; its generator is finalized later by the event loop

    storage = InMemoryCheckpointStorage()
    await asyncio.wait_for(workflow.run(Job("b"), checkpoint_storage=storage), TIMEOUT)
    checkpoints = await storage.list_checkpoints(workflow_name=workflow.name)
    leaked = sorted({key for checkpoint in checkpoints for key in checkpoint.state if key == "a_key"})
    print(f"observed: run B's {len(checkpoints)} checkpoint(s) contain run A's keys {leaked}")
    print("expected: run B's checkpoints contain no key staged by the dropped run A")
    return not leaked


sys.exit(0 if asyncio.run(main()) else 1)
