"""The local online endpoint: a FastAPI app shaped like an Azure ML managed online endpoint.

Routes (all but the two probes need `Authorization: Bearer <key>`). Two keys: the scoring key
(`key_file`) may only `POST /score`; the admin key (`admin-<key_file name>` beside it, also 0600)
may do everything, and the scoring key gets 403 on the admin routes. No key and no query string is
ever written to a log. Every request is bounded: body bytes (413), JSON nesting (400), records per
request (413), what the model reads per record and per request (413, in characters and in tokens)
and scoring time (504 for that request; the deployment keeps serving, and drops the request's
records not scored yet).

Nothing a request holds can stall the others: a body over `INLINE_BODY_BYTES`
(serving/routes.py) is decoded, validated and its tokens counted in a thread (the decoding and
the checks are linear in its size), and a request's records wait in their own lane of the deployment's micro-batcher, served
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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from serving.admission import refusal
from serving.auth import admin_key_file, load_or_create_key
from serving.collect import COLLECTED, Collection, jsonl_sink
from serving.endpoint import Endpoint
from serving.guard import KeyGuard
from serving.routes import admin_routes, probe_routes, scoring_routes
from serving.settings import ServerSettings


def create_app(settings: ServerSettings, masker: str | None = None) -> FastAPI:
    """The endpoint app; its key is read from (or generated into) `settings.key_file`. With a
    `masker` ("module:function": `screening.outputs:traffic_masker`), `settings.collect` and a
    state folder, every scoring request and its answer are collected, masked, under
    `<state_dir>/collected/` (`serving.collect`); without a masker nothing is collected. Its
    routes come in three groups (serving/routes.py): the probes, scoring and the admin routes,
    behind the key check (serving/guard.py)."""
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
        KeyGuard,
        key=key,
        admin_key=admin_key,
        admin_key_file=admin_file,
        key_file=settings.key_file,
        max_body_bytes=settings.max_body_bytes,
    )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return refusal(422, _validation_message(exc))

    app.include_router(probe_routes(endpoint, key, admin_key))
    app.include_router(scoring_routes(endpoint, settings, collection))
    app.include_router(admin_routes(endpoint))
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


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)
