"""The replayed half of a canary step: hold the step while the rollout's own requests exercise
both deployments, and measure each side's health.

With requests to replay (the evaluation's smoke samples), the rollout sends them itself, naming
each deployment in turn in the `azureml-model-deployment` header (so the endpoint's users'
traffic, which its weights route, stays the live window's alone: `tasks.canary_live`), and
measures what it sent: errors (5xx) and latency, per side, until the challenger answered
`hold_requests` or `hold_seconds` ran out. Without requests to replay it waits for the endpoint's
own counters (`GET /metrics`) to show `hold_requests` served by the challenger.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from platforms.endpoint import EndpointBackend
from serving.client import EndpointError
from serving.metrics import DeploymentMetrics, MetricsSnapshot, interval_percentile
from tasks.rollout_policy import DeploymentHealth


def hold_step(
    backend: EndpointBackend,
    new: str,
    live: str,
    requests: list[Any],
    hold_requests: int,
    hold_seconds: float,
) -> tuple[DeploymentHealth, DeploymentHealth]:
    """(challenger, champion) health of one held window: of the replayed `requests`, sent in
    turn to each deployment by name and measured here, when there are any; else of everything
    the endpoint served in it."""
    deadline = time.monotonic() + hold_seconds
    if not requests:
        before = backend.metrics()
        while time.monotonic() < deadline:
            if _delta(backend.metrics().get(new), before.get(new)).requests >= hold_requests:
                break
            time.sleep(0.5)
        after = backend.metrics()
        return _delta(after.get(new), before.get(new)), _delta(after.get(live), before.get(live))
    sides = {new: DeploymentMetrics(), live: DeploymentMetrics()}
    payloads, names = itertools.cycle(requests), itertools.cycle((new, live))
    while time.monotonic() < deadline and sides[new].requests < hold_requests:
        name, started = next(names), time.perf_counter()
        try:
            backend.score(next(payloads), name)
            failed = False
        except EndpointError as exc:
            if exc.status < 500:
                raise  # a smoke request the endpoint refuses: the rollout's own mistake
            failed = True
        sides[name].record((time.perf_counter() - started) * 1000, failed)
    return _delta(sides[new].snapshot(0), None), _delta(sides[live].snapshot(0), None)


def _delta(after: MetricsSnapshot | None, before: MetricsSnapshot | None) -> DeploymentHealth:
    if after is None:
        return DeploymentHealth(requests=0, errors=0)
    requests = after.requests - (before.requests if before else 0)
    errors = after.errors - (before.errors if before else 0)
    # p95 of this window's requests only, so one busy window does not colour the next
    p95 = interval_percentile(after, before, 95) if after.latency_buckets else None
    if p95 is None:
        p95 = after.latency_ms.get("p95")
    return DeploymentHealth(requests=requests, errors=errors, p95_ms=p95)
