"""A micro-batcher: requests that arrive together are answered by one model call.

Callers `await submit(item)`; a worker task collects items until `max_batch_size` are waiting or
`max_wait_ms` has passed since the first, then runs the batch function in a thread, so the event
loop keeps accepting requests while the model computes. With `workers` > 1, that many batches are
in flight at once: one fills while another computes, and on a multi-core CPU two model calls with
one torch thread each outrun one call with two threads. Each caller gets its
own result; when the batch function raises, every caller of that batch gets the exception.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class BatcherClosed(RuntimeError):
    """The batcher was closed (its deployment was replaced or deleted) before the item ran."""


@dataclass
class BatchStats:
    calls: int = 0  # batch function calls
    items: int = 0  # items answered (or failed) by those calls
    largest: int = 0  # largest batch so far


class MicroBatcher(Generic[T, R]):
    """Collects concurrent `submit()` calls into batches for `fn(items) -> results`."""

    def __init__(
        self,
        fn: Callable[[Sequence[T]], Sequence[R]],
        max_batch_size: int = 8,
        max_wait_ms: float = 5.0,
        workers: int = 1,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be at least 1, got {max_batch_size}")
        if max_wait_ms < 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {max_wait_ms}")
        self.fn = fn
        self.max_batch_size = max_batch_size
        self.max_wait = max_wait_ms / 1000
        self.workers = workers  # batches in flight at once: one collects while another runs
        self.stats = BatchStats()
        self._queue: asyncio.Queue[tuple[T, asyncio.Future[R]] | None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    async def submit(self, item: T) -> R:
        """The result of `item`, computed in a batch with whatever else is waiting."""
        if self._closed:
            raise BatcherClosed("this deployment is closed; send the request again")
        if self._queue is None:  # created here, on the loop that serves the requests
            self._queue = asyncio.Queue()
            self._tasks = [asyncio.create_task(self._run()) for _ in range(self.workers)]
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((item, future))
        return await future

    async def aclose(self) -> None:
        """Stop taking items, answer the ones already queued, then stop the worker."""
        self._closed = True
        if self._queue is not None:
            for _ in self._tasks:
                self._queue.put_nowait(None)
            await asyncio.gather(*self._tasks)

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            first = await self._queue.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.max_wait
            stop = False
            while len(batch) < self.max_batch_size:
                remaining = deadline - time.monotonic()
                try:
                    entry = (
                        self._queue.get_nowait()
                        if remaining <= 0
                        else await asyncio.wait_for(self._queue.get(), remaining)
                    )
                except (asyncio.QueueEmpty, TimeoutError):
                    break
                if entry is None:
                    stop = True
                    break
                batch.append(entry)
            await self._call(batch)
            if stop:
                return

    async def _call(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        live = [(item, future) for item, future in batch if not future.done()]  # skip cancelled
        if not live:
            return
        self.stats.calls += 1
        self.stats.items += len(live)
        self.stats.largest = max(self.stats.largest, len(live))
        try:
            results = await asyncio.to_thread(self.fn, [item for item, _ in live])
            if len(results) != len(live):
                raise RuntimeError(
                    f"batch function returned {len(results)} results for {len(live)} items"
                )
        except Exception as exc:  # noqa: BLE001 - not swallowed: every caller of the batch re-raises it
            for _, future in live:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(live, results, strict=True):
            if not future.done():
                future.set_result(result)
