"""An Azure ML job's log followed here: `jobs.stream()` in a thread, the lines it prints sent to
a callback (the stage's log) instead of this process's stdout."""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

LOG_DRAIN_SECONDS = 60.0


class LogStreamer(threading.Thread):
    """`jobs.stream()` in a thread, its printed log lines sent to `on_log` instead of stdout."""

    def __init__(self, client: Any, name: str, on_log: Callable[[str], None]) -> None:
        super().__init__(daemon=True, name=f"azureml-log-{name}")
        self.client, self.job_name, self.on_log = client, name, on_log

    def run(self) -> None:
        with thread_stdout(self.on_log):
            try:
                self.client.jobs.stream(self.job_name)
            except Exception as error:  # noqa: BLE001 - the status poll reports the job's end
                self.on_log(f"log streaming stopped: {type(error).__name__}: {error}")


_redirects: dict[int, Callable[[str], None]] = {}
_redirect_lock = threading.Lock()


class _ThreadRoutedStdout(io.TextIOBase):
    """stdout that sends lines written by redirected threads to their callbacks."""

    def __init__(self, original: Any) -> None:
        self.original = original
        self.partial: dict[int, str] = {}

    def write(self, text: str) -> int:
        target = _redirects.get(threading.get_ident())
        if target is None:
            return self.original.write(text)
        buffered = self.partial.pop(threading.get_ident(), "") + text
        *lines, rest = buffered.split("\n")
        for line in lines:
            if line.strip():
                target(line)
        if rest:
            self.partial[threading.get_ident()] = rest
        return len(text)

    def flush(self) -> None:
        self.original.flush()


@contextlib.contextmanager
def thread_stdout(on_log: Callable[[str], None]) -> Iterator[None]:
    """Within the block, send each line the calling thread writes to stdout to `on_log` (blank
    lines dropped, a last line without its newline sent on exit); other threads keep writing to
    stdout. The process gets its own stdout back once no thread is redirected."""
    with _redirect_lock:
        if not isinstance(sys.stdout, _ThreadRoutedStdout):
            sys.stdout = _ThreadRoutedStdout(sys.stdout)
        _redirects[threading.get_ident()] = on_log
    try:
        yield
    finally:
        with _redirect_lock:
            _redirects.pop(threading.get_ident(), None)
            routed = sys.stdout
            if isinstance(routed, _ThreadRoutedStdout):
                last = routed.partial.pop(threading.get_ident(), "")
                if last.strip():  # a last line printed without its newline
                    on_log(last)
                if not _redirects:  # nobody is redirected: the process gets its stdout back
                    sys.stdout = routed.original
