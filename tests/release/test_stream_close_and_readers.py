"""ResponseStream programs that work on the release: closing from another task, several readers, unread views."""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_framework import ResponseStream

TIMEOUT = 10.0


class QueueSource:
    """A custom async iterator over a queue; its ``aclose()`` wakes a blocked reader, as a socket's does."""

    def __init__(self, items: list[int], readers: int = 1) -> None:
        self.queue: asyncio.Queue[int | None] = asyncio.Queue()
        for item in items:
            self.queue.put_nowait(item)
        self.readers = readers
        self.closed = False

    def __aiter__(self) -> "QueueSource":
        return self

    async def __anext__(self) -> int:
        await asyncio.sleep(0)  # a real source awaits its transport here
        item = await self.queue.get()
        if item is None:
            self.queue.put_nowait(None)  # the next reader ends too
            raise StopAsyncIteration
        return item

    def end(self) -> None:
        self.queue.put_nowait(None)

    async def aclose(self) -> None:
        self.closed = True
        self.end()


async def test_close_from_another_task_wakes_a_reader_blocked_in_a_custom_source() -> None:
    source = QueueSource([1])
    cleaned: list[str] = []
    stream: ResponseStream[int, list[int]] = ResponseStream(
        source, finalizer=list, cleanup_hooks=[lambda: cleaned.append("cleanup")]
    )
    reader = asyncio.ensure_future(asyncio.wait_for(_drain(stream), TIMEOUT))
    while source.queue.qsize():  # the reader took the first update and waits for the next one
        await asyncio.sleep(0)

    await asyncio.wait_for(stream.close(), TIMEOUT)

    assert source.closed and cleaned == ["cleanup"]
    assert await reader == [1]


async def test_two_readers_share_a_source_that_allows_concurrent_reads() -> None:
    source = QueueSource(list(range(10)))
    stream: ResponseStream[int, list[int]] = ResponseStream(source, finalizer=list)

    async def worker() -> list[int]:
        got: list[int] = []
        async for update in stream:
            got.append(update)
        return got

    source.end()
    first, second = await asyncio.wait_for(asyncio.gather(worker(), worker()), TIMEOUT)
    assert sorted(first + second) == list(range(10))


async def _updates() -> AsyncIterator[int]:
    for update in range(3):
        yield update


async def _drain(stream: ResponseStream[Any, Any]) -> list[Any]:
    return [update async for update in stream]


@pytest.mark.parametrize("view", ["map", "with_finalizer"])
async def test_a_stream_stays_readable_after_an_unread_view_of_it_is_closed(view: str) -> None:
    inner: ResponseStream[int, list[int]] = ResponseStream(_updates(), finalizer=list)
    wrapper = inner.map(str, list) if view == "map" else inner.with_finalizer(len)
    async with wrapper:
        pass  # the view is not needed after all

    assert await asyncio.wait_for(_drain(inner), TIMEOUT) == [0, 1, 2]
    assert await asyncio.wait_for(inner.get_final_response(), TIMEOUT) == [0, 1, 2]


async def test_a_from_awaitable_stream_closed_unread_can_still_be_awaited_read_and_finalized() -> None:
    async def opening() -> ResponseStream[int, list[int]]:
        return ResponseStream(_updates(), finalizer=list)

    stream: ResponseStream[int, list[int]] = ResponseStream[int, list[int]].from_awaitable(opening())
    await asyncio.wait_for(stream.close(), TIMEOUT)

    assert await asyncio.wait_for(stream, TIMEOUT) is stream
    assert await asyncio.wait_for(stream.get_final_response(), TIMEOUT) == [0, 1, 2]


async def test_close_from_another_task_runs_the_cleanup_hook_that_stops_the_source() -> None:
    """A "stop" button: the stream's cleanup hook closes the provider's connection, which ends the source."""
    connection_closed, waiting = asyncio.Event(), asyncio.Event()

    async def provider() -> AsyncIterator[str]:
        yield "token-1"
        waiting.set()
        await connection_closed.wait()  # the provider's socket read returns once the connection is closed

    stream: ResponseStream[str, Any] = ResponseStream(provider(), cleanup_hooks=[connection_closed.set])
    reader = asyncio.ensure_future(asyncio.wait_for(_drain(stream), TIMEOUT))
    await asyncio.wait_for(waiting.wait(), TIMEOUT)
    with pytest.raises(RuntimeError, match="already running"):  # the running generator refuses the close itself
        await asyncio.wait_for(stream.close(), TIMEOUT)

    assert await reader == ["token-1"]


async def test_closing_an_unread_stream_leaves_a_generator_another_consumer_is_running() -> None:
    inside, gate = asyncio.Event(), asyncio.Event()

    async def updates() -> AsyncIterator[int]:
        yield 1
        inside.set()
        await gate.wait()
        yield 2

    shared = updates()
    assert await asyncio.wait_for(anext(shared), TIMEOUT) == 1
    other = asyncio.ensure_future(anext(shared))
    await asyncio.wait_for(inside.wait(), TIMEOUT)  # the other consumer is inside the generator
    stream: ResponseStream[int, Any] = ResponseStream(shared)
    await asyncio.wait_for(stream.close(), TIMEOUT)

    gate.set()
    assert await asyncio.wait_for(other, TIMEOUT) == 2


async def test_a_read_that_fails_on_its_own_while_another_task_closes_the_stream_raises_its_error() -> None:
    """A transform of the read in progress fails while ``close()`` awaits the source's clean-up: the reader sees it."""
    unwinding, finish, in_transform, fail = asyncio.Event(), asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def updates() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            unwinding.set()
            await finish.wait()

    async def transform(update: int) -> int:
        in_transform.set()
        await fail.wait()
        raise RuntimeError("transform failed")

    stream: ResponseStream[int, Any] = ResponseStream(updates(), transform_hooks=[transform])
    reader = asyncio.ensure_future(stream.__anext__())
    await asyncio.wait_for(in_transform.wait(), TIMEOUT)
    closing = asyncio.ensure_future(stream.close())
    await asyncio.wait_for(unwinding.wait(), TIMEOUT)
    fail.set()
    (read,) = await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)
    finish.set()
    await asyncio.wait_for(asyncio.gather(closing, return_exceptions=True), TIMEOUT)

    assert isinstance(read, RuntimeError) and str(read) == "transform failed", f"the reader got {read!r}"
