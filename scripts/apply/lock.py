"""A lock in a checkout's git directory, so two applies on one checkout cannot interleave.

The lock is an ``flock`` on ``runguard-apply.lock``: the kernel drops it when its holder exits, however it exits, so
a lock file left by a killed apply never blocks the next one and no process ids are guessed at.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from scripts.series.errors import RunguardError

LOCK_NAME = "runguard-apply.lock"


@contextmanager
def checkout_lock(git_dir: Path, checkout: Path) -> Generator[None, None, None]:
    """Hold ``git_dir/runguard-apply.lock`` for the block, or raise when another apply holds it."""
    lock = git_dir / LOCK_NAME
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The holder before us may have removed the file after we opened it: then ours is a stale inode.
            held = os.path.samestat(os.fstat(handle.fileno()), lock.stat())
        except (BlockingIOError, FileNotFoundError):
            held = False
        if not held:
            raise RunguardError(f"another runguard apply is running on {checkout} (lock {lock})")
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
