"""The endpoint's routes in three groups: the probes (no key), scoring, and the admin routes.

`create_app` (serving/server.py) includes the three routers; the key each group needs is checked
before any route runs (serving/guard.py).
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse

from serving.admission import BodyTooLarge, TooMuch, admitted, read_body, refusal
from serving.api import (
    DEPLOYMENT_HEADER,
    DEPLOYMENT_NAME,
    DeploymentInfo,
    DeploymentSpec,
    EndpointMetrics,
    EndpointStatus,
)
from serving.auth import IDENTITY_PATH, identity_proof
from serving.collect import Collection, Exchange, ms_since
from serving.endpoint import (
    Conflict,
    Deployment,
    Endpoint,
    Mirrored,
    ModelFailure,
    NoRoute,
    NotFound,
)
from serving.settings import ServerSettings
from serving.traffic import TrafficSettings

INLINE_BODY_BYTES = (
    16 * 1024
)  # bodies checked on the event loop (well under 1 ms); larger: a thread


def probe_routes(endpoint: Endpoint, key: str, admin_key: str) -> APIRouter:
    """The routes that need no key: liveness, readiness (of the endpoint or one deployment) and
    the proof that this endpoint holds its keys. They read state and do no work."""
    routes = APIRouter()

    @routes.get("/health/live")
    async def live() -> dict[str, str]:
        return {"status": "live"}

    @routes.get(IDENTITY_PATH)
    async def identity(
        nonce: Annotated[str, Query(min_length=16, max_length=128, pattern=r"^[0-9a-f]+$")],
    ) -> dict[str, str]:
        """Proof that this endpoint holds its keys (see serving/auth.py identity_proof)."""
        return {
            "score": identity_proof(key, nonce),
            "admin": identity_proof(admin_key, nonce),
        }

    @routes.get("/health/ready")
    async def ready(
        deployment: Annotated[str | None, Query(description="one deployment's readiness")] = None,
    ) -> JSONResponse:
        if deployment is not None:
            if deployment in endpoint.deployments:
                return JSONResponse({"deployment": deployment, "ready": True})
            state = "creating" if deployment in endpoint.creating else "absent"
            return refusal(503, f"deployment {deployment} is not ready ({state})")
        serving = endpoint.ready()
        if not serving:
            return refusal(503, "not ready: no loaded deployment has traffic")
        return JSONResponse({"ready": True, "deployments": serving})

    return routes


def scoring_routes(
    endpoint: Endpoint, settings: ServerSettings, collection: Collection | None
) -> APIRouter:
    """`POST /score`: the request read within its limits, a deployment chosen, the records
    scored, and the exchange collected (masked, off the request path) however it ended."""
    routes = APIRouter()

    @routes.post("/score")
    async def score(
        request: Request,
        forced: Annotated[str | None, Header(alias=DEPLOYMENT_HEADER)] = None,
    ) -> JSONResponse:
        started = time.perf_counter()
        try:
            body = await read_body(request, settings.max_body_bytes)
        except BodyTooLarge as exc:
            raise HTTPException(413, str(exc)) from None
        try:
            deployment = endpoint.choose(forced)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        except NoRoute as exc:
            raise HTTPException(503, str(exc)) from None
        records: list[dict[str, Any]] = []

        routed = "traffic" if forced is None else "named"  # by the weights, or by the header

        def collect(
            status: int,
            outputs: list[Any] | None,
            error: str | None = None,
            mirror: Deployment | None = None,
            ms: float | None = None,
        ) -> None:
            """Queue the exchange, masked and written off the request path (`mirror`: the
            deployment a copy of the request went to, whose answer no client got)."""
            if collection is not None:
                to = mirror or deployment
                collection.submit(
                    Exchange(
                        to.name,
                        to.spec.version,
                        status,
                        ms_since(started) if ms is None else ms,
                        records,
                        outputs,
                        error,
                        routed="mirror" if mirror else routed,
                    )
                )

        def mirrored(
            to: Deployment, status: int, ms: float, outputs: list[Any] | None, error: str | None
        ) -> None:
            collect(status, outputs, error, to, ms)

        try:
            is_batch, outputs = await _answer(
                endpoint, settings, deployment, body, forced, records, mirrored
            )
        except HTTPException as exc:
            collect(exc.status_code, None, str(exc.detail))
            raise
        except ModelFailure as exc:
            collect(500, None, str(exc))
            return refusal(500, str(exc), {DEPLOYMENT_HEADER: deployment.name})
        collect(200, outputs)
        content: Any = {"outputs": outputs} if is_batch else outputs[0]
        return JSONResponse(content, headers={DEPLOYMENT_HEADER: deployment.name})

    return routes


async def _answer(
    endpoint: Endpoint,
    settings: ServerSettings,
    deployment: Deployment,
    body: bytes,
    forced: str | None,
    records: list[dict[str, Any]],
    mirrored: Mirrored,
) -> tuple[bool, list[Any]]:
    """(is_batch, answers) of a request to `deployment`, its records added to `records` once
    they are within the limits (a live one copied to the mirror deployment, if any, whose
    answer goes to `mirrored`); HTTPException when it is refused or times out, ModelFailure
    when the model fails."""

    def admit() -> tuple[list[dict[str, Any]], bool]:
        return admitted(deployment.scorer, body, settings)

    try:  # a big body is checked off the event loop; a small one costs less than the hop
        parsed, is_batch = (
            await asyncio.to_thread(admit) if len(body) > INLINE_BODY_BYTES else admit()
        )
    except TooMuch as exc:
        raise HTTPException(413, str(exc)) from None
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    records.extend(parsed)
    if forced is None:
        endpoint.mirror(records, mirrored)
    try:
        outputs = await asyncio.wait_for(
            endpoint.score(deployment, records), settings.score_timeout_s
        )
    except TimeoutError:
        raise HTTPException(
            504,
            f"deployment {deployment.name} did not answer within "
            f"{settings.score_timeout_s:g}s (score_timeout_s); send smaller requests",
        ) from None
    except NoRoute as exc:
        raise HTTPException(503, str(exc)) from None
    return is_batch, outputs


def admin_routes(endpoint: Endpoint) -> APIRouter:
    """The routes that need the admin key: deployments (list, load, delete), traffic and
    metrics."""
    routes = APIRouter()

    @routes.get("/deployments")
    async def list_deployments() -> EndpointStatus:
        return endpoint.status()

    @routes.put("/deployments/{name}")
    async def put_deployment(
        name: Annotated[str, PathParam(pattern=DEPLOYMENT_NAME)], spec: DeploymentSpec
    ) -> DeploymentInfo:
        try:
            return await endpoint.put_deployment(name, spec)
        except Conflict as exc:
            raise HTTPException(409, str(exc)) from None
        except (ValueError, OSError) as exc:
            raise HTTPException(
                400, f"cannot load {spec.model_dir} into deployment {name}: {exc}"
            ) from None

    @routes.delete("/deployments/{name}")
    async def delete_deployment(name: str) -> dict[str, str]:
        try:
            await endpoint.delete_deployment(name)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        except Conflict as exc:
            raise HTTPException(409, str(exc)) from None
        return {"deleted": name}

    @routes.put("/traffic")
    async def put_traffic(settings: TrafficSettings) -> TrafficSettings:
        try:
            return endpoint.set_traffic(settings)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None

    @routes.get("/metrics")
    async def metrics() -> EndpointMetrics:
        return endpoint.metrics()

    return routes
