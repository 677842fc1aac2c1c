"""One writer at a time: an exclusive lock on a local file, held for a `with` block; files
written whole or not at all.

`fcntl.flock` locks belong to the open file: a process that dies releases them, so a killed run
never leaves a lock behind. They hold between processes of one machine (and on NFS mounts that
support them), which is where local stores and the local endpoint live.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)


@contextmanager
def file_lock(path: Path, what: str) -> Iterator[None]:
    """Hold the lock at `path` (created if missing); say so when someone else holds it first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("waiting for %s to finish (lock %s)", what, path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_text_atomic(path: Path, text: str) -> None:
    """Write `path` so that readers (and a run after this one is killed) see the old content or
    the new, never a torn or empty file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with scratch.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(scratch, path)


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
