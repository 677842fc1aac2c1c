"""The local online endpoint: a FastAPI app shaped like an Azure ML managed online endpoint.

Routes (all but the two probes need `Authorization: Bearer <key>`). Two keys: the scoring key
(`key_file`) may only `POST /score`; the admin key (`admin-<key_file name>` beside it, also 0600)
may do everything, and the scoring key gets 403 on the admin routes. No key and no query string is
ever written to a log. Every request is bounded: body bytes (413), JSON nesting (400), records per
request (413), what the model reads per record and per request (413, in characters and in tokens)
and scoring time (504 for that request; the deployment keeps serving, and drops the request's
records not scored yet).

Nothing a request holds can stall the others: a body over `INLINE_BODY_BYTES` is decoded,
validated and its tokens counted in a thread (the decoding and the checks are linear in its
size), and a request's records wait in their own lane of the deployment's micro-batcher, served
in turn with every other request's (`serving.batching`), so a batch of 5,000 records is
interleaved with the single requests that arrive behind it. The probes do no work but read the
endpoint's state, on an event loop that never parses or scores: they answer while any of that
goes on.

- `POST /score`: answered by a deployment chosen by traffic weights, or the one named in the
  `azureml-model-deployment` header (any deployment, even with 0% traffic: that is how a new one
  is smoke-tested). The response header of the same name says who answered. A share of live
  (not header-routed) requests is copied to the mirror deployment: its answer is returned to no
  one, only collected.
- `GET /health/live`: the process is up. `GET /health/ready[?deployment=NAME]`: a deployment
  with traffic (or the named one) is loaded.
- `GET /deployments`, `PUT /deployments/{name}` (loads the model, answers when it serves),
  `DELETE /deployments/{name}` (409 while it has traffic), `PUT /traffic`, `GET /metrics`.

Every request a deployment answers (or fails, or refuses) is collected, masked, off the request
path, as Azure ML's data collector collects a managed deployment's (`serving.collect`), with how
it was routed: by the traffic weights (a user's), by the header (named), or as a mirrored copy.

Client mistakes get a 4xx with `{"detail": message}`; 500 means the model itself failed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from fastapi import APIRouter, FastAPI, Header, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from serving.api import (
    DEPLOYMENT_HEADER,
    DEPLOYMENT_NAME,
    DeploymentInfo,
    DeploymentSpec,
    EndpointMetrics,
    EndpointStatus,
)
from serving.auth import (
    IDENTITY_PATH,
    admin_key_file,
    bearer_matches,
    identity_proof,
    load_or_create_key,
)
from serving.collect import COLLECTED, Collection, Exchange, jsonl_sink, ms_since
from serving.endpoint import (
    Conflict,
    Deployment,
    Endpoint,
    Mirrored,
    ModelFailure,
    NoRoute,
    NotFound,
)
from serving.payloads import most_tokens, parse_json
from serving.scoring import Scorer
from serving.traffic import TrafficSettings
from serving.workers import ProcessScorer

log = logging.getLogger(__name__)
PUBLIC_PATHS = ("/health/live", "/health/ready", IDENTITY_PATH)
INLINE_BODY_BYTES = (
    16 * 1024
)  # bodies checked on the event loop (well under 1 ms); larger: a thread
MiB = 1024 * 1024


class ServerSettings(BaseModel):
    """How one local endpoint runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key_file: Path = Field(description="the endpoint key; created with mode 0600 when missing")
    state_dir: Path | None = Field(None, description="deployments and traffic survive restarts")
    max_body_bytes: int = Field(MiB, ge=1, description="larger request bodies get 413")
    max_batch_size: int = Field(8, ge=1, le=256, description="micro-batch size per model call")
    max_wait_ms: float = Field(5.0, ge=0, le=1000, description="how long a batch waits to fill")
    max_input_chars: int = Field(
        20_000, ge=1, description="characters the model reads per record; more get 413"
    )
    max_input_tokens: int = Field(
        4096, ge=1, description="tokens the model reads per record; more get 413"
    )
    max_request_records: int = Field(
        5_000,
        ge=1,
        description="records one request may hold ({'inputs': [...]}); more get 413",
    )
    max_request_tokens: int = Field(
        300_000,
        ge=1,
        description="tokens the model reads for all records of one request; more get 413 "
        "(scoring time grows with them)",
    )
    max_json_depth: int = Field(32, ge=4, le=1000, description="deeper request bodies get 400")
    score_timeout_s: float = Field(
        60.0, gt=0, description="a request not answered by then gets 504 (the model finishes it)"
    )
    seed: int | None = Field(None, description="routing random seed (tests); None: random")
    collect: bool = Field(
        True,
        description="write every scoring request and its answer, masked, to "
        "<state_dir>/collected/ (needs a masker: see create_app)",
    )
    collect_max_bytes: int = Field(
        8 * MiB, ge=4096, description="a collected file is rotated at this size"
    )
    collect_keep: int = Field(3, ge=0, le=100, description="rotated collected files kept")


class BodyTooLarge(ValueError):
    pass


class TooMuch(ValueError):
    """A request over one of the per-request limits (HTTP 413, naming the limit)."""


def create_app(settings: ServerSettings, masker: str | None = None) -> FastAPI:
    """The endpoint app; its key is read from (or generated into) `settings.key_file`. With a
    `masker` ("module:function": `screening.outputs:traffic_masker`), `settings.collect` and a
    state folder,
    every scoring request and its answer are collected, masked, under `<state_dir>/collected/`
    (`serving.collect`); without a masker nothing is collected. Its routes come in three groups:
    the probes (`_probe_routes`), scoring (`_scoring_routes`) and the admin routes
    (`_admin_routes`)."""
    key = load_or_create_key(settings.key_file)
    admin_file = admin_key_file(settings.key_file)
    admin_key = load_or_create_key(admin_file)
    endpoint = Endpoint(
        settings.state_dir, settings.max_batch_size, settings.max_wait_ms, settings.seed
    )
    collection = _collection(settings, masker)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await endpoint.restore()
        yield
        await endpoint.aclose()
        if collection is not None:
            await asyncio.to_thread(collection.close)

    app = FastAPI(title="tunegate local endpoint", lifespan=lifespan)
    app.state.endpoint = endpoint
    app.state.collection = collection

    app.add_middleware(
        _Guard,
        key=key,
        admin_key=admin_key,
        admin_key_file=admin_file,
        key_file=settings.key_file,
        max_body_bytes=settings.max_body_bytes,
    )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc))

    app.include_router(_probe_routes(endpoint, key, admin_key))
    app.include_router(_scoring_routes(endpoint, settings, collection))
    app.include_router(_admin_routes(endpoint))
    return app


def _collection(settings: ServerSettings, masker: str | None) -> Collection | None:
    """Where scoring requests are collected, masked: None without a masker, `settings.collect`
    or a state folder."""
    if not settings.collect or masker is None or settings.state_dir is None:
        return None
    sink = jsonl_sink(
        settings.state_dir / COLLECTED, settings.collect_max_bytes, settings.collect_keep
    )
    return Collection(masker, [sink])


def _probe_routes(endpoint: Endpoint, key: str, admin_key: str) -> APIRouter:
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
            return _error(503, f"deployment {deployment} is not ready ({state})")
        serving = endpoint.ready()
        if not serving:
            return _error(503, "not ready: no loaded deployment has traffic")
        return JSONResponse({"ready": True, "deployments": serving})

    return routes


def _scoring_routes(
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
            body = await _read_body(request, settings.max_body_bytes)
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
            return _error(500, str(exc), {DEPLOYMENT_HEADER: deployment.name})
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
        return _admitted(deployment.scorer, body, settings)

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


def _admin_routes(endpoint: Endpoint) -> APIRouter:
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


def _admitted(
    scorer: Scorer | ProcessScorer, body: bytes, settings: ServerSettings
) -> tuple[list[dict[str, Any]], bool]:
    """(records, is_batch) of a request body within every limit of `settings`; TooMuch (413)
    naming the limit it is over, ValueError (400) when it is malformed. Linear in the body's size;
    tokens are counted (one batched tokenizer call) only when a bound without the tokenizer
    (`most_tokens`) does not already show the request is within its token limits."""
    payload = parse_json(body, settings.max_json_depth)
    inputs = payload.get("inputs") if isinstance(payload, dict) else None
    if isinstance(inputs, list) and len(inputs) > settings.max_request_records:
        raise TooMuch(
            f"the request has {len(inputs)} records; this endpoint takes at most "
            f"{settings.max_request_records} per request (max_request_records): split it"
        )
    records, is_batch = scorer.parse(payload)

    def where(i: int) -> str:
        return f"inputs[{i}]" if is_batch else "the request"

    for i, record in enumerate(records):  # characters first: they cost nothing to count
        if (chars := scorer.size(record)) > settings.max_input_chars:
            raise TooMuch(
                f"{where(i)} has {chars} characters for the model to read; this endpoint takes "
                f"at most {settings.max_input_chars} per record (max_input_chars)"
            )
    bounds = [most_tokens(scorer.task, record) for record in records]
    if max(bounds) > settings.max_input_tokens or sum(bounds) > settings.max_request_tokens:
        tokens = scorer.tokens(records)
        for i, count in enumerate(tokens):
            if count > settings.max_input_tokens:
                raise TooMuch(
                    f"{where(i)} has {count} tokens for the model to read; this endpoint takes "
                    f"at most {settings.max_input_tokens} per record (max_input_tokens)"
                )
        if (total := sum(tokens)) > settings.max_request_tokens:
            raise TooMuch(
                f"the request has {total} tokens for the model to read; this endpoint takes at "
                f"most {settings.max_request_tokens} per request (max_request_tokens): split it"
            )
    return records, is_batch


def run_server(
    settings: ServerSettings,
    host: str = "127.0.0.1",
    port: int = 8000,
    masker: str | None = None,
) -> None:
    """Serve in the foreground until interrupted; the access log never shows a query string."""
    logging.getLogger("uvicorn.access").addFilter(NoQueryStrings())
    uvicorn.run(create_app(settings, masker), host=host, port=port, log_level="info")


class NoQueryStrings(logging.Filter):
    """Drop the query string from uvicorn's access lines (a client may put a key there)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def printable(text: str) -> str:
    """`text` as one log line: control characters (a `%0a` in a URL decodes to a newline, which
    would forge a line of the log) and non-ASCII shown as escapes."""
    return text.encode("unicode_escape").decode("ascii")


class _Guard:
    """Key check and declared body size, before any route runs.

    A plain ASGI middleware: Starlette's `BaseHTTPMiddleware` (`@app.middleware`) runs every
    request through an extra task and stream pair, which cost ~0.25 ms of the event loop's time per
    request (measured) on the cores the models need.
    """

    def __init__(
        self,
        app: ASGIApp,
        key: str,
        admin_key: str,
        admin_key_file: Path,
        key_file: Path,
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self.key, self.admin_key = key, admin_key
        self.key_file, self.admin_key_file = key_file, admin_key_file
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        path, authorization = scope["path"], headers.get("authorization")
        if path not in PUBLIC_PATHS and not bearer_matches(authorization, self.admin_key):
            if not bearer_matches(authorization, self.key):
                log.warning("401 %s %s: missing or wrong key", scope["method"], printable(path))
                return _error(
                    401,
                    f"missing or wrong key: send 'Authorization: Bearer <key>' with the key in "
                    f"{self.key_file}",
                )
            if path != "/score":
                log.warning(
                    "403 %s %s: the scoring key on an admin route", scope["method"], printable(path)
                )
                return _error(
                    403,
                    f"this key may only score (POST /score); {scope['method']} {path} needs the "
                    f"admin key in {self.admin_key_file}",
                )
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            return _error(400, f"Content-Length must be a number of bytes, got {length!r}")
        if length is not None and int(length) > self.max_body_bytes:
            return _error(413, _too_large(self.max_body_bytes))
        return None


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, read in chunks so one sent without Content-Length cannot exceed `limit`."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(_too_large(limit))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> str:
    return f"request body is larger than {limit} bytes: split it into smaller requests"


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)
