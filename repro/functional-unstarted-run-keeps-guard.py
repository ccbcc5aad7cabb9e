"""A FunctionalWorkflow run that never started keeps the run guard for the life of the workflow.

A non-streaming run whose task is cancelled before it runs, or a streaming run whose stream is dropped
before it is read, never starts; its generator never runs the finally block that releases the guard, so
every later run of the workflow is refused with "Workflow is already running".
"""

import asyncio
import gc
import sys

from agent_framework import workflow


@workflow
async def echo(message: str) -> str:
    """Return the message."""
    return message


def admitted(wf, message: str) -> bool:
    """Whether the workflow admits a new streaming run."""
    try:
        wf.run(message, stream=True)
    except RuntimeError:
        return False
    return True


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    cancelled = echo.build()

    async def cancel_before_start() -> None:
        run = asyncio.ensure_future(cancelled.run("first"))
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)

    await asyncio.wait_for(asyncio.ensure_future(cancel_before_start()), 5)

    dropped = echo.build()
    stream = dropped.run("first", stream=True)
    del stream
    gc.collect()  # the dropped stream, and the cancelled run's, are garbage now

    after_cancel, after_drop = admitted(cancelled, "second"), admitted(dropped, "second")
    observed = f"next run admitted after a cancelled unstarted run: {after_cancel}; after a dropped one: {after_drop}"
    sys.stdout.write(f"observed: {observed}\n")
    sys.stdout.write("expected: next run admitted after a cancelled unstarted run: True; after a dropped one: True\n")
    return 0 if after_cancel and after_drop else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
