"""Per-deployment request metrics: counts, latency percentiles over a recent window, and a
cumulative latency histogram, so the percentiles of any interval between two snapshots can be
read from their difference (as Prometheus histograms are read)."""

from __future__ import annotations

import bisect
import math
import threading
from collections import deque
from collections.abc import Sequence

from pydantic import BaseModel

LATENCY_WINDOW = 10_000  # most recent requests kept for percentiles
# Histogram upper bounds: 0.5 ms to ~78 s in steps of 10%, then +inf. A percentile read from it is
# the bucket's upper bound: at most 10% above the true value.
LATENCY_BOUNDS_MS: tuple[float, ...] = tuple(round(0.5 * 1.1**i, 3) for i in range(126))


class MetricsSnapshot(BaseModel):
    """What `GET /metrics` reports for one deployment."""

    requests: int  # live requests answered or failed by this deployment
    errors: int  # live requests that failed in the model (HTTP 500)
    mirrored: int  # requests copied to this deployment by mirror_traffic
    mirror_errors: int  # mirrored copies that failed (the client never sees these)
    model_calls: int  # batches run by the model (fewer than requests when batching works)
    latency_ms: dict[str, float | None]  # p50, p95, p99 of live requests; None before any
    # live requests per LATENCY_BOUNDS_MS bucket since the start (the last one: slower than all)
    latency_buckets: list[int] = []


class DeploymentMetrics:
    """Thread-safe counters of one deployment."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.errors = 0
        self.mirrored = 0
        self.mirror_errors = 0
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._buckets = [0] * (len(LATENCY_BOUNDS_MS) + 1)

    def record(self, latency_ms: float, failed: bool) -> None:
        with self._lock:
            self.requests += 1
            self.errors += failed
            self._latencies.append(latency_ms)
            self._buckets[bisect.bisect_left(LATENCY_BOUNDS_MS, latency_ms)] += 1

    def record_mirrored(self) -> None:
        with self._lock:
            self.mirrored += 1

    def record_mirror_error(self) -> None:
        with self._lock:
            self.mirror_errors += 1

    def snapshot(self, model_calls: int) -> MetricsSnapshot:
        with self._lock:
            latencies = sorted(self._latencies)
            return MetricsSnapshot(
                requests=self.requests,
                errors=self.errors,
                mirrored=self.mirrored,
                mirror_errors=self.mirror_errors,
                model_calls=model_calls,
                latency_ms={f"p{q}": percentile(latencies, q) for q in (50, 95, 99)},
                latency_buckets=list(self._buckets),
            )


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The nearest-rank q-th percentile of ascending values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return round(sorted_values[rank - 1], 3)


def interval_percentile(
    after: MetricsSnapshot, before: MetricsSnapshot | None, q: float
) -> float | None:
    """The q-th percentile latency of the requests served between two snapshots (to within the
    histogram's 10%); None when none were, or when the server reports no histogram."""
    counts = after.latency_buckets
    if before is not None and before.latency_buckets:
        counts = [a - b for a, b in zip(counts, before.latency_buckets, strict=True)]
    total = sum(counts)
    if not total:
        return None
    rank, seen = max(1, math.ceil(q / 100 * total)), 0
    for bound, count in zip((*LATENCY_BOUNDS_MS, math.inf), counts, strict=True):
        seen += count
        if seen >= rank:
            return bound if bound != math.inf else LATENCY_BOUNDS_MS[-1]
    return None  # unreachable: the counts add up to total
