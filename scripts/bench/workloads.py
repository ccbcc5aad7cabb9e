"""Benchmark workloads, served by a process in a framework venv: ``python workloads.py``.

Each request, a line ``NAME SIZE`` on stdin, runs one workload once and is answered with one JSON line
on stdout: ``{"cpu": S, "wall": S}`` (seconds) for a timed workload, after a small warm-up, or
``{"memory": [[runs, current, peak], ...]}`` (traced bytes) for a memory one. The file imports nothing
from this repo, so it runs in any venv that has ``agent-framework-core``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import sys
import time
import tracemalloc
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponseUpdate,
    Content,
    Executor,
    ResponseStream,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    workflow,
)

FAN_OUT_WIDTH = 100
WARM_UP_DIVISOR = 10  # the warm-up runs a tenth of the size, at least MIN_WARM_UP
MIN_WARM_UP = 2
MEMORY_CHECKPOINTS = 10  # memory is recorded after every tenth of the runs
MEMORY_WARM_UP = 1_000  # untraced runs before the first checkpoint
IDLE_TASKS = 50_000

Run = Callable[[], Awaitable[None]]  # one timed call of a workload, set up beforehand
RunOne = Callable[[int], Awaitable[Any]]  # a workflow's ``run``: one short run with the given input


def _expect(actual: object, expected: object) -> None:
    """Stop the benchmark when a workload did not do its work (which would make it cheap)."""
    if actual != expected:
        raise RuntimeError(f"workload produced {actual!r}, expected {expected!r}")


async def _count_down(n: int, ctx: WorkflowContext[int, int]) -> None:
    if n:
        await ctx.send_message(n - 1)
    else:
        await ctx.yield_output(n)


class Countdown(Executor):
    """Sends ``n - 1`` to its successors (itself, in a loop) until ``n`` is 0, then yields ``n``."""

    @handler
    async def count(self, n: int, ctx: WorkflowContext[int, int]) -> None:
        """Count down by one."""
        await _count_down(n, ctx)


class StagingCountdown(Executor):
    """A ``Countdown`` that stages a state write in every superstep."""

    @handler
    async def count(self, n: int, ctx: WorkflowContext[int, int]) -> None:
        """Stage ``n`` under this executor's id, then count down by one."""
        ctx.set_state(self.id, n)
        await _count_down(n, ctx)


class Spread(Executor):
    """Forwards its input to its successors."""

    @handler
    async def spread(self, n: int, ctx: WorkflowContext[int]) -> None:
        """Forward ``n``."""
        await ctx.send_message(n)


class Echo(Executor):
    """Yields its input as the run's output."""

    @handler
    async def echo(self, n: int, ctx: WorkflowContext[Any, int]) -> None:
        """Yield ``n``."""
        await ctx.yield_output(n)


def chain(supersteps: int) -> Run:
    """One run of a single executor forwarding a counter to itself for ``supersteps`` supersteps."""
    countdown = Countdown(id="countdown")
    builder = WorkflowBuilder(max_iterations=supersteps + 1, start_executor=countdown)
    graph = builder.add_edge(countdown, countdown).build()

    async def run() -> None:
        result = await graph.run(supersteps - 1)
        _expect(result.get_outputs(), [0])

    return run


def fan_out(supersteps: int) -> Run:
    """One run of 100 workers that each stage a state write and forward to themselves, for ``supersteps`` steps."""
    start = Spread(id="start")
    workers = [StagingCountdown(id=f"worker-{index}") for index in range(FAN_OUT_WIDTH)]
    builder = WorkflowBuilder(max_iterations=supersteps + 1, start_executor=start).add_fan_out_edges(start, workers)
    for worker in workers:
        builder.add_edge(worker, worker)
    graph = builder.build()

    async def run() -> None:
        result = await graph.run(supersteps - 2)
        _expect(result.get_outputs(), [0] * FAN_OUT_WIDTH)

    return run


async def _updates(count: int) -> AsyncIterator[int]:
    for update in range(count):
        yield update


def _sync_cleanup() -> None:
    return None


async def _async_cleanup() -> None:
    return None


def response_stream(updates: int) -> Run:
    """Pull ``updates`` updates through a ``ResponseStream`` that has a sync and an async cleanup hook."""

    async def run() -> None:
        stream = ResponseStream[int, None](_updates(updates), cleanup_hooks=[_sync_cleanup, _async_cleanup])
        pulled = 0
        async for _ in stream:
            pulled += 1
        _expect(pulled, updates)

    return run


# One chunk of a model service's streamed reply (the shape of a chat-completions chunk), as a client receives it.
_CHUNK = json.dumps(
    {
        "id": "chatcmpl-0",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "model",
        "system_fingerprint": "fp_0",
        "choices": [{"index": 0, "delta": {"content": " token"}, "logprobs": None, "finish_reason": None}],
    }
)


class _TokenClient(BaseChatClient):
    """A chat client that decodes one streamed chunk per update, as clients of model services do."""

    tokens = 0

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        async def updates() -> AsyncIterator[ChatResponseUpdate]:
            for _ in range(self.tokens):
                text = json.loads(_CHUNK)["choices"][0]["delta"]["content"]
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(text=text)])

        return self._build_response_stream(updates())


def agent_stream(updates: int) -> Run:
    """An agent streaming ``updates`` chat updates that a server encodes as events: a pull as applications pay it."""
    client = _TokenClient()
    client.tokens = updates
    agent = Agent(client=client)

    async def run() -> None:
        events = [json.dumps({"text": update.text}) async for update in agent.run("hi", stream=True)]
        _expect(len(events), updates)

    return run


async def _parked(source: asyncio.Event) -> AsyncIterator[None]:
    await source.wait()
    yield None


async def _close_during_pull(idle_tasks: int, closes: int) -> float:
    """Seconds per close() of a stream whose reader, another task, is parked in a pull, beside ``idle_tasks``."""
    idle = asyncio.Event()
    parked = [asyncio.create_task(idle.wait()) for _ in range(idle_tasks)]
    spent = 0.0
    for _ in range(closes):
        source = asyncio.Event()
        stream = ResponseStream[None, None](_parked(source))
        reader = asyncio.create_task(anext(stream, None))
        await asyncio.sleep(0)
        start = time.perf_counter()
        with contextlib.suppress(RuntimeError):  # close() during a pull fails without the series
            await stream.close()
        spent += time.perf_counter() - start
        source.set()
        await asyncio.gather(reader, return_exceptions=True)
    idle.set()
    await asyncio.gather(*parked)
    return spent / closes


async def _per_pull(run: Run, pulls: int) -> float:
    start = time.perf_counter()
    await run()
    return (time.perf_counter() - start) / pulls


def _best(measure: Callable[[], Coroutine[Any, Any, float]]) -> float:
    return min(asyncio.run(measure()) for _ in range(5))


def stream_costs(pulls: int = 100_000, closes: int = 500) -> str:
    """A pull in a tight loop and in an agent chat stream; close() during a pull, idle loop vs 50,000 idle tasks.

    Measured side by side in one process; the series requires the close() ratio to stay at most 2.
    """
    tight = _best(lambda: _per_pull(response_stream(pulls), pulls))
    chat = _best(lambda: _per_pull(agent_stream(pulls // 20), pulls // 20))
    idle = _best(functools.partial(_close_during_pull, 0, closes))
    busy = _best(functools.partial(_close_during_pull, IDLE_TASKS, closes))
    return (
        f"python {sys.version.split()[0]}: a pull costs {tight * 1e9:.0f} ns in a tight loop, {chat * 1e6:.1f} us in "
        f"an agent chat stream (x{chat / tight:.0f}); close() during a pull {idle * 1e6:.1f} us on an idle loop, "
        f"{busy * 1e6:.1f} us beside {IDLE_TASKS:,} idle tasks: ratio {busy / idle:.2f}"
    )


def _functional_workflow() -> RunOne:
    @workflow
    async def echo(n: int) -> int:
        return n

    return echo.build().run


def _graph_workflow() -> RunOne:
    return WorkflowBuilder(start_executor=Echo(id="echo")).build().run


async def _sequential(run_one: RunOne, runs: int) -> None:
    for index in range(runs):
        result = await run_one(index)
        _expect(result.get_outputs(), [index])


def functional_runs(runs: int) -> Run:
    """``runs`` sequential short runs of one ``FunctionalWorkflow``."""
    return functools.partial(_sequential, _functional_workflow(), runs)


def graph_runs(runs: int) -> Run:
    """``runs`` sequential short runs of one graph ``Workflow``."""
    return functools.partial(_sequential, _graph_workflow(), runs)


TIMED: dict[str, Callable[[int], Run]] = {
    "chain": chain,
    "fan_out": fan_out,
    "response_stream": response_stream,
    "functional_runs": functional_runs,
    "graph_runs": graph_runs,
    "agent_stream": agent_stream,
}
MEMORY: dict[str, Callable[[], RunOne]] = {
    "functional_memory": _functional_workflow,
    "graph_memory": _graph_workflow,
}


async def _time(workload: Callable[[int], Run], size: int) -> dict[str, float]:
    """CPU and wall seconds of one call of ``workload`` at ``size``, after a warm-up call at a tenth of it."""
    await workload(max(MIN_WARM_UP, size // WARM_UP_DIVISOR))()
    run = workload(size)
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    await run()
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}


async def _memory(make_workflow: Callable[[], RunOne], runs: int) -> dict[str, list[list[int]]]:
    """Traced memory of one workflow after every tenth of ``runs`` sequential runs: (runs, current, peak)."""
    run = make_workflow()
    step = runs // MEMORY_CHECKPOINTS
    await _sequential(run, MEMORY_WARM_UP)  # lazy imports and caches that fill up in the first runs are no growth
    gc.collect()
    tracemalloc.start()
    points: list[list[int]] = []
    for done in range(step, runs + 1, step):
        tracemalloc.reset_peak()
        await _sequential(run, step)
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        points.append([done, current, peak])
    tracemalloc.stop()
    return {"memory": points}


def serve() -> None:
    """Answer requests ``NAME SIZE``, one per line on stdin, with one JSON line each on stdout, until EOF."""
    # The same for both builds, and no part of what is measured: self-loop and experimental-API warnings.
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    for request in sys.stdin:
        name, size = request.split()
        if name in TIMED:
            result: dict[str, Any] = asyncio.run(_time(TIMED[name], int(size)))
        else:
            result = asyncio.run(_memory(MEMORY[name], int(size)))
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["stream-costs"]:
        sys.stdout.write(stream_costs() + "\n")
    else:
        serve()
