"""The state of a local endpoint: named deployments, traffic and mirror, kept in a state file.

This is the endpoint without HTTP: `server.py` maps its errors to status codes. Deployments are
loaded in a worker thread; a replaced deployment keeps serving until its successor is ready. A
deployment with `workers` > 1 scores in that many processes (`serving.workers`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serving.api import (
    STATE_FILE,
    DeploymentInfo,
    DeploymentSpec,
    EndpointMetrics,
    EndpointStatus,
)
from serving.batching import BatcherClosed, MicroBatcher
from serving.metrics import DeploymentMetrics
from serving.scoring import Scorer
from serving.traffic import TrafficSettings, check_traffic, mirror_target, route, without
from serving.workers import ProcessScorer

log = logging.getLogger(__name__)


class NotFound(LookupError):
    """No deployment of that name (HTTP 404)."""


class Conflict(RuntimeError):
    """The change would break live traffic (HTTP 409)."""


class NoRoute(RuntimeError):
    """No deployment has traffic and the request named none (HTTP 503)."""


class ModelFailure(RuntimeError):
    """The model raised while scoring (HTTP 500, counted as an error)."""


class InjectedFault(RuntimeError):
    """A failure injected by a deployment's `fault.error_rate` (a drill, not a bug)."""


# what a mirrored copy got: (deployment, status, latency ms, answers or None, error or None)
Mirrored = Callable[["Deployment", int, float, list[Any] | None, str | None], None]


@dataclass
class Deployment:
    name: str
    spec: DeploymentSpec
    scorer: Scorer | ProcessScorer
    batcher: MicroBatcher[dict[str, Any], dict[str, Any]]
    metrics: DeploymentMetrics


class Endpoint:
    """Deployments, traffic and routing of one endpoint."""

    def __init__(
        self,
        state_dir: Path | None = None,
        max_batch_size: int = 8,
        max_wait_ms: float = 5.0,
        seed: int | None = None,
    ) -> None:
        self.state_file = None if state_dir is None else state_dir / STATE_FILE
        self.max_batch_size = max_batch_size
        self.max_wait_ms = max_wait_ms
        self.deployments: dict[str, Deployment] = {}
        self.creating: set[str] = set()
        # deployments of the state file whose model could not load at start: name -> (spec, why)
        self.failed: dict[str, tuple[DeploymentSpec, str]] = {}
        self.traffic = TrafficSettings()
        # the traffic saved before deployments failed to load at start: kept in the state file
        # until traffic is set again, so a restart after the files are restored serves as before
        self.intended: TrafficSettings | None = None
        self._rng = random.Random(seed)
        self._mirrors: set[asyncio.Task[None]] = set()
        self._restoring = False

    # admin

    async def put_deployment(self, name: str, spec: DeploymentSpec) -> DeploymentInfo:
        """Create or replace `name`; returns once the model is loaded and serving."""
        if name in self.creating:
            raise Conflict(f"deployment {name} is already being created; wait for that request")
        self.creating.add(name)
        try:
            scorer = await asyncio.to_thread(_load_scorer, spec.model_dir, spec.workers or 1)
        finally:
            self.creating.discard(name)
        batcher: MicroBatcher[dict[str, Any], dict[str, Any]] = MicroBatcher(
            scorer.score,
            spec.max_batch_size or self.max_batch_size,
            self.max_wait_ms if spec.max_wait_ms is None else spec.max_wait_ms,
            spec.workers or 1,
            size=scorer.size,
        )
        old = self.deployments.get(name)
        self.deployments[name] = Deployment(name, spec, scorer, batcher, DeploymentMetrics())
        self._save()
        log.info(
            "deployment %s %s: %s (%s)",
            name,
            "replaced" if old else "created",
            spec.model_dir,
            scorer.task,
        )
        if old is not None:
            await _close(old)  # answers what the old model had queued
        return self.info(name)

    async def delete_deployment(self, name: str) -> None:
        if name in self.failed and name not in self.deployments:
            del self.failed[name]
            self._save()
            log.info("failed deployment %s deleted", name)
            return
        deployment = self._get(name)
        if self.traffic.weight(name) or self.traffic.mirror(name):
            raise Conflict(
                f"deployment {name} has traffic {self.traffic.weight(name)}% and mirror "
                f"{self.traffic.mirror(name)}%: move its traffic elsewhere with PUT /traffic first"
            )
        del self.deployments[name]
        self.traffic = without(self.traffic, name)
        self._save()
        log.info("deployment %s deleted", name)
        await _close(deployment)

    def set_traffic(self, settings: TrafficSettings) -> TrafficSettings:
        """Apply new traffic and mirror settings; ValueError lists every broken rule."""
        self.intended = None  # a person's (or a rollout's) traffic replaces what was saved
        return self._apply_traffic(settings)

    def _apply_traffic(self, settings: TrafficSettings) -> TrafficSettings:
        problems = check_traffic(settings, self.deployments)
        if problems:
            raise ValueError("; ".join(problems))
        self.traffic = TrafficSettings(
            traffic={n: w for n, w in settings.traffic.items() if w},
            mirror_traffic={n: p for n, p in settings.mirror_traffic.items() if p},
        )
        self._save()
        log.info("traffic %s mirror %s", self.traffic.traffic, self.traffic.mirror_traffic)
        return self.traffic

    # status

    def info(self, name: str) -> DeploymentInfo:
        d = self._get(name)
        return DeploymentInfo(
            name=name,
            model_dir=d.spec.model_dir,
            version=d.spec.version,
            task=d.scorer.task,
            state="ready",
            traffic=self.traffic.weight(name),
            mirror_traffic=self.traffic.mirror(name),
            fault=d.spec.fault,
            workers=d.spec.workers or 1,
        )

    def status(self) -> EndpointStatus:
        return EndpointStatus(
            deployments=[self.info(n) for n in sorted(self.deployments)],
            creating=sorted(self.creating),
            traffic=self.traffic,
            failed={n: why for n, (_, why) in sorted(self.failed.items())},
        )

    def metrics(self) -> EndpointMetrics:
        return EndpointMetrics(
            deployments={
                n: d.metrics.snapshot(d.batcher.stats.calls)
                for n, d in sorted(self.deployments.items())
            }
        )

    def ready(self) -> list[str]:
        """Loaded deployments with live traffic (the endpoint is ready when there is one)."""
        return sorted(n for n in self.deployments if self.traffic.weight(n) > 0)

    # scoring

    def choose(self, forced: str | None) -> Deployment:
        """The deployment for a request: the one named in the header, else by traffic weights."""
        if forced is not None:
            return self._get(forced)
        name = route(self.traffic, self._rng.uniform(0, 100))
        if name is None:
            raise NoRoute(
                "no deployment has traffic: set it with PUT /traffic, or name a deployment in "
                "the azureml-model-deployment header"
            )
        return self.deployments[name]

    async def score(self, deployment: Deployment, records: list[dict[str, Any]]) -> list[Any]:
        """Answers of a live request; ModelFailure when the model (or an injected fault) fails."""
        started = time.perf_counter()
        try:
            outputs = await self._run(deployment, records)
        except BatcherClosed:  # replaced or deleted while this request waited: not a model error
            raise NoRoute(
                f"deployment {deployment.name} was replaced or deleted while the request waited; "
                "send it again"
            ) from None
        except Exception as exc:
            deployment.metrics.record(_ms_since(started), failed=True)
            log.warning("deployment %s failed to score", deployment.name, exc_info=True)
            raise ModelFailure(
                f"deployment {deployment.name} failed to score: {type(exc).__name__}: {exc}"
            ) from exc
        deployment.metrics.record(_ms_since(started), failed=False)
        return outputs

    def mirror(self, records: list[dict[str, Any]], answered: Mirrored | None = None) -> None:
        """Maybe copy a live request to the mirror deployment; its answer goes to no client,
        only to `answered` (the collection's), with the status and latency it had."""
        name = mirror_target(self.traffic, self._rng.uniform(0, 100))
        if name is None:
            return
        target = self.deployments[name]
        target.metrics.record_mirrored()
        task = asyncio.create_task(self._mirror(target, records, answered))
        self._mirrors.add(task)
        task.add_done_callback(self._mirrors.discard)

    async def _mirror(
        self, target: Deployment, records: list[dict[str, Any]], answered: Mirrored | None
    ) -> None:
        started = time.perf_counter()
        try:
            outputs = await self._run(target, records)
        except Exception as exc:
            target.metrics.record_mirror_error()
            log.warning("mirror deployment %s failed to score", target.name, exc_info=True)
            if answered is not None:
                answered(target, 500, _ms_since(started), None, f"{type(exc).__name__}: {exc}")
            return
        if answered is not None:
            answered(target, 200, _ms_since(started), outputs, None)

    async def _run(self, deployment: Deployment, records: list[dict[str, Any]]) -> list[Any]:
        fault = deployment.spec.fault
        if fault is not None:
            if fault.delay_ms:
                await asyncio.sleep(fault.delay_ms / 1000)
            if self._rng.random() < fault.error_rate:
                raise InjectedFault(f"injected fault (error_rate={fault.error_rate}, a drill)")
        return await deployment.batcher.submit_many(records)  # one lane: served in turn

    # lifecycle

    async def restore(self) -> None:
        """Reload the deployments and traffic of the state file, if there is one."""
        if self.state_file is None or not self.state_file.exists():
            return
        state = json.loads(self.state_file.read_text())
        self._restoring = True  # the file stays as it is until everything is back
        try:
            await self._restore(state)
        finally:
            self._restoring = False
        self._save()

    async def _restore(self, state: dict[str, Any]) -> None:
        """Every deployment that loads serves again; one that does not is listed as failed (and
        kept in the state file, so it is tried again at the next start) and its traffic goes to
        the others in proportion."""
        assert self.state_file is not None
        for name, spec in state.get("deployments", {}).items():
            try:
                parsed = DeploymentSpec.model_validate(spec)
                await self.put_deployment(name, parsed)
            except (ValueError, OSError) as exc:
                why = f"cannot load at start: {type(exc).__name__}: {exc}"
                log.error("deployment %s %s; the others serve", name, why)
                self.failed[name] = (DeploymentSpec.model_validate(spec), why)
        saved = TrafficSettings.model_validate(
            state.get("intended_traffic") or state.get("traffic", {})
        )
        self._apply_traffic(_without_failed(saved, set(self.deployments)))
        lost = {n for n in self.failed if saved.weight(n) or saved.mirror(n)}
        self.intended = saved if lost else None
        if lost:
            log.error(
                "traffic %s is served as %s until %s load%s (restore the files and restart the "
                "endpoint, or set traffic)",
                saved.traffic,
                self.traffic.traffic,
                ", ".join(sorted(lost)),
                "s" if len(lost) == 1 else "",
            )

    async def aclose(self) -> None:
        for task in list(self._mirrors):
            task.cancel()
        for deployment in self.deployments.values():
            await _close(deployment)

    def _get(self, name: str) -> Deployment:
        if name not in self.deployments:
            raise NotFound(
                f"no deployment named {name!r} (existing: {', '.join(sorted(self.deployments)) or 'none'})"
            )
        return self.deployments[name]

    def _save(self) -> None:
        if self.state_file is None or self._restoring:
            return
        kept = {n: spec for n, (spec, _) in self.failed.items() if n not in self.deployments}
        kept.update({n: d.spec for n, d in self.deployments.items()})
        state = {
            "deployments": {n: spec.model_dump(mode="json") for n, spec in sorted(kept.items())},
            "traffic": self.traffic.model_dump(mode="json"),
        }
        if self.intended is not None:
            state["intended_traffic"] = self.intended.model_dump(mode="json")
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(state, indent=2))
        os.replace(tmp, self.state_file)


def _without_failed(saved: TrafficSettings, loaded: set[str]) -> TrafficSettings:
    """The saved traffic over the deployments that loaded, rescaled to sum to 100 again (the
    largest keeps the rounding); the mirror only when its target loaded."""
    weights = {n: w for n, w in saved.traffic.items() if n in loaded and w}
    total = sum(weights.values())
    if total and total != 100:
        weights = {n: w * 100 // total for n, w in weights.items()}
        weights[max(weights, key=lambda n: (weights[n], n))] += 100 - sum(weights.values())
    mirror = {n: p for n, p in saved.mirror_traffic.items() if n in loaded}
    return TrafficSettings(traffic=weights, mirror_traffic=mirror if weights else {})


def _load_scorer(model_dir: str, workers: int) -> Scorer | ProcessScorer:
    """The model in this process (one worker) or in `workers` scoring processes."""
    return Scorer(model_dir) if workers == 1 else ProcessScorer(model_dir, workers)


async def _close(deployment: Deployment) -> None:
    """Answer what the deployment has queued, then stop its scoring processes, if any."""
    await deployment.batcher.aclose()
    await asyncio.to_thread(deployment.scorer.close)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
