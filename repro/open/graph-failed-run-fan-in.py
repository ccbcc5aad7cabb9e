"""After a workflow run fails, the next run's fan-in joins the failed run's message.

Run A fans out to a fast branch and a slower chain that join again. A's fast branch reaches the fan-in,
then the slow branch fails, so run A fails. Run B with a new message must not join run A's message with its
own (whether it is refused or runs without it).

Exit status: 1 when run B's join contains the failed run's message (the bug), 0 otherwise.
"""

import asyncio
import sys
from dataclasses import dataclass
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5


@dataclass
class Job:
    run: str


class Forward(Executor):
    def __init__(self, id: str, fail_on: str | None = None) -> None:
        super().__init__(id=id)
        self.fail_on = fail_on

    @handler
    async def forward(self, job: Job, ctx: WorkflowContext[Job]) -> None:
        if job.run == self.fail_on:
            raise RuntimeError(f"{self.id} failed")
        await ctx.send_message(job)


class Join(Executor):
    def __init__(self) -> None:
        super().__init__(id="join")
        self.joined: list[list[str]] = []

    @handler
    async def join(self, jobs: list[Job], ctx: WorkflowContext[Any, str]) -> None:
        self.joined.append(sorted(job.run for job in jobs))
        await ctx.yield_output("joined")


async def main() -> int:
    start, fast, relay, hop = Forward("start"), Forward("fast"), Forward("relay"), Forward("hop")
    slow, join = Forward("slow", fail_on="a"), Join()
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_fan_out_edges(start, [fast, relay])
        .add_edge(relay, hop)
        .add_edge(hop, slow)
        .add_fan_in_edges([fast, slow], join)
        .build()
    )
    try:
        await asyncio.wait_for(workflow.run(Job("a")), TIMEOUT)
    except RuntimeError as exc:
        print(f"run a failed as intended: {exc}")
    try:
        await asyncio.wait_for(workflow.run(Job("b")), TIMEOUT)
    except RuntimeError as exc:
        print(f"run b refused: {exc}")
    print(f"observed: the fan-in joined {join.joined}")
    print("expected: no join contains run a's message")
    return 1 if any("a" in runs for runs in join.joined) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
