"""A lock file in a checkout's git directory, so two applies on one checkout cannot interleave."""

from __future__ import annotations

import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from scripts.errors import RunguardError

LOCK_NAME = "runguard-apply.lock"


def _holder_alive(lock: Path) -> bool:
    try:
        pid = int(lock.read_text().strip() or "0")
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError, FileNotFoundError):
        return False
    except PermissionError:
        return True
    return True


def _try_create(lock: Path) -> bool:
    try:
        handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(handle, "w") as stream:
        stream.write(f"{os.getpid()}\n")
    return True


@contextmanager
def checkout_lock(git_dir: Path, checkout: Path) -> Generator[None, None, None]:
    """Hold ``git_dir/runguard-apply.lock`` for the block; a lock left by a dead process is taken over."""
    lock = git_dir / LOCK_NAME
    if not _try_create(lock):
        if _holder_alive(lock):
            raise RunguardError(f"another runguard apply is running on {checkout} (lock {lock})")
        lock.unlink(missing_ok=True)
        if not _try_create(lock):
            raise RunguardError(f"another runguard apply is running on {checkout} (lock {lock})")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)
