"""The micro-batcher: concurrent callers share model calls, and share a failure."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from serving.batching import BatcherClosed, MicroBatcher


def test_concurrent_submits_are_batched_and_answered_each() -> None:
    calls: list[list[int]] = []
    loop_thread = threading.get_ident()

    def double(items: Sequence[int]) -> list[int]:
        assert threading.get_ident() != loop_thread  # the event loop stays free
        calls.append(list(items))
        return [2 * i for i in items]

    async def main() -> list[int]:
        batcher = MicroBatcher(double, max_batch_size=8, max_wait_ms=50)
        results = await asyncio.gather(*(batcher.submit(i) for i in range(20)))
        await batcher.aclose()
        return list(results)

    assert asyncio.run(main()) == [2 * i for i in range(20)]
    assert len(calls) < 20 and max(map(len, calls)) <= 8
    assert sorted(i for call in calls for i in call) == list(range(20))


def test_a_failure_reaches_every_caller_of_its_batch() -> None:
    release = threading.Event()

    def flaky(items: Sequence[int]) -> list[int]:
        if 0 in items:  # the first batch holds item 0 alone and waits, so the rest queue up
            release.wait(5)
            return [0]
        raise RuntimeError(f"model failed on {sorted(items)}")

    async def main() -> list[object]:
        batcher = MicroBatcher(flaky, max_batch_size=16, max_wait_ms=0)
        first = asyncio.create_task(batcher.submit(0))
        await asyncio.sleep(0.05)
        rest = [asyncio.create_task(batcher.submit(i)) for i in range(1, 6)]
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.gather(first, *rest, return_exceptions=True)
        assert batcher.stats.calls == 2  # item 0, then items 1..5 together
        await batcher.aclose()
        return list(results)

    first, *rest = asyncio.run(main())
    assert first == 0
    assert all(isinstance(r, RuntimeError) and "[1, 2, 3, 4, 5]" in str(r) for r in rest)


def test_closed_batcher_refuses_new_items() -> None:
    async def main() -> None:
        batcher = MicroBatcher(lambda items: list(items))
        assert await batcher.submit(1) == 1
        await batcher.aclose()
        with pytest.raises(BatcherClosed):
            await batcher.submit(2)

    asyncio.run(main())


def test_several_workers_compute_batches_at_once_and_close_cleanly() -> None:
    both_running = threading.Barrier(2, timeout=5)  # one worker alone would time out here

    def meet(items: Sequence[int]) -> list[int]:
        both_running.wait()
        return [i + 1 for i in items]

    async def main() -> list[int]:
        batcher = MicroBatcher(meet, max_batch_size=2, max_wait_ms=50, workers=2)
        results = await asyncio.gather(*(batcher.submit(i) for i in range(4)))
        await batcher.aclose()
        with pytest.raises(BatcherClosed):
            await batcher.submit(9)
        return list(results)

    assert asyncio.run(main()) == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="workers"):
        MicroBatcher(lambda items: items, workers=0)


def test_with_sizes_a_batch_is_the_oldest_item_and_those_closest_to_it_in_size() -> None:
    release = threading.Event()
    calls: list[list[str]] = []

    def record(items: Sequence[str]) -> list[int]:
        calls.append(list(items))
        if items == ["block"]:  # holds the only worker while the rest queue up
            release.wait(5)
        return [len(i) for i in items]

    async def main() -> list[int]:
        batcher = MicroBatcher(record, max_batch_size=2, max_wait_ms=0, size=len)
        first = asyncio.create_task(batcher.submit("block"))
        await asyncio.sleep(0.05)
        sizes = [10, 500, 12, 480, 11, 505]  # arrival order
        rest = [asyncio.create_task(batcher.submit("x" * n)) for n in sizes]
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.gather(first, *rest)
        await batcher.aclose()
        return list(results)

    assert asyncio.run(main()) == [5, 10, 500, 12, 480, 11, 505]  # each caller gets its own
    assert [[len(i) for i in call] for call in calls] == [
        [5],
        [10, 11],  # the oldest (10) with the closest in size, not with its neighbour 500
        [500, 505],  # then the oldest left (500) with its closest
        [12, 480],  # what remains, in arrival order
    ]


def test_closing_answers_items_held_back_for_a_later_batch() -> None:
    release = threading.Event()

    def held_up(items: Sequence[int]) -> list[int]:
        release.wait(5)  # both workers busy while the rest waits, some of it held back
        return list(items)

    async def main() -> list[int]:
        batcher = MicroBatcher(held_up, max_batch_size=2, max_wait_ms=0, size=abs, workers=2)
        items = [1, 100, 2, 200, 3, 300, 4, 400, 5, 500, 6, 600]
        tasks = [asyncio.create_task(batcher.submit(i)) for i in items]
        await asyncio.sleep(0.05)
        closing = asyncio.create_task(batcher.aclose())  # with items still held back
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.wait_for(asyncio.gather(*tasks), 5)  # none left waiting
        await asyncio.wait_for(closing, 5)
        return list(results)

    assert asyncio.run(main()) == [1, 100, 2, 200, 3, 300, 4, 400, 5, 500, 6, 600]


def test_a_big_request_takes_turns_with_the_requests_behind_it() -> None:
    """Issue 27: one client's 5,000 records made another client's single request wait behind
    them (60 s, then 504). Each request waits in its own lane and lanes are served in turn."""
    started, release = threading.Event(), threading.Event()
    calls: list[list[str]] = []

    def record(items: Sequence[str]) -> list[str]:
        calls.append(list(items))
        started.set()
        if len(calls) == 1:  # the first batch holds the worker while the others arrive
            release.wait(5)
        return [i.upper() for i in items]

    async def main() -> tuple[list[str], list[str], str]:
        batcher = MicroBatcher(record, max_batch_size=4, max_wait_ms=0)
        big = asyncio.create_task(batcher.submit_many([f"b{i}" for i in range(1000)]))
        while not started.is_set():
            await asyncio.sleep(0.01)
        other = asyncio.create_task(batcher.submit_many(["x1", "x2", "x3", "x4", "x5", "x6"]))
        single = asyncio.create_task(batcher.submit("s"))
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.gather(big, other, single)
        await batcher.aclose()
        return results

    big, other, single = asyncio.run(main())
    assert big == [f"B{i}" for i in range(1000)] and single == "S"  # each caller its own, in order
    assert other == ["X1", "X2", "X3", "X4", "X5", "X6"]
    assert calls[0] == ["b0", "b1", "b2", "b3"]
    # one item per lane per pass, in turn: the single request is in the very next batch
    assert calls[1] == ["b4", "x1", "s", "b5"]
    assert calls[2:5] == [
        ["b6", "x2", "b7", "x3"],
        ["b8", "x4", "b9", "x5"],
        ["b10", "x6", "b11", "b12"],
    ]
    assert sum(map(len, calls[5:])) == 987  # then the big request alone


def test_the_records_of_a_request_that_gave_up_are_not_scored() -> None:
    release = threading.Event()
    scored: list[int] = []

    def slow(items: Sequence[int]) -> list[int]:
        release.wait(5)
        scored.extend(items)
        return list(items)

    async def main() -> None:
        batcher = MicroBatcher(slow, max_batch_size=2, max_wait_ms=0)
        with pytest.raises(TimeoutError):  # the server's score_timeout_s does this (504)
            await asyncio.wait_for(batcher.submit_many(list(range(100))), 0.05)
        release.set()
        assert await asyncio.wait_for(batcher.submit(-1), 5) == -1
        await batcher.aclose()

    asyncio.run(main())
    assert scored == [0, 1, -1]  # the batch in flight finishes; the other 98 are dropped
