"""The one exception type the tooling raises for bad input or a failed step, and its one-line form."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from typing import NoReturn, ParamSpec

P = ParamSpec("P")


class RunguardError(Exception):
    """A failure reported to the user as a single line: ``runguard: error: <message>``."""


class ArgumentsError(RunguardError):
    """Arguments a parser does not take (an unknown flag, a missing value)."""


class ArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors (an unknown flag, a missing value) are a RunguardError, so one line.

    An unknown flag is reported before a missing required argument: argparse would report only the latter.
    """

    def error(self, message: str) -> NoReturn:
        """Raise the error instead of printing the usage and exiting."""
        raise ArgumentsError(message)

    def parse_args(  # pyright: ignore[reportIncompatibleMethodOverride] (no namespace= here)
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        """Parse ``args``, naming an unknown flag first."""
        required = [item for item in (*self._actions, *self._mutually_exclusive_groups) if item.required]
        for item in required:
            item.required = False
        try:
            _, unknown = self.parse_known_args(args)
        finally:
            for item in required:
                item.required = True
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return super().parse_args(args)


def error_line(error: BaseException | str) -> str:
    """How every RunguardError reaches the user, in a session or a command: ``runguard: error: <message>``."""
    return f"runguard: error: {error}"


def entry_point(main: Callable[P, int]) -> Callable[P, int]:
    """The error boundary of a ``python -m`` entry point: a RunguardError prints one line and returns 1."""

    @wraps(main)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except RunguardError as error:
            print(error_line(error), file=sys.stderr)  # noqa: T201 (the one line is the interface)
            return 1

    return guarded
