"""A buffered ResponseStream closed from another task while it reads its source.

A buffered stream (``buffer_updates()``, ``stream_updates=False``) reads its whole source before it hands out
the first update. A reader task starts that read; the source parks in its second pull; another task closes the
stream. Today close() fails ("already running") after running the cleanup hooks while the source still runs.
Expected: close() does not fail and runs no hook while the source runs; the close takes effect when the pull
in progress returns (the source ends, then the hooks run), as for a stream that is not buffered.
"""

import asyncio
import sys

from agent_framework import ResponseStream

log: list[str] = []
source_waits = asyncio.Event()
answer_arrives = asyncio.Event()


async def guarded_answer():
    """A source that waits for its service before the first update, as a model call does."""
    try:
        source_waits.set()
        await answer_arrives.wait()
        yield "the answer"
    finally:
        log.append("source ended")


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    stream = ResponseStream(guarded_answer(), cleanup_hooks=[lambda: log.append("cleanup hook")]).buffer_updates()
    reading = asyncio.create_task(stream.get_final_response())
    await asyncio.wait_for(source_waits.wait(), 5)
    (closed,) = await asyncio.wait_for(asyncio.gather(stream.close(), return_exceptions=True), 5)
    log_at_close = list(log)
    answer_arrives.set()
    (reader_got,) = await asyncio.wait_for(asyncio.gather(reading, return_exceptions=True), 5)

    sys.stdout.write(
        f"observed: close() gave {closed!r}; then {log_at_close}; in the end {log}; the reader got {reader_got!r}\n"
    )
    sys.stdout.write("expected: close() gave None; then []; in the end ['source ended', 'cleanup hook']\n")
    return 0 if closed is None and log_at_close == [] and log == ["source ended", "cleanup hook"] else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
