"""ResponseStream.from_awaitable(...) closed before it was read leaves what it wraps open.

Two streams made with from_awaitable() are closed before anything was read. The first was never awaited:
its coroutine is left unawaited (Python later warns "coroutine ... was never awaited"). The second was
awaited (``await stream``), which resolved it to the stream the coroutine returned: that stream is not
closed, so its cleanup hooks never run.
"""

import asyncio
import inspect
import sys

from agent_framework import ResponseStream

events: list[str] = []


async def updates():
    """The update source of the stream the coroutines return."""
    yield "first"


async def open_stream() -> ResponseStream[str, list[str]]:
    """What an application passes to from_awaitable(): a coroutine that opens a stream."""
    return ResponseStream(updates(), cleanup_hooks=[lambda: events.append("cleanup hook")])


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    opening = open_stream()
    never_read = ResponseStream.from_awaitable(opening)
    await asyncio.wait_for(never_read.close(), 5)
    state = inspect.getcoroutinestate(opening)
    opening.close()  # keep the reproduction itself free of the warning

    resolved = ResponseStream.from_awaitable(open_stream())
    await asyncio.wait_for(resolved, 5)
    await asyncio.wait_for(resolved.close(), 5)

    sys.stdout.write(f"observed: the unread stream's coroutine is {state}; hooks run: {events}\n")
    sys.stdout.write("expected: the unread stream's coroutine is CORO_CLOSED; hooks run: ['cleanup hook']\n")
    return 0 if state == inspect.CORO_CLOSED and events == ["cleanup hook"] else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
