"""FunctionalWorkflow releases its run guard while the run is still suspended, so two runs execute together.

An update gate refuses the first update of a streaming run. The stream runs its cleanup hooks before it
closes the run, and the FunctionalWorkflow hook releases the run guard there, while the run is still
suspended at a yield: a second run is admitted beside it. When the first run is finally closed, its
finally block releases the guard again, now the second run's, and a third run is admitted and executes
while the second is still executing.
"""

import asyncio
import sys

from agent_framework import workflow

entered: dict[str, asyncio.Event] = {}
running: list[str] = []
overlaps: list[list[str]] = []
proceed = asyncio.Event()


@workflow
async def tracked(message: str) -> str:
    """Record which runs execute at the same time, then wait to be let go."""
    running.append(message)
    if len(running) > 1:
        overlaps.append(sorted(running))
    entered[message].set()
    try:
        await proceed.wait()
        return message
    finally:
        running.remove(message)


def start(wf, message: str) -> asyncio.Task | None:
    """Start a streaming run read in a task of its own, or None when the run guard refuses it."""
    entered[message] = asyncio.Event()
    try:
        stream = wf.run(message, stream=True)
    except RuntimeError:
        return None
    return asyncio.create_task(stream.get_final_response())


async def main() -> int:
    """Reproduce, print what was observed and expected, and return the exit status."""
    wf = tracked.build()
    hook_running = asyncio.Event()
    finish_hook = asyncio.Event()

    def refuse(_event) -> None:
        raise ValueError("refused by an update gate")

    async def slow_cleanup() -> None:
        hook_running.set()
        await finish_hook.wait()

    first = wf.run("first", stream=True).with_update_gate(refuse).with_cleanup_hook(slow_cleanup)
    readers = [asyncio.create_task(first.get_final_response())]
    await asyncio.wait_for(hook_running.wait(), 5)
    second = start(wf, "second")
    if second is not None:
        readers.append(second)
        await asyncio.wait_for(entered["second"].wait(), 5)
    finish_hook.set()
    await asyncio.wait_for(asyncio.gather(readers[0], return_exceptions=True), 5)
    third = start(wf, "third") if second is not None else None
    if third is not None:
        readers.append(third)
        await asyncio.wait_for(entered["third"].wait(), 5)
    proceed.set()
    await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), 5)

    sys.stdout.write(
        f"observed: admitted while the first run was suspended: {second is not None}; "
        f"workflow bodies that executed together: {overlaps}\n"
    )
    sys.stdout.write(
        "expected: admitted while the first run was suspended: False; workflow bodies that executed together: []\n"
    )
    return 1 if second is not None or overlaps else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
