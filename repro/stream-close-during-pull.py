"""ResponseStream.close() from another task while that task is inside a pull.

A reader task iterates a ResponseStream whose source is parked in its second pull; another task closes the
stream, as a server does when its client disconnects. Today close() fails ("already running") after running
the cleanup hooks while the source still runs. Expected: close() does not fail and runs no hook while the
source runs; the close takes effect when the pull in progress returns: the source ends, then the hooks run,
and the reading ends there.
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
    read: list[str] = []

    async def reader() -> str:
        try:
            async for update in stream:
                read.append(update)
        except RuntimeError as error:
            return f"RuntimeError: {error}"
        return "a normal end"

    reading = asyncio.create_task(reader())
    await asyncio.wait_for(parked.wait(), 5)
    try:
        await asyncio.wait_for(stream.close(), 5)
        closed = "close() returned"
    except Exception as exc:
        closed = f"close() raised {exc!r}"
    seen_at_close = list(events)
    release.set()
    ended = (await asyncio.wait_for(asyncio.gather(reading, return_exceptions=True), 5))[0]

    sys.stdout.write(
        f"observed: {closed}; when it returned: {seen_at_close}; the reader read {read}, then {ended}; "
        f"in the end: {events}\n"
    )
    sys.stdout.write(
        "expected: close() returned; when it returned: []; the reader read ['first', 'second'], then a normal end; "
        "in the end: ['source ended', 'cleanup hook']\n"
    )
    fixed = closed == "close() returned" and seen_at_close == [] and events == ["source ended", "cleanup hook"]
    return 0 if fixed and ended == "a normal end" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
