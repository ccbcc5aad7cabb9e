"""What the bodies of a workflow's runs saw: which runs were live at once, and the gates that hold them."""

import asyncio
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Ledger:
    """Shared by every run of one workflow; a body records itself with :meth:`running`."""

    live: set[str] = field(default_factory=set[str])
    overlaps: list[tuple[str, frozenset[str]]] = field(default_factory=list[tuple[str, frozenset[str]]])
    entered: dict[str, asyncio.Event] = field(default_factory=dict[str, asyncio.Event])
    release: dict[str, asyncio.Event] = field(default_factory=dict[str, asyncio.Event])
    exited: dict[str, asyncio.Event] = field(default_factory=dict[str, asyncio.Event])
    cancelled: set[str] = field(default_factory=set[str])

    def entry(self, name: str) -> asyncio.Event:
        return self.entered.setdefault(name, asyncio.Event())

    def gate(self, name: str) -> asyncio.Event:
        return self.release.setdefault(name, asyncio.Event())

    def exit(self, name: str) -> asyncio.Event:
        return self.exited.setdefault(name, asyncio.Event())

    @contextmanager
    def running(self, name: str) -> Generator[None, None, None]:
        """Mark run ``name``'s body live, noting every run that was live beside it; its entry event is set."""
        if self.live:
            self.overlaps.append((name, frozenset(self.live)))
        self.live.add(name)
        self.entry(name).set()
        try:
            yield
        except asyncio.CancelledError:
            self.cancelled.add(name)
            raise
        finally:
            self.live.discard(name)
            self.exit(name).set()
