"""A FunctionalWorkflowAgent response's own cleanup hooks run on a close from another task, as on the release."""

import asyncio
from typing import Any

from agent_framework import ResponseStream, RunContext, workflow

TIMEOUT = 10.0


async def _response_in_its_read(
    go: asyncio.Event,
) -> tuple[ResponseStream[Any, Any], "asyncio.Future[Any]"]:
    """A streaming response of an agent whose workflow waits for ``go``, and its first read, inside the workflow."""
    entered = asyncio.Event()

    @workflow
    async def gated(message: Any, ctx: RunContext) -> str:
        entered.set()
        await go.wait()
        return "done"

    response = gated.build().as_agent().run("hello", stream=True)
    reader = asyncio.ensure_future(asyncio.wait_for(anext(aiter(response)), TIMEOUT))
    await asyncio.wait_for(entered.wait(), TIMEOUT)
    return response, reader


async def test_a_users_cleanup_hook_runs_when_another_task_closes_the_response_during_a_read() -> None:
    go = asyncio.Event()
    response, reader = await _response_in_its_read(go)
    response.with_cleanup_hook(go.set)  # the user's hook is what lets the workflow finish
    await asyncio.wait_for(asyncio.gather(response.close(), return_exceptions=True), TIMEOUT)

    assert go.is_set(), "the user's cleanup hook did not run"
    assert (await reader).text == "done"


async def test_a_users_cleanup_hook_runs_after_a_second_reader_was_refused() -> None:
    go = asyncio.Event()
    ran: list[str] = []
    response, reader = await _response_in_its_read(go)
    response.with_cleanup_hook(lambda: ran.append("user hook"))
    await asyncio.wait_for(asyncio.gather(anext(aiter(response)), return_exceptions=True), TIMEOUT)  # refused
    go.set()
    assert (await reader).text == "done"
    await asyncio.wait_for(response.close(), TIMEOUT)

    assert ran == ["user hook"]
