"""A run's log file: every line of the run, while the terminal keeps the run's own lines.

`run_log(path)` routes, for the length of a run: Python `warnings` (FutureWarning, TracerWarning,
UserWarning ...), third-party loggers (ONNX Runtime's pre-processing note, Dask's port line and
its cluster chatter, ...) and the lines of a training job that are not the trainer's own
(`JOB_OUTPUT`, tasks/train.py) into `path`, and nowhere else. The run's own lines (the loggers of
tunegate's packages and Prefect's flow and task run lines) go to the terminal as before, and to
the file too. A traceback goes to the file; the terminal gets its one line, and none for the
exception Prefect's engine raises after a flow returned a Failed state (under `tunegate
deployments serve` every failed run logged one): the run's "Finished in state Failed('<reason>')"
line already says why. Libraries' progress bars (transformers' "Loading weights", MLflow's
"Downloading artifacts") are off.

The file of a run is `{store}/runs/<flow run id>/run.log` (a local store; else in the local
cache), named once at the start of the run.
"""

from __future__ import annotations

import contextlib
import linecache
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from trainer.progress import CONSOLE

# The loggers whose lines a person running tunegate reads: its packages' and Prefect's.
OWN_LOGGERS = (
    "cli",
    "flows",
    "tasks",
    "screening",
    "platforms",
    "serving",
    "trainer",
    "samples",
    "prefect",
)
_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
_ENGINE_LINE = "Engine execution exited with unexpected exception"
# Libraries' progress bars, off: huggingface_hub's and transformers' (read at import), MLflow's
# "Downloading artifacts" (read when it downloads)
_PROGRESS_BARS = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
}


def is_own(name: str) -> bool:
    """Whether the logger `name` is tunegate's or Prefect's (its lines stay on the terminal)."""
    return any(name == own or name.startswith(own + ".") for own in OWN_LOGGERS)


class _ConsoleFilter(logging.Filter):
    """On a terminal handler: only the run's own lines, each without its traceback."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        if not is_own(record.name) or getattr(record, CONSOLE, True) is False:
            return False
        if record.exc_info or record.exc_text:
            if _failed_state_resolved(record):
                return False  # the run's Failed line said why
            one_line = logging.makeLogRecord(record.__dict__)
            one_line.exc_info = one_line.exc_text = one_line.stack_info = None
            exc = record.exc_info[1] if record.exc_info else None
            message = record.getMessage()
            if exc is not None and str(exc) not in message:  # say what it was, in its line
                message = f"{message}: {_name(exc)}: {exc}"
            one_line.msg, one_line.args = "%s", (message,)
            self.handler.handle(one_line)  # the traceback itself: in the run's log file
            return False
        return True


def _failed_state_resolved(record: logging.LogRecord) -> bool:
    """Prefect's engine turning the Failed state a flow returned into an exception: `TypeError:
    Unexpected result for failed state`, or its FailedRun."""
    if record.getMessage() != _ENGINE_LINE or not record.exc_info:
        return False
    exc = record.exc_info[1]
    return _name(exc) == "FailedRun" or (
        isinstance(exc, TypeError) and str(exc).startswith("Unexpected result for failed state")
    )


def _name(exc: BaseException) -> str:
    return type(exc).__name__


def _loggers() -> list[logging.Logger]:
    """The root logger and every logger made so far."""
    return [logging.getLogger()] + [
        logger
        for logger in list(logging.Logger.manager.loggerDict.values())
        if isinstance(logger, logging.Logger)
    ]


class _Forward(logging.Handler):
    """Hands each record to `target` (the run's log file) whatever anyone sets on this one."""

    def __init__(self, target: logging.Handler) -> None:
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        self.target.handle(record)


def _terminal_handlers() -> list[logging.Handler]:
    """Every handler writing to a stream that is no file (nor a test's in-memory capture)."""
    found: list[logging.Handler] = []
    for logger in _loggers():
        for handler in logger.handlers:
            if (
                isinstance(handler, logging.StreamHandler)
                and not isinstance(handler, logging.FileHandler)
                and type(handler).__name__ != "LogCaptureHandler"  # pytest's caplog
                and handler not in found
            ):
                found.append(handler)
    return found


def _warning_to_log(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """`warnings.showwarning`: a warning becomes a record of the `py.warnings` logger, in
    Python's own one-line format (not `warnings.formatwarning`, which libraries replace: plotly,
    imported with Evidently, swaps in a format that splits the warning over several lines)."""
    text = f"{filename}:{lineno}: {category.__name__}: {message}\n"
    if line is None:
        line = linecache.getline(filename, lineno)
    if line and line.strip():
        text += f"  {line.strip()}\n"
    if file is not None:  # asked for a given file: as Python does
        with contextlib.suppress(OSError):
            file.write(text)
        return
    logging.getLogger("py.warnings").warning("%s", text.rstrip())


def route_to_file(path: Path) -> Callable[[], None]:
    """Route warnings, third-party loggers and tracebacks into `path` (see the module's doc);
    returns what puts everything back as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file_handler = logging.FileHandler(path, encoding="utf-8")
    file_handler.setFormatter(logging.Formatter(_FORMAT))
    # the root logger, and each logger whose records stop before it (Dask's `distributed`),
    # the latter through a handler of their own: Dask sets the level of its loggers' handlers
    writers = [(logging.getLogger(), file_handler)] + [
        (logger, _Forward(file_handler))
        for logger in _loggers()
        if not logger.propagate and logger.handlers
    ]
    for logger, handler in writers:
        logger.addHandler(handler)
    filtered = [(h, _ConsoleFilter(h)) for h in _terminal_handlers()]
    for handler, console_filter in filtered:
        handler.addFilter(console_filter)
    shown, warnings.showwarning = warnings.showwarning, _warning_to_log
    bars = {name: os.environ.get(name) for name in _PROGRESS_BARS}
    os.environ.update(_PROGRESS_BARS)
    transformers_bars = _set_transformers_bars(False)

    def restore() -> None:
        warnings.showwarning = shown
        for handler, console_filter in filtered:
            handler.removeFilter(console_filter)
        for logger, handler in writers:
            logger.removeHandler(handler)
        file_handler.close()
        for name, value in bars.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if transformers_bars:
            _set_transformers_bars(True)

    return restore


def _set_transformers_bars(on: bool) -> bool:
    """Turn transformers' progress bars on or off when it is imported already; whether they
    were on before."""
    module = sys.modules.get("transformers.utils.logging")
    if module is None:
        return False
    was_on = bool(module.is_progress_bar_enabled())
    if on:
        module.enable_progress_bar()
    else:
        module.disable_progress_bar()
    return was_on


@contextlib.contextmanager
def run_log(path: Path, keep: bool = False) -> Iterator[Path]:
    """Route into `path` inside the block (see `route_to_file`). With `keep` the routing stays
    after it: for a process that runs this one flow run (a deployment's run, started by
    `tunegate deployments serve` or a worker), so the lines Prefect's engine logs after the flow
    returned are routed too."""
    restore = route_to_file(path)
    try:
        yield path
    finally:
        if not keep:
            restore()


def own_process(flow_run_id: str | None) -> bool:
    """Whether this process was started to run the flow run `flow_run_id` alone (Prefect's
    runner and workers name it in PREFECT__FLOW_RUN_ID)."""
    return flow_run_id is not None and os.environ.get("PREFECT__FLOW_RUN_ID") == flow_run_id
