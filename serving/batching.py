"""A micro-batcher: requests that arrive together are answered by one model call.

Callers `await submit(item)`; a worker task collects items until `max_batch_size` are waiting or
`max_wait_ms` has passed since the first, then runs the batch function in a thread, so the event
loop keeps accepting requests while the model computes. With `workers` > 1, that many batches are
in flight at once: one fills while another computes, and on a multi-core CPU two model calls with
one torch thread each outrun one call with two threads. Each caller gets its
own result; when the batch function raises, every caller of that batch gets the exception.

A batch is padded to its longest request, so mixing a 40-token question with a 370-token one
costs nearly two long ones. Given `size(item)`, a worker looks at up to `LOOKAHEAD` batches' worth
of waiting items and batches the oldest with those closest to it in size; the others keep their
place in line. The oldest waiting item is always in the next batch, so nothing starves.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
LOOKAHEAD = 4  # with `size`, a worker chooses among up to this many batches' worth of items


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
        size: Callable[[T], int] | None = None,
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
        self.size = size  # None: batches in arrival order, whatever their sizes
        self.stats = BatchStats()
        self._held: deque[tuple[T, asyncio.Future[R]]] = deque()  # taken, not yet batched
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
        stop = False
        while self._held or not stop:  # after the stop sentinel, answer what is still held
            if self._held:
                first = self._held.popleft()
            else:
                entry = await self._queue.get()
                if entry is None:
                    stop = True
                    continue
                first = entry
            candidates, stop = await self._collect(first, stop)
            batch, rest = self._choose(candidates)
            self._held.extendleft(reversed(rest))  # back to the front, in arrival order
            await self._call(batch)

    async def _collect(
        self, first: tuple[T, asyncio.Future[R]], stop: bool
    ) -> tuple[list[tuple[T, asyncio.Future[R]]], bool]:
        """`first` and what else waits: up to a full batch within `max_wait`, then what is there.

        Returns the candidates in arrival order and whether the stop sentinel was seen.
        """
        assert self._queue is not None
        room = self.max_batch_size * (1 if self.size is None else LOOKAHEAD)
        candidates = [first]
        while self._held and len(candidates) < room:
            candidates.append(self._held.popleft())
        deadline = time.monotonic() + self.max_wait
        while len(candidates) < room and not stop:
            remaining = deadline - time.monotonic()
            try:
                entry = (
                    self._queue.get_nowait()
                    if remaining <= 0 or len(candidates) >= self.max_batch_size
                    else await asyncio.wait_for(self._queue.get(), remaining)
                )
            except (asyncio.QueueEmpty, TimeoutError):
                break
            if entry is None:
                stop = True
                break
            candidates.append(entry)
        return candidates, stop

    def _choose(
        self, candidates: list[tuple[T, asyncio.Future[R]]]
    ) -> tuple[list[tuple[T, asyncio.Future[R]]], list[tuple[T, asyncio.Future[R]]]]:
        """(batch, rest): the oldest candidate and the ones closest to it in size."""
        if len(candidates) <= self.max_batch_size or self.size is None:  # no size: no lookahead
            return candidates, []
        sizes = [self.size(item) for item, _ in candidates]
        nearest = sorted(range(1, len(candidates)), key=lambda i: (abs(sizes[i] - sizes[0]), i))
        chosen = {0, *nearest[: self.max_batch_size - 1]}
        return (
            [c for i, c in enumerate(candidates) if i in chosen],
            [c for i, c in enumerate(candidates) if i not in chosen],
        )

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
