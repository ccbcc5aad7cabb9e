"""A FunctionalWorkflow run started in an event loop that is then closed by hand (without ``shutdown_asyncgens()``),
its stream kept and read to the end on a new loop: no two runs of the workflow execute at once, as on the release."""

import asyncio
import warnings
from typing import Any

from agent_framework import ResponseStream, workflow

TIMEOUT = 10.0


def test_a_run_resumed_after_its_loop_was_closed_never_runs_beside_the_next_run() -> None:
    running: set[str] = set()
    overlaps: list[list[str]] = []
    entered: dict[str, asyncio.Event] = {}
    gates: dict[str, asyncio.Event] = {}

    @workflow
    async def tracked(name: str) -> str:
        running.add(name)
        if len(running) > 1:
            overlaps.append(sorted(running))
        if name in gates:
            entered[name].set()
            await gates[name].wait()
        running.discard(name)
        return name

    wf = tracked.build()
    kept: list[ResponseStream[Any, Any]] = []

    async def start_first() -> str:
        stream = wf.run("first", stream=True)
        kept.append(stream)
        return (await asyncio.wait_for(anext(aiter(stream)), TIMEOUT)).type  # suspended at its started event

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        loop = asyncio.new_event_loop()
        try:
            assert loop.run_until_complete(start_first()) == "started"
        finally:
            loop.close()  # no shutdown_asyncgens(): the first run's generator stays suspended, and kept

    async def next_loop() -> list[str]:
        entered["second"], gates["second"] = asyncio.Event(), asyncio.Event()
        second_read: asyncio.Task[Any] | None = None
        try:
            second = wf.run("second", stream=True)
        except RuntimeError:
            second = None  # the release refuses it: the first run has not ended
        if second is not None:
            second_read = asyncio.create_task(second.get_final_response())
            await asyncio.wait_for(entered["second"].wait(), TIMEOUT)  # the second run executes
        try:
            first = await asyncio.wait_for(kept[0].get_final_response(), TIMEOUT)  # the first run goes on here
        finally:
            gates["second"].set()
            if second_read is not None:
                await asyncio.wait_for(second_read, TIMEOUT)
        return [str(output) for output in first.get_outputs()]

    assert asyncio.run(next_loop()) == ["first"]
    assert overlaps == [], f"two runs of one workflow executed at once: {overlaps}"
