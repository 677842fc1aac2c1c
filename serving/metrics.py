"""Per-deployment request metrics: counts and latency percentiles over a recent window."""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Sequence

from pydantic import BaseModel

LATENCY_WINDOW = 10_000  # most recent requests kept for percentiles


class MetricsSnapshot(BaseModel):
    """What `GET /metrics` reports for one deployment."""

    requests: int  # live requests answered or failed by this deployment
    errors: int  # live requests that failed in the model (HTTP 500)
    mirrored: int  # requests copied to this deployment by mirror_traffic
    mirror_errors: int  # mirrored copies that failed (the client never sees these)
    model_calls: int  # batches run by the model (fewer than requests when batching works)
    latency_ms: dict[str, float | None]  # p50, p95, p99 of live requests; None before any


class DeploymentMetrics:
    """Thread-safe counters of one deployment."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.errors = 0
        self.mirrored = 0
        self.mirror_errors = 0
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)

    def record(self, latency_ms: float, failed: bool) -> None:
        with self._lock:
            self.requests += 1
            self.errors += failed
            self._latencies.append(latency_ms)

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
            )


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The nearest-rank q-th percentile of ascending values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return round(sorted_values[rank - 1], 3)
