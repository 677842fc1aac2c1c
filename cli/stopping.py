"""`tunegate run` stops within seconds on Ctrl-C or SIGTERM, whatever the run is doing.

The signal unwinds the run in the main thread: a training job is stopped by the wait that follows
it, a data stage drops its scratch folder, the flow's summary ends `cancelled` (flows/summary.py
`RunSummary.stopped`). What comes after can hang: Prefect reports the crash to its API, and a
terminal's Ctrl-C reaches the whole process group, so the temporary Prefect server is already
gone and the report retries for minutes. So the moment the run is seen stopping, a watchdog gets
`GRACE_SECONDS`: if the command has not ended by then, it writes the `--summary`, stops the
processes this one started in its session (Dask workers, Prefect's temporary server) and exits;
a second signal does that at once.
Processes started in sessions of their own outlive it on purpose: the endpoint serves on; a
training job was already stopped by its wait.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

GRACE_SECONDS = 6.0


class RunStop:
    """Writes a stopped run's summary once, and ends the process in time."""

    def __init__(self, summary_path: Path | None) -> None:
        self.summary_path = summary_path
        self.summary: Any = None
        self.signum = signal.SIGINT
        self._written = threading.Lock()
        self._watchdog: threading.Thread | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> RunStop:
        """Ctrl-C raises KeyboardInterrupt (even when the shell started this process with SIGINT
        ignored), SIGTERM exits like it; both arm the watchdog. Undone on leaving."""
        from flows.summary import ON_STOP

        ON_STOP.append(self.stopping)
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        from flows.summary import ON_STOP

        ON_STOP.remove(self.stopping)
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self._watchdog is not None:  # a second signal: no more waiting
            self._exit_now()
        self.signum = signal.Signals(signum)
        self._arm()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def stopping(self, summary: Any, signum: signal.Signals | None) -> None:
        """The run says it was stopped (the signal may have reached it through Prefect)."""
        self.summary = summary
        if signum is not None and self._watchdog is None:
            self.signum = signum
        self._arm()

    def _arm(self) -> None:
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._deadline, daemon=True)
            self._watchdog.start()

    def _deadline(self) -> None:
        time.sleep(GRACE_SECONDS)
        self._exit_now()

    def _exit_now(self) -> None:
        self.write_summary()
        _stop_own_session_children()
        os._exit(128 + self.signum)

    def write_summary(self) -> None:
        """The summary of the stopped run (what it finished, `status: cancelled`), once."""
        if self.summary_path is None or not self._written.acquire(blocking=False):
            return
        from flows.summary import RunSummary

        summary = self.summary or RunSummary()
        if summary.status != "cancelled":
            summary.end("cancelled", f"stopped by {self.signum.name}")
        self.summary_path.parent.mkdir(parents=True, exist_ok=True)
        self.summary_path.write_text(summary.model_dump_json(indent=2))

    @property
    def stopped(self) -> bool:
        """Whether a signal (or the run itself) said the run was stopped."""
        return self._watchdog is not None

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _stop_own_session_children(grace_seconds: float = 2.0) -> None:
    """SIGTERM, then SIGKILL, every process this one started that shares its session."""
    import psutil

    session = os.getsid(0)
    children = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getsid(child.pid) == session:
                child.terminate()
                children.append(child)
    _, alive = psutil.wait_procs(children, timeout=grace_seconds)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()
