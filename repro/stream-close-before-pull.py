"""ResponseStream.close() before the first pull leaves an async generator source able to start.

A. A stream over an async generator is closed before anything was read; reading it afterwards starts the
   generator and yields its updates.
B. The same through a workflow: a FunctionalWorkflow stream closed unread still runs the workflow body
   when it is read afterwards, although close() already ran its cleanup hooks (which release the run guard).
C. Context, not a finding (the same on the release and with the fix): closing an unread Agent.run(stream=True)
   makes the model call inside close(), because the telemetry layer's cleanup hook asks for the final response
   of the from_awaitable() stream, which resolves its coroutine. Whether that should change is the question
   the issue puts to the maintainers.
"""

import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
    workflow,
)
from agent_framework.observability import ChatTelemetryLayer

TIMEOUT = 5


async def generator_source() -> tuple[str, str, bool]:
    started: list[int] = []

    async def numbers():
        started.append(1)
        yield 1
        yield 2

    stream = ResponseStream(numbers())
    await asyncio.wait_for(stream.close(), TIMEOUT)
    read = await asyncio.wait_for(_drain(stream), TIMEOUT)
    observed = f"source started: {bool(started)}, read after close(): {read}"
    return observed, "source started: False, read after close(): []", bool(started) or bool(read)


async def workflow_source() -> tuple[str, str, bool]:
    bodies: list[str] = []

    @workflow
    async def greet(name: str) -> str:
        bodies.append(name)
        return f"hello {name}"

    stream = greet.build().run("unread", stream=True)
    await asyncio.wait_for(stream.close(), TIMEOUT)
    await asyncio.wait_for(_drain(stream), TIMEOUT)
    observed = f"workflow bodies run after close(): {bodies}"
    return observed, "workflow bodies run after close(): []", bool(bodies)


class CountingClient(ChatTelemetryLayer[Any], BaseChatClient[Any]):
    """A chat client with telemetry that answers "hi" and counts the calls that reached the model."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        self.calls += 1

        async def updates():
            yield ChatResponseUpdate(role="assistant", contents=[Content.from_text("hi")])

        return ResponseStream(updates(), finalizer=ChatResponse.from_updates)


async def unread_agent_stream() -> str:
    client = CountingClient()
    stream = Agent(client=client, name="agent").run("hello", stream=True)
    before = client.calls
    await asyncio.wait_for(stream.close(), TIMEOUT)
    final = await asyncio.wait_for(stream.get_final_response(), TIMEOUT)
    inside = client.calls - before
    return (
        f"model calls before close(): {before}, inside close(): {inside}; get_final_response() after it: {final.text!r}"
    )


async def _drain(stream: ResponseStream[Any, Any]) -> list[Any]:
    return [update async for update in stream]


def report(findings: dict[str, tuple[str, str, bool]]) -> int:
    for name, (observed, expected, reproduces) in findings.items():
        print(f"{name}: {'REPRODUCES' if reproduces else 'fixed'}\n  observed: {observed}\n  expected: {expected}")
    for column, label in enumerate(("observed", "expected")):
        print(f"{label}: " + "; ".join(f"{name[0]}) {finding[column]}" for name, finding in findings.items()))
    return int(any(finding[2] for finding in findings.values()))


async def main() -> int:
    """Reproduce each sub-finding, print what was observed and expected, and return the exit status."""
    findings = {
        "A. async generator source read after close()": await generator_source(),
        "B. FunctionalWorkflow stream read after close()": await workflow_source(),
    }
    print(f"C. context, unread Agent.run(stream=True) closed: {await unread_agent_stream()}")
    return report(findings)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
