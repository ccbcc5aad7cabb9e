"""ResponseStream.close() from another task, while that task is inside a pull, runs the cleanup hooks early.

A reader task iterates a ResponseStream whose source is parked in its second pull. Another task calls
close(). Closing the running async generator fails ("already running"), but close() runs the cleanup
hooks anyway, while the source keeps running.
"""

import asyncio
import sys

from agent_framework import ResponseStream

events: list[str] = []
parked = asyncio.Event()
release = asyncio.Event()


async def source():
    """The stream's update source."""
    try:
        yield "first"
        parked.set()
        await release.wait()
        yield "second"
    finally:
        events.append("source ended")


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    stream = ResponseStream(source(), cleanup_hooks=[lambda: events.append("cleanup hook")])

    async def read() -> list[str]:
        return [update async for update in stream]

    reader = asyncio.create_task(read())
    await asyncio.wait_for(parked.wait(), 5)
    try:
        await asyncio.wait_for(stream.close(), 5)
        closed = "close() returned"
    except Exception as exc:
        closed = f"close() raised {exc!r}"
    seen_at_close = list(events)
    release.set()
    await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), 5)

    sys.stdout.write(f"observed: {closed}; when it returned: {seen_at_close}\n")
    sys.stdout.write("expected: close() returned; when it returned: ['source ended', 'cleanup hook']\n")
    return 0 if seen_at_close == ["source ended", "cleanup hook"] else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
