"""ResponseStream.close() from another task while a read is inside the stream's async generator source.

A reader task is suspended inside the source (it awaits its service); another task calls close(), as a server
does when its client disconnects.

A. A plain stream: close() raises "aclose(): asynchronous generator is already running" after it has run the
   cleanup hooks, while the source goes on.
B. A buffered stream (buffer_updates()) during the read that fills its buffer: the same.
C. A FunctionalWorkflow stream: the cleanup hook that close() runs early releases the run guard, so a second
   run of the workflow is admitted while the first run's body still executes.

Expected: close() still raises that RuntimeError (the source cannot be closed while it runs) and changes nothing
else: no hook runs while the source runs, the reader goes on and gets every update, and the hooks run once, when
the stream ends (the source ended, then the hooks). The first run keeps its guard, so the second run is refused.
"""

import asyncio
import sys
from typing import Any

from agent_framework import ResponseStream, workflow

TIMEOUT = 5
REFUSED = "close() raised RuntimeError('aclose(): asynchronous generator is already running') with [] run"


class Service:
    """What the source awaits: ``waiting`` is set while it waits, ``answer()`` lets it go on."""

    def __init__(self) -> None:
        self.waiting, self._answered = asyncio.Event(), asyncio.Event()
        self.log: list[str] = []

    async def call(self) -> None:
        self.waiting.set()
        await self._answered.wait()

    def answer(self) -> None:
        self._answered.set()

    def hook(self) -> None:
        self.log.append("cleanup hook")


async def close_from_another_task(stream: ResponseStream[Any, Any], service: Service) -> str:
    await asyncio.wait_for(service.waiting.wait(), TIMEOUT)
    (error,) = await asyncio.wait_for(asyncio.gather(stream.close(), return_exceptions=True), TIMEOUT)
    return f"close() {'raised ' + repr(error) if error else 'returned'} with {service.log} run"


async def plain() -> tuple[str, str, bool]:
    service = Service()

    async def source():
        try:
            yield "first"
            await service.call()
            yield "second"
        finally:
            service.log.append("source ended")

    stream = ResponseStream(source(), cleanup_hooks=[service.hook])
    reader = asyncio.ensure_future(asyncio.wait_for(_drain(stream), TIMEOUT))
    at_close = await close_from_another_task(stream, service)
    service.answer()
    (read,) = await asyncio.gather(reader, return_exceptions=True)
    observed = f"{at_close}; the reader read {read}; in the end {service.log}"
    expected = f"{REFUSED}; the reader read ['first', 'second']; in the end ['source ended', 'cleanup hook']"
    return observed, expected, observed != expected


async def buffered() -> tuple[str, str, bool]:
    service = Service()

    async def source():
        try:
            await service.call()
            yield "the answer"
        finally:
            service.log.append("source ended")

    stream = ResponseStream(source(), finalizer=list, cleanup_hooks=[service.hook]).buffer_updates()
    reader = asyncio.ensure_future(asyncio.wait_for(stream.get_final_response(), TIMEOUT))
    at_close = await close_from_another_task(stream, service)
    service.answer()
    await asyncio.gather(reader, return_exceptions=True)
    observed = f"{at_close}; in the end {service.log}"
    expected = f"{REFUSED}; in the end ['source ended', 'cleanup hook']"
    return observed, expected, observed != expected


async def functional() -> tuple[str, str, bool]:
    service = Service()

    @workflow
    async def job(name: str) -> str:
        await service.call()
        return name

    wf = job.build()
    stream = wf.run("first", stream=True).with_cleanup_hook(service.hook)
    reader = asyncio.ensure_future(asyncio.wait_for(_drain(stream), TIMEOUT))
    at_close = await close_from_another_task(stream, service)
    try:
        await wf.run("second", stream=True).close()
        second = "admitted"
    except RuntimeError:
        second = "refused"
    service.answer()
    await asyncio.gather(reader, return_exceptions=True)
    observed = f"{at_close}; a second run while the first body still executes was {second}"
    expected = f"{REFUSED}; a second run while the first body still executes was refused"
    return observed, expected, observed != expected


async def _drain(stream: ResponseStream[Any, Any]) -> list[Any]:
    return [update async for update in stream]


async def main() -> int:
    """Reproduce each sub-finding, print what was observed and expected, and return the exit status."""
    findings = [("A. plain stream", await plain()), ("B. buffered stream", await buffered())]
    findings.append(("C. FunctionalWorkflow stream", await functional()))
    for name, (observed, expected, reproduces) in findings:
        print(f"{name}: {'REPRODUCES' if reproduces else 'fixed'}\n  observed: {observed}\n  expected: {expected}")
    print("observed: " + "; ".join(f"{name[0]}) {finding[0]}" for name, finding in findings))
    print("expected: " + "; ".join(f"{name[0]}) {finding[1]}" for name, finding in findings))
    return 1 if any(finding[2] for _, finding in findings) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
