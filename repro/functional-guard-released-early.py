"""FunctionalWorkflow releases its run guard while the run is still suspended.

An update gate refuses the first update of a streaming run. The stream runs its cleanup hooks before it
closes the run, and the FunctionalWorkflow hook releases the run guard there, while the run is still
suspended at a yield: a second run is admitted beside it. When the first run is finally closed, its
finally block releases the guard again, now the second run's, and a third run is admitted beside the second.
"""

import asyncio
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
    wf = echo.build()
    hook_running = asyncio.Event()
    finish_hook = asyncio.Event()

    def refuse(_event) -> None:
        raise ValueError("refused by an update gate")

    async def slow_cleanup() -> None:
        hook_running.set()
        await finish_hook.wait()

    first = wf.run("first", stream=True).with_update_gate(refuse).with_cleanup_hook(slow_cleanup)
    reader = asyncio.create_task(first.get_final_response())
    await asyncio.wait_for(hook_running.wait(), 5)
    while_first_suspended = admitted(wf, "second")
    finish_hook.set()
    await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), 5)
    beside_second = admitted(wf, "third") if while_first_suspended else False

    observed = (
        f"admitted while the first run was suspended: {while_first_suspended}; beside the second: {beside_second}"
    )
    sys.stdout.write(f"observed: {observed}\n")
    sys.stdout.write("expected: admitted while the first run was suspended: False; beside the second: False\n")
    return 1 if while_first_suspended or beside_second else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
