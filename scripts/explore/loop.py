"""A seeded event loop that perturbs the order of ready callbacks, in the spirit of PCT.

Each loop iteration the ready handles are ordered by the priority of the task they belong to (random,
assigned when a task is first seen; callbacks of no task get a fresh random priority), a random number of
the lowest-priority handles is held back to a later iteration (never for long), and at a few seeded change
points the highest-priority task is demoted. At seeded points ``gc.collect()`` runs, so async-generator
finalizers are scheduled at varied moments. Time is virtual: it advances a little every iteration and jumps
to the next timer when nothing is ready, so timeouts are deterministic and a deadlock ends at once.
What the loop decides depends only on the seed; when the interpreter collects garbage by itself depends on what the
process allocated before, so a schedule replayed in a fresh worker may take another interleaving than it took
after thousands of others (subworkflow seed 9075: the order of two outputs that come in no order).
"""

from __future__ import annotations

import asyncio
import gc
import random
import weakref
from collections import deque
from typing import Any, cast

TICK = 0.001  # virtual seconds per iteration: a livelocked program still reaches its timeouts
MAX_HOLD = 12  # a handle is held back at most this many iterations in a row
CHANGE_POINTS = 3
CHANGE_HORIZON = 400  # change points fall among the first iterations of a schedule
GC_CHANCE = 0.02


def _owner(handle: asyncio.Handle) -> asyncio.Task[Any] | None:
    """The task a ready handle will step or wake up, if any."""
    owner: object = getattr(getattr(handle, "_callback", None), "__self__", None)
    return cast("asyncio.Task[Any]", owner) if isinstance(owner, asyncio.Task) else None


class PerturbingLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose callback order, held-back callbacks and gc points come from a seed."""

    def __init__(self, seed: int) -> None:
        """A loop whose every perturbation is drawn from ``seed``."""
        super().__init__()
        self._rng = random.Random(seed)  # noqa: S311 (reproducible schedules, not cryptography)
        self._now = 0.0
        self._iteration = 0
        self._priorities: weakref.WeakKeyDictionary[asyncio.Task[Any], float] = weakref.WeakKeyDictionary()
        self._held: dict[int, int] = {}  # id(handle) -> iterations held in a row
        self._change_points = sorted(self._rng.randrange(CHANGE_HORIZON) for _ in range(CHANGE_POINTS))
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._hold_chance = self._rng.choice((0.2, 0.5, 0.8))  # how often the low-priority tail waits

    async def quiesce(self) -> None:
        """Return once nothing else is ready to run: every other task waits for a gate, a timer or I/O."""
        waiter: asyncio.Future[None] = self.create_future()
        self._idle_waiters.append(waiter)
        await waiter

    def time(self) -> float:
        """Virtual time."""
        return self._now

    def _priority(self, handle: asyncio.Handle) -> float:
        task = _owner(handle)
        if task is None:
            return self._rng.random()
        if task not in self._priorities:
            self._priorities[task] = self._rng.random()
        return self._priorities[task]

    def _demote_top(self, ready: list[asyncio.Handle]) -> None:
        tasks = [task for task in map(_owner, ready) if task is not None]
        if tasks:
            top = max(tasks, key=lambda task: self._priorities.get(task, 0.0))
            self._priorities[top] = -self._rng.random()

    def _run_once(self) -> None:
        self._iteration += 1
        self._now += TICK
        ready = cast("deque[asyncio.Handle]", self._ready)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        scheduled = cast("list[asyncio.TimerHandle]", self._scheduled)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        if self._rng.random() < GC_CHANCE:
            gc.collect()
        if not ready and self._idle_waiters:
            for waiter in self._idle_waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._idle_waiters.clear()
        if not ready and scheduled:
            self._now = max(self._now, min(timer.when() for timer in scheduled))
        if len(ready) > 1:
            handles = list(ready)
            ready.clear()
            if self._change_points and self._iteration >= self._change_points[0]:
                self._change_points.pop(0)
                self._demote_top(handles)
            handles.sort(key=self._priority, reverse=True)
            hold = self._rng.random() < self._hold_chance
            keep = self._rng.randint(1, len(handles) - 1) if hold else len(handles)
            held = [handle for handle in handles[keep:] if self._held.get(id(handle), 0) < MAX_HOLD]
            held_ids = {id(handle) for handle in held}
            ready.extend(handle for handle in handles if id(handle) not in held_ids)
            self._held = {id(handle): self._held.get(id(handle), 0) + 1 for handle in held}
            super()._run_once()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
            ready.extendleft(reversed(held))
            return
        super()._run_once()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
