"""Scoring in worker processes: a deployment with `workers` > 1 keeps that many model copies.

Two batches scored by threads of one process contend for the GIL: transformers runs Python
between torch ops, and so does the server's event loop. Measured with the benchmark's MiniLM QA
model on 2 cores (`benchmarks/serve.py`, batch 2), two batches in two processes answered 44-57
requests/s where two threads of the server process answered 35-42. So, as Azure ML's inference server does with `WORKER_COUNT`,
each worker is its own (spawned) process that loads the model once and scores one batch at a time
with `cpu_count // workers` torch threads. A worker that dies (killed, out of memory) fails the
batch it held and is replaced by a fresh process, which loads the model before its next batch.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from serving.payloads import parse_payload, record_size, record_tokens
from trainer.modeling import find_model_dir

log = logging.getLogger(__name__)
START_TIMEOUT_S = 600.0  # loading a large model from a cold disk can take minutes


class WorkerDied(RuntimeError):
    """A scoring process exited while it held a batch (that batch failed; the worker restarts)."""


class _Worker:
    """One spawned process serving one model directory over a pipe."""

    def __init__(self, model_dir: Path, threads: int, index: int) -> None:
        ctx = multiprocessing.get_context("spawn")  # fork would copy the server's threads
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_serve,
            args=(child, str(model_dir), threads),
            name=f"tunegate-scoring-{index}",
            daemon=True,  # never outlives the server
        )
        self.process.start()
        child.close()
        self.task: str | None = None  # set once the model is loaded

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> str:
        """The model's task once loaded; ValueError with the worker's reason if it could not."""
        if self.task is None:
            if not self.conn.poll(timeout):
                self.close()
                raise ValueError(f"scoring worker did not load the model in {timeout:.0f} s")
            kind, value = self._receive()
            if kind != "ready":
                self.close()
                raise ValueError(value)
            self.task = value
        return self.task

    def score(self, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        self.wait_ready()
        try:
            self.conn.send(list(records))
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise self._died() from None
        kind, value = self._receive()
        if kind == "error":
            raise RuntimeError(value)
        return value

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a dead worker's pipe is closed already
            self.conn.send(None)  # asks the worker to exit
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()

    def _receive(self) -> tuple[str, Any]:
        try:
            return self.conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            raise self._died() from None

    def _died(self) -> WorkerDied:
        self.process.join(5)
        return WorkerDied(
            f"scoring process {self.process.name} (pid {self.process.pid}) exited with code "
            f"{self.process.exitcode} while scoring; it is being restarted, send the request again"
        )


class ProcessScorer:
    """`workers` processes scoring one model directory; `score()` uses whichever is free.

    Has the `Scorer` surface the endpoint uses (`task`, `model_dir`, `parse`, `score`, `size`) plus
    `close()`. Construction returns once every worker has loaded the model, so a bad model
    directory fails here with the reason, not at the first request.
    """

    def __init__(self, model_dir: str | Path, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.model_dir = find_model_dir(Path(model_dir))
        self._tokenizer: Any = None  # loaded at the first request that counts tokens
        self.threads = max(1, (os.cpu_count() or 1) // workers)
        self._started = 0
        self._workers = [self._start() for _ in range(workers)]
        try:
            tasks = {w.wait_ready() for w in self._workers}
        except ValueError as exc:
            self.close()
            raise ValueError(f"cannot load {self.model_dir} in a scoring process: {exc}") from None
        (self.task,) = tasks
        self._idle: queue.Queue[_Worker] = queue.Queue()
        for worker in self._workers:
            self._idle.put(worker)

    def parse(self, payload: Any) -> tuple[list[dict[str, Any]], bool]:
        """(records, is_batch) of a decoded request; ValueError names a missing or wrong field."""
        return parse_payload(self.task, payload)

    def size(self, record: dict[str, Any]) -> int:
        return record_size(self.task, record)

    def tokens(self, records: Sequence[dict[str, Any]]) -> list[int]:
        """Tokens of each record, counted here with the model's tokenizer (the model is
        elsewhere)."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        return record_tokens(self._tokenizer, self.task, records)

    def score(self, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One response per record, from one free worker (blocks while all are busy)."""
        if not records:
            return []
        worker = self._idle.get()
        try:
            return worker.score(records)
        except WorkerDied:
            log.warning("scoring process of %s died; starting another", self.model_dir)
            self._workers.remove(worker)
            worker.close()
            worker = self._start()
            self._workers.append(worker)
            raise
        finally:
            self._idle.put(worker)

    def pids(self) -> list[int | None]:
        return [w.process.pid for w in self._workers]

    def close(self) -> None:
        """Stop every worker process (after the batcher answered what it had queued)."""
        for worker in self._workers:
            worker.close()

    def _start(self) -> _Worker:
        self._started += 1
        return _Worker(self.model_dir, self.threads, self._started)


def _serve(conn: Connection, model_dir: str, threads: int) -> None:
    """A worker process: load the model, then answer batches until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    import torch

    from serving.scoring import Scorer

    torch.set_num_threads(threads)
    try:
        scorer = Scorer(model_dir)
    except Exception as exc:  # noqa: BLE001 - sent to the parent, which raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", scorer.task))
    while True:
        try:
            records = conn.recv()
        except EOFError:  # the server is gone
            return
        if records is None:
            return
        try:
            conn.send(("ok", scorer.score(records)))
        except Exception as exc:  # noqa: BLE001 - sent to the parent: it fails that batch
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
