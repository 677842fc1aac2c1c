"""A micro-batcher: requests that arrive together are answered by one model call.

Callers `await submit(item)` or `await submit_many(items)` (a batch request's records); a worker
task collects items until `max_batch_size` are waiting or `max_wait_ms` has passed since it found
the first, then runs the batch function in a thread, so the event loop keeps accepting requests
while the model computes. With `workers` > 1, that many batches are in flight at once: one fills
while another computes, and on a multi-core CPU two model calls with one torch thread each
outrun one call with two threads. Each caller gets its own result; when the batch function
raises, every caller of that batch gets the exception.

Fair: each `submit`/`submit_many` call waits in its own lane, and a batch is drawn from the lanes
in turn, one item per lane per pass, the lane whose turn it is first; a lane served by a batch
goes to the back of the line. So a request of 5,000 records is served in turn with every other
request waiting, never ahead of them: a single request that arrives behind it is in one of the
next two batches, not behind 5,000 records. Items whose caller gave up (timed out, disconnected)
are dropped unscored.

A batch is padded to its longest request, so mixing a 40-token question with a 370-token one
costs nearly two long ones. Given `size(item)`, a worker draws up to `LOOKAHEAD` batches' worth
of waiting items and batches the first (the head of the lane whose turn it is) with those
closest to it in size; the others keep their place in their lanes. The lane whose turn it is is
always in the next batch, and a lane left out moves up, so nothing starves.
"""

from __future__ import annotations

import asyncio
import itertools
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
        self.size = size  # None: batches in turn order, whatever their sizes
        self.stats = BatchStats()
        # one lane per submit call, in turn order (a dict keeps insertion order)
        self._lanes: dict[int, deque[tuple[T, asyncio.Future[R]]]] = {}
        self._lane_ids = itertools.count()
        self._waiting = 0  # items in the lanes (some may have been given up)
        self._arrived: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    async def submit(self, item: T) -> R:
        """The result of `item`, computed in a batch with whatever else is waiting."""
        (result,) = await self.submit_many([item])
        return result

    async def submit_many(self, items: Sequence[T]) -> list[R]:
        """The results of `items` (one request's records), in order; they wait in one lane, so
        they take turns with other requests' items. The first failure is raised, and the items
        not scored yet are dropped."""
        if self._closed:
            raise BatcherClosed("this deployment is closed; send the request again")
        if not items:
            return []
        loop = asyncio.get_running_loop()
        if self._arrived is None:  # created here, on the loop that serves the requests
            self._arrived = asyncio.Event()
            self._tasks = [asyncio.create_task(self._run()) for _ in range(self.workers)]
        futures: list[asyncio.Future[R]] = [loop.create_future() for _ in items]
        self._lanes[next(self._lane_ids)] = deque(zip(items, futures, strict=True))
        self._waiting += len(futures)
        self._arrived.set()
        try:
            return list(await asyncio.gather(*futures))
        except BaseException:  # failed, timed out or cancelled: the rest is not worth scoring
            for future in futures:
                future.cancel()
            raise

    async def aclose(self) -> None:
        """Stop taking items, answer the ones already waiting, then stop the workers."""
        self._closed = True
        if self._arrived is not None:
            self._arrived.set()
            await asyncio.gather(*self._tasks)

    async def _run(self) -> None:
        while True:
            batch = await self._next_batch()
            if batch is None:
                return
            await self._call(batch)

    async def _next_batch(self) -> list[tuple[T, asyncio.Future[R]]] | None:
        """The next batch (maybe empty: every item drawn was given up); None once closed and
        nothing is left."""
        assert self._arrived is not None
        while not self._waiting:
            if self._closed:
                return None
            self._arrived.clear()
            await self._arrived.wait()
        deadline = time.monotonic() + self.max_wait
        while self._waiting < self.max_batch_size and not self._closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                break
        # no await from here on: drawing, choosing and putting back is one step of the loop
        drawn = self._draw(self.max_batch_size * (1 if self.size is None else LOOKAHEAD))
        chosen = self._choose([item for _, item, _ in drawn])
        for i in reversed(range(len(drawn))):  # the others back to the front of their lanes
            lane, item, future = drawn[i]
            if i not in chosen:
                self._lanes[lane].appendleft((item, future))
                self._waiting += 1
        served = dict.fromkeys(drawn[i][0] for i in sorted(chosen))
        for lane in served:  # a lane that was served goes to the back of the line, in turn
            if self._lanes[lane]:
                self._lanes[lane] = self._lanes.pop(lane)
        for lane in [lane for lane, entries in self._lanes.items() if not entries]:
            del self._lanes[lane]
        return [(item, future) for i, (_, item, future) in enumerate(drawn) if i in chosen]

    def _draw(self, room: int) -> list[tuple[int, T, asyncio.Future[R]]]:
        """Up to `room` items taken from the lanes in turn (one per lane per pass), in turn
        order; items given up are dropped on the way."""
        drawn: list[tuple[int, T, asyncio.Future[R]]] = []
        lanes = list(self._lanes.items())
        while lanes and len(drawn) < room:
            left = []
            for lane, entries in lanes:
                while entries and entries[0][1].done():  # its caller gave up: never scored
                    entries.popleft()
                    self._waiting -= 1
                if not entries:
                    continue
                if len(drawn) < room:
                    item, future = entries.popleft()
                    self._waiting -= 1
                    drawn.append((lane, item, future))
                left.append((lane, entries))
            lanes = left
        return drawn

    def _choose(self, items: list[T]) -> set[int]:
        """Indices of the batch among `items`: the first and the ones closest to it in size."""
        if len(items) <= self.max_batch_size or self.size is None:  # no size: no lookahead
            return set(range(min(len(items), self.max_batch_size)))
        sizes = [self.size(item) for item in items]
        nearest = sorted(range(1, len(items)), key=lambda i: (abs(sizes[i] - sizes[0]), i))
        return {0, *nearest[: self.max_batch_size - 1]}

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
