"""ResponseStream.close() before the first pull leaves the source alone.

A map() wrapper is closed before anything was read: the stream it wraps is not closed, so that stream's
cleanup hooks never run. And a stream closed before its first pull still starts its async generator
source when it is read afterwards.
"""

import asyncio
import sys

from agent_framework import ResponseStream


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    cleaned: list[str] = []
    started: list[str] = []

    async def source():
        """The stream's update source."""
        started.append("source started")
        yield 1

    inner = ResponseStream(source(), cleanup_hooks=[lambda: cleaned.append("inner cleanup hook")])
    outer = inner.map(lambda update: update, list)
    await asyncio.wait_for(outer.close(), 5)

    plain = ResponseStream(source())
    await asyncio.wait_for(plain.close(), 5)

    async def read():
        return [update async for update in plain]

    read_after_close = await asyncio.wait_for(read(), 5)

    observed = f"wrapped stream hooks {cleaned}, source {started}, read after close {read_after_close}"
    sys.stdout.write(f"observed: {observed}\n")
    sys.stdout.write("expected: wrapped stream hooks ['inner cleanup hook'], source [], read after close []\n")
    return 0 if (cleaned, started, read_after_close) == (["inner cleanup hook"], [], []) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
