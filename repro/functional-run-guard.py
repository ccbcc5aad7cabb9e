"""The FunctionalWorkflow run guard is released by whoever comes first, not by the run that holds it.

A. Released early: an update gate refuses a streaming run's first update; the stream runs its cleanup hooks
   (the workflow's releases the guard) before it closes the suspended run, so a second run is admitted beside
   it. The first run's late finally block then releases the second run's guard, and a third run executes
   together with the second.
B. Kept forever: a run that never starts (its awaitable cancelled before the first step, or its stream dropped
   unread) never runs the finally block that releases the guard; every later run() is refused.
C. Replay input: a run started beside a pending request stores its input as the replay input before it runs;
   when it is stopped before it asks or completes, answering the earlier run's request replays the stopped
   run's input.
"""

import asyncio
import gc
import sys

from agent_framework import RunContext, workflow

TIMEOUT = 5


async def released_early() -> tuple[str, str, bool]:
    started: dict[str, asyncio.Event] = {}
    executing: set[str] = set()
    together: list[list[str]] = []
    finish = asyncio.Event()

    @workflow
    async def job(name: str) -> str:
        executing.add(name)
        together.extend([sorted(executing)] if len(executing) > 1 else [])
        started[name].set()
        await finish.wait()
        executing.discard(name)
        return name

    wf = job.build()
    hook_waits, hook_done = asyncio.Event(), asyncio.Event()

    async def slow_hook() -> None:
        hook_waits.set()
        await hook_done.wait()

    def refuse(_update: object) -> None:
        raise ValueError("refused by an update gate")

    def start(name: str) -> "asyncio.Future[object] | None":
        started[name] = asyncio.Event()
        try:
            stream = wf.run(name, stream=True)
        except RuntimeError:
            return None
        return asyncio.ensure_future(stream.get_final_response())

    started["first"] = asyncio.Event()
    first = wf.run("first", stream=True).with_update_gate(refuse).with_cleanup_hook(slow_hook)
    readers = [asyncio.ensure_future(first.get_final_response())]
    await asyncio.wait_for(hook_waits.wait(), TIMEOUT)
    admitted = []
    for name in ("second", "third"):
        reader = start(name)
        if reader is None:
            break
        admitted.append(name)
        readers.append(reader)
        await asyncio.wait_for(started[name].wait(), TIMEOUT)
        hook_done.set()  # the first run's hooks return and its generator is closed
        await asyncio.wait_for(asyncio.gather(readers[0], return_exceptions=True), TIMEOUT)
    hook_done.set()
    finish.set()
    await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), TIMEOUT)
    observed = f"runs admitted before the earlier one ended: {admitted}, bodies executing together: {together}"
    return observed, "runs admitted before the earlier one ended: [], bodies executing together: []", bool(admitted)


async def kept_forever() -> tuple[str, str, bool]:
    @workflow
    async def echo(text: str) -> str:
        return text

    cancelled, dropped = echo.build(), echo.build()
    task = asyncio.ensure_future(cancelled.run("never started"))
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    dropped.run("never read", stream=True)  # the stream is dropped at once
    del task
    gc.collect()  # both unstarted runs are garbage now
    await asyncio.sleep(0)  # and the loop has turned once since
    verdicts = []
    for wf in (cancelled, dropped):
        try:
            verdicts.append((await asyncio.wait_for(wf.run("next"), TIMEOUT)).get_outputs() == ["next"])
        except RuntimeError:
            verdicts.append(False)
    observed = f"next run admitted after a cancelled unstarted run: {verdicts[0]}, after a dropped one: {verdicts[1]}"
    return (
        observed,
        "next run admitted after a cancelled unstarted run: True, after a dropped one: True",
        not all(verdicts),
    )


async def replay_input() -> tuple[str, str, bool]:
    parked, go_on = asyncio.Event(), asyncio.Event()

    @workflow
    async def review(document: str, ctx: RunContext) -> str:
        if document == "c" and not go_on.is_set():
            parked.set()
            await go_on.wait()  # the second run is stopped here, before it asks anything
        answer = await ctx.request_info(document, response_type=str)
        return f"{document}:{answer}"

    wf = review.build()
    (request,) = (await asyncio.wait_for(wf.run("a"), TIMEOUT)).get_request_info_events()
    second = wf.run("c", stream=True)
    reading = asyncio.ensure_future(second.get_final_response())
    await asyncio.wait_for(parked.wait(), TIMEOUT)
    reading.cancel()  # the caller gives up on the second run
    await asyncio.wait_for(asyncio.gather(reading, return_exceptions=True), TIMEOUT)
    go_on.set()
    answered = await asyncio.wait_for(wf.run(responses={request.request_id: "yes"}), TIMEOUT)
    observed = f"answering the request of run 'a' gave {answered.get_outputs()}"
    return observed, "answering the request of run 'a' gave ['a:yes']", answered.get_outputs() != ["a:yes"]


async def main() -> int:
    """Reproduce each sub-finding, print what was observed and expected, and return the exit status."""
    results = {
        "A. guard released while the run is suspended": await released_early(),
        "B. guard kept by a run that never started": await kept_forever(),
        "C. replay input of a pending request": await replay_input(),
    }
    for name, (seen, want, bad) in results.items():
        print(f"{name}: {'REPRODUCES' if bad else 'fixed'}\n  observed: {seen}\n  expected: {want}")
    print("observed: " + "; ".join(f"{name[0]}) {seen}" for name, (seen, _, _) in results.items()))
    print("expected: " + "; ".join(f"{name[0]}) {want}" for name, (_, want, _) in results.items()))
    return 1 if any(bad for _, _, bad in results.values()) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
