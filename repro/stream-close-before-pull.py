"""ResponseStream.close() before the first pull leaves an async generator source able to start.

A. A stream over an async generator is closed before anything was read; reading it afterwards starts the
   generator and yields its updates.
B. The same through a workflow: a FunctionalWorkflow stream closed unread still runs the workflow body
   when it is read afterwards, although close() already ran its cleanup hooks (which release the run guard).
"""

import asyncio
import sys
from typing import Any

from agent_framework import ResponseStream, workflow

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
    return report(findings)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
