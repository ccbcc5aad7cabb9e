"""ResponseStream.close() against a pull in flight, checked through the public API of the patched framework.

The invariant: when ``close()`` returns, the source it closed has ended and the cleanup hooks have run
after it, exactly once; every read of a stream closed before its end, and its ``get_final_response()``, raise
``ResponseStreamClosedError`` instead of a truncated end; the task that was pulling keeps no cancellation from
``close()``; nothing hangs, and no cancellation reaches code that did not ask for it (an inner stream's hooks, a
shared awaitable).
"""

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import pytest
from agent_framework import ResponseStream, ResponseStreamClosedError

TIMEOUT = 5.0


def closed_under(reader: "asyncio.Future[Any]") -> bool:
    """Whether the reader's read ended with the error of a stream closed before its end."""
    return isinstance(reader.exception(), ResponseStreamClosedError)


@dataclass
class Source:
    """Yields 1, then parks in its second pull until released; records how it ended."""

    log: list[str] = field(default_factory=list[str])
    waiting: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    unwinding: asyncio.Event = field(default_factory=asyncio.Event)
    finish_unwinding: asyncio.Event = field(default_factory=asyncio.Event)
    slow_unwind: bool = False
    started: bool = False

    async def updates(self) -> AsyncIterator[int]:
        self.started = True
        try:
            yield 1
            self.waiting.set()
            await self.release.wait()
            yield 2
        finally:
            try:
                if self.slow_unwind:
                    self.unwinding.set()
                    await self.finish_unwinding.wait()
            finally:
                self.log.append("source ended")

    def hook(self, name: str = "cleanup") -> Callable[[], None]:
        def record() -> None:
            self.log.append(name)

        return record

    async def settle(self, *tasks: "asyncio.Future[Any]") -> None:
        """Let everything the scenario left running finish, so a failure does not leak tasks."""
        self.release.set()
        self.finish_unwinding.set()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), TIMEOUT)


async def read_all(stream: AsyncIterator[int]) -> list[int]:
    return [update async for update in stream]


async def relay(stream: ResponseStream[int, Any]) -> AsyncIterator[int]:
    async for update in stream:
        yield update


async def read_through_generator(stream: ResponseStream[int, Any]) -> list[int]:
    return await read_all(relay(stream))


async def read_with_anext(stream: ResponseStream[int, Any]) -> list[int]:
    updates: list[int] = []
    while (update := await anext(stream, None)) is not None:
        updates.append(update)
    return updates


READERS: dict[str, Callable[[ResponseStream[int, Any]], Awaitable[list[int]]]] = {
    "async for": read_all,
    "async generator relay": read_through_generator,
    "anext with default": read_with_anext,
}


async def close_now(stream: ResponseStream[Any, Any], source: Source) -> tuple[BaseException | None, list[str]]:
    """Close the stream; return what close() raised and the log as it was when close() returned."""
    try:
        await stream.close()
    except Exception as exc:
        return exc, list(source.log)
    return None, list(source.log)


@pytest.mark.parametrize("read", list(READERS))
async def test_close_during_pull_ends_the_source_first(read: str) -> None:
    source = Source()
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook()])
    reader = asyncio.ensure_future(READERS[read](stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    error, log_at_close = await asyncio.wait_for(close_now(stream, source), TIMEOUT)
    reader_done = reader.done()
    await source.settle(reader)

    assert error is None
    assert log_at_close == ["source ended", "cleanup"]
    assert reader_done
    assert closed_under(reader)


@pytest.mark.parametrize("buffered", [False, True], ids=["streamed", "buffered"])
async def test_reader_in_get_final_response_gets_no_truncated_result(buffered: bool) -> None:
    source = Source()
    results: list[list[int]] = []
    stream: ResponseStream[int, list[int]] = ResponseStream(
        source.updates(),
        finalizer=list,
        cleanup_hooks=[source.hook()],
        result_hooks=[results.append],
        stream_updates=not buffered,
    )
    reader = asyncio.ensure_future(stream.get_final_response())
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    error, log_at_close = await asyncio.wait_for(close_now(stream, source), TIMEOUT)
    await source.settle(reader)

    assert error is None
    assert log_at_close == ["source ended", "cleanup"]
    assert closed_under(reader)
    assert results == []


@pytest.mark.parametrize("wrap", ["map", "flat_map", "with_finalizer", "from_awaitable"])
async def test_close_a_wrapper_during_pull(wrap: str) -> None:
    source = Source()
    inner: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook("inner")])
    outer: ResponseStream[Any, Any]
    if wrap == "map":
        outer = inner.map(lambda update: update * 10, list)
    elif wrap == "flat_map":
        outer = inner.flat_map(lambda update: [update, update], list)
    elif wrap == "with_finalizer":
        outer = inner.with_finalizer(list)
    else:

        async def resolve() -> ResponseStream[int, list[int]]:
            return inner

        outer = ResponseStream[int, list[int]].from_awaitable(resolve())
    outer.with_cleanup_hook(source.hook("outer"))
    reader = asyncio.ensure_future(read_all(outer))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    error, log_at_close = await asyncio.wait_for(close_now(outer, source), TIMEOUT)
    await source.settle(reader)

    assert error is None
    assert log_at_close[0] == "source ended"
    assert sorted(log_at_close[1:]) == ["inner", "outer"]
    assert closed_under(reader)


async def test_concurrent_closes_and_a_cancelled_closer() -> None:
    source = Source(slow_unwind=True)
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook()])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    closers = [asyncio.ensure_future(stream.close()) for _ in range(3)]
    try:
        await asyncio.wait_for(source.unwinding.wait(), TIMEOUT)
        closers[0].cancel()
        await asyncio.wait_for(asyncio.gather(closers[0], return_exceptions=True), TIMEOUT)
        log_while_unwinding = list(source.log)
        done_while_unwinding = [closer.done() for closer in closers[1:]]
    finally:
        await source.settle(reader, *closers)

    assert log_while_unwinding == []
    assert done_while_unwinding == [False, False]
    assert source.log == ["source ended", "cleanup"]
    assert closers[0].cancelled()
    assert [closer.exception() for closer in closers[1:]] == [None, None]
    assert closed_under(reader)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 tasks keep no cancellation count")
async def test_reader_cancelled_by_someone_else_during_close_is_still_cancelled() -> None:
    source = Source(slow_unwind=True)
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook()])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    closer = asyncio.ensure_future(stream.close())
    try:
        await asyncio.wait_for(source.unwinding.wait(), TIMEOUT)
        reader.cancel()
    finally:
        await source.settle(reader, closer)

    assert reader.cancelled()
    assert closer.exception() is None
    assert source.log == ["source ended", "cleanup"]


async def test_consumer_cancelled_without_close_still_propagates() -> None:
    source = Source()
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook()])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    reader.cancel()
    await source.settle(reader)

    assert reader.cancelled()
    assert source.log == ["source ended", "cleanup"]
    await asyncio.wait_for(stream.close(), TIMEOUT)
    assert source.log == ["source ended", "cleanup"]


async def test_second_reader_is_refused_before_it_touches_the_source() -> None:
    """A second concurrent reader fails like any failed read, which closes the stream; the first pull is stopped."""
    source = Source()
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook()])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    with pytest.raises(RuntimeError, match="concurrent"):
        await asyncio.wait_for(stream.get_final_response(), TIMEOUT)
    await source.settle(reader)

    assert closed_under(reader)
    assert sorted(source.log) == ["cleanup", "source ended"]


async def test_closed_stream_fails_every_read_and_close_is_idempotent() -> None:
    source = Source()
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), cleanup_hooks=[source.hook()])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    await asyncio.wait_for(stream.close(), TIMEOUT)
    await asyncio.wait_for(stream.close(), TIMEOUT)
    with pytest.raises(ResponseStreamClosedError):
        await asyncio.wait_for(stream.__anext__(), TIMEOUT)
    with pytest.raises(ResponseStreamClosedError):
        await asyncio.wait_for(stream.get_final_response(), TIMEOUT)
    await source.settle(reader)

    assert source.log == ["source ended", "cleanup"]
    assert closed_under(reader)


async def test_a_stream_read_to_its_end_is_not_closed_early() -> None:
    source = Source()
    source.release.set()
    stream: ResponseStream[int, list[int]] = ResponseStream(source.updates(), finalizer=list)
    assert await asyncio.wait_for(read_all(stream), TIMEOUT) == [1, 2]

    await asyncio.wait_for(stream.close(), TIMEOUT)

    assert await asyncio.wait_for(stream.get_final_response(), TIMEOUT) == [1, 2]


def test_a_pull_without_an_asyncio_loop_is_not_recorded() -> None:
    """Where no asyncio loop runs (trio, or a coroutine driven by hand) a pull still works."""

    async def updates() -> AsyncIterator[int]:
        yield 1

    stream: ResponseStream[int, list[int]] = ResponseStream(updates())
    with pytest.raises(StopIteration) as pulled:
        stream.__anext__().send(None)

    assert pulled.value.value == 1


async def test_close_while_resolving_a_shared_awaitable_never_cancels_it() -> None:
    source = Source()
    resolve_now = asyncio.Event()

    async def resolve() -> ResponseStream[int, list[int]]:
        await resolve_now.wait()
        return ResponseStream(source.updates())

    shared = asyncio.ensure_future(resolve())
    awaited = asyncio.Event()

    class Awaited:
        """The shared future, as another task awaits it; says when the reader is inside that await."""

        def __await__(self) -> Generator[Any, None, ResponseStream[int, list[int]]]:
            awaited.set()
            return shared.__await__()

    stream = ResponseStream[int, list[int]].from_awaitable(Awaited())
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(awaited.wait(), TIMEOUT)

    await asyncio.wait_for(stream.close(), TIMEOUT)
    resolve_now.set()
    await source.settle(reader, shared)

    assert not shared.cancelled()
    assert not source.started
    assert closed_under(reader)


async def test_the_hooks_see_the_error_close_was_given() -> None:
    source = Source()
    seen: list[BaseException | None] = []
    inner: ResponseStream[int, list[int]] = ResponseStream(source.updates())
    outer = inner.map(lambda update: update, list)
    inner.with_cleanup_hook(lambda: seen.append(inner._stream_error))  # pyright: ignore[reportPrivateUsage]
    outer.with_cleanup_hook(lambda: seen.append(outer._stream_error))  # pyright: ignore[reportPrivateUsage]
    reader = asyncio.ensure_future(read_all(outer))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    gone = ConnectionResetError("the client went away")
    await asyncio.wait_for(outer.close(gone), TIMEOUT)
    await source.settle(reader)

    assert seen == [gone, gone]
    assert closed_under(reader)


async def test_a_cleanup_hook_may_close_the_stream_again() -> None:
    source = Source()
    stream: ResponseStream[int, list[int]]

    async def closes_again() -> None:
        await stream.close()
        source.log.append("hook")

    stream = ResponseStream(source.updates(), cleanup_hooks=[closes_again])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(source.waiting.wait(), TIMEOUT)

    await asyncio.wait_for(stream.close(), TIMEOUT)
    await source.settle(reader)

    assert source.log == ["source ended", "hook"]


async def test_close_while_resolving_the_source_never_starts_it() -> None:
    source = Source()
    resolving = asyncio.Event()
    resolve_now = asyncio.Event()

    async def resolve() -> ResponseStream[int, list[int]]:
        resolving.set()
        await resolve_now.wait()
        return ResponseStream(source.updates())

    stream = ResponseStream[int, list[int]].from_awaitable(resolve())
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(resolving.wait(), TIMEOUT)

    await asyncio.wait_for(stream.close(), TIMEOUT)
    resolve_now.set()
    await source.settle(reader)

    assert not source.started
    assert closed_under(reader)


async def test_source_failure_during_close_reaches_the_reader() -> None:
    """A source that fails on its own while being closed reports that failure (chained), not a clean end."""
    waiting = asyncio.Event()
    log: list[str] = []

    async def failing() -> AsyncIterator[int]:
        yield 1
        try:
            waiting.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise ValueError("source broke while closing") from None
        yield 2

    def record() -> None:
        log.append("cleanup")

    stream: ResponseStream[int, list[int]] = ResponseStream(failing(), cleanup_hooks=[record])
    reader = asyncio.ensure_future(read_all(stream))
    await asyncio.wait_for(waiting.wait(), TIMEOUT)

    await asyncio.wait_for(stream.close(), TIMEOUT)
    await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), TIMEOUT)

    assert closed_under(reader)
    assert isinstance(getattr(reader.exception(), "__cause__", None), ValueError)
    assert log == ["cleanup"]
