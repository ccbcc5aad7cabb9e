"""A second task that reads a workflow's stream through a wrapper by mistake gets an error; the first reader's run
goes on and finishes with its output."""

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from agent_framework import Executor, ResponseStream, WorkflowBuilder, WorkflowContext, WorkflowEvent, handler

TIMEOUT = 10.0


class Slow(Executor):
    def __init__(self, started: asyncio.Event, release: asyncio.Event) -> None:
        super().__init__(id="slow")
        self.started = started
        self.release = release

    @handler
    async def work(self, text: str, ctx: WorkflowContext[str, str]) -> None:
        self.started.set()
        await self.release.wait()
        await ctx.yield_output(f"done:{text}")


def _final(events: Sequence[WorkflowEvent[Any]]) -> int:
    return len(events)


WRAPPERS: dict[str, Callable[[ResponseStream[Any, Any]], ResponseStream[Any, Any]]] = {
    "with_finalizer": lambda stream: stream.with_finalizer(_final),
    "map": lambda stream: stream.map(lambda event: event, _final),
}


@pytest.mark.parametrize("wrap", sorted(WRAPPERS))
async def test_a_mistaken_reader_through_a_wrapper_leaves_the_reading_run_alone(wrap: str) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    workflow = WorkflowBuilder(start_executor=Slow(started, release)).build()
    stream = workflow.run("a", stream=True)

    async def read() -> tuple[list[Any], str]:
        outputs = [event.data async for event in stream if event.type == "output"]
        return outputs, str((await stream.get_final_response()).get_final_state())

    reader = asyncio.ensure_future(read())
    await asyncio.wait_for(started.wait(), TIMEOUT)

    with pytest.raises(Exception):  # noqa: B017 - what the mistaken reader gets is not the point
        await asyncio.wait_for(WRAPPERS[wrap](stream).__anext__(), TIMEOUT)

    release.set()
    outputs, state = await asyncio.wait_for(reader, TIMEOUT)
    assert outputs == ["done:a"]
    assert state.endswith("IDLE")
