"""Turn SIGTERM into an exception like SIGINT, and keep both out of clean-up code."""

from __future__ import annotations

import signal
from collections.abc import Generator
from contextlib import contextmanager
from types import FrameType


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"signal {signum}")


@contextmanager
def interruptible() -> Generator[None, None, None]:
    """Within the block, SIGTERM raises :class:`Terminated` so ``finally`` clauses run as for SIGINT."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def shielded() -> Generator[None, None, None]:
    """Ignore SIGINT and SIGTERM within the block, so clean-up is not cut short by a second signal."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
