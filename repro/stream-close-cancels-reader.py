"""What a reader sees when another task closes the ResponseStream it is reading.

A reader task iterates a stream whose source is parked in a pull; another task closes the stream, as a
server does when the client disconnects. Today close() fails with "already running" and the reader goes
on reading after close(). Proposed: close() stops the pull (by cancelling the reader's task inside the
source), and the reader's loop simply ends: no CancelledError in the reader, no update after close().
"""

import asyncio
import sys

from agent_framework import ResponseStream

parked = asyncio.Event()
release = asyncio.Event()


async def source():
    """The stream's update source."""
    yield "first"
    parked.set()
    await release.wait()
    yield "after close"


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    stream = ResponseStream(source())

    async def read() -> list[str]:
        return [update async for update in stream]

    reader = asyncio.create_task(read())
    await asyncio.wait_for(parked.wait(), 5)
    try:
        await asyncio.wait_for(stream.close(), 5)
        closed = "close() returned"
    except Exception as exc:
        closed = f"close() raised {exc!r}"
    release.set()
    done = await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), 5)

    sys.stdout.write(f"observed: {closed}; the reader's loop ended with {done[0]!r}\n")
    sys.stdout.write("expected: close() returned; the reader's loop ended with ['first']\n")
    return 0 if done[0] == ["first"] else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
