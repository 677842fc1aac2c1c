"""HTTP plumbing for the fake Azure ML service: a sync transport, canned responses, a credential.

The transport hands every request to a handler and returns what it answers, so a real
`MLClient` runs its own serialization, policies and pollers unchanged. Polling sleeps are
recorded instead of slept, so long-running operations finish at once."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from azure.core.credentials import AccessToken, AccessTokenInfo
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest import HttpRequest
from azure.core.rest._http_response_impl import HttpResponseImpl
from azure.core.utils import case_insensitive_dict

TOKEN_LIFETIME_S = 3600
FAKE_TENANT = "00000000-0000-0000-0000-0000000000aa"
FAKE_USER = "00000000-0000-0000-0000-0000000000bb"


class UnexpectedRequestError(AssertionError):
    """The fake service does not know this request: the SDK called something not faked yet."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the fake received it: header names lower-cased, `body` the parsed JSON
    (None when the body is not JSON; `raw` has the bytes)."""

    method: str
    host: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False)

    @property
    def url(self) -> str:
        query = f"?{urlencode(self.query)}" if self.query else ""
        return f"https://{self.host}{self.path}{query}"


@dataclass(frozen=True)
class Reply:
    """What a route answers: a status, a JSON (or raw) body and extra headers."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bytes | None = None


Handler = Callable[[RecordedRequest], Reply]


def _unsigned_jwt(claims: dict[str, Any]) -> str:
    """A JWT-shaped token: the SDK decodes (never verifies) it to read the tenant id. The
    signature segment is junk, but PyJWT still wants it to be valid base64url."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.ZmFrZQ"


class FakeCredential:
    """A token credential handing out an unsigned JWT for `tenant_id`; records requested scopes."""

    def __init__(self, tenant_id: str = FAKE_TENANT) -> None:
        self.tenant_id = tenant_id
        self.scopes: list[tuple[str, ...]] = []

    def _token(self, scopes: tuple[str, ...]) -> tuple[str, int]:
        self.scopes.append(scopes)
        expires_on = int(time.time()) + TOKEN_LIFETIME_S
        claims = {
            "tid": self.tenant_id,
            "oid": FAKE_USER,
            "aud": " ".join(scopes),
            "exp": expires_on,
        }
        return _unsigned_jwt(claims), expires_on

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(*self._token(scopes))

    def get_token_info(self, *scopes: str, options: Any = None) -> AccessTokenInfo:
        return AccessTokenInfo(*self._token(scopes))


class _NoConnection:
    def close(self) -> None:
        pass


def _request_bytes(request: Any) -> bytes:
    """The body of a new-style (`content`) or legacy (`data`/`body`) azure-core request."""
    body = request.content if isinstance(request, HttpRequest) else request.data
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytes):
        return body
    return json.dumps(body).encode()


def record(request: Any) -> RecordedRequest:
    """Parse an azure-core request into a RecordedRequest."""
    url = urlsplit(request.url)
    raw = _request_bytes(request)
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return RecordedRequest(
        method=request.method,
        host=url.netloc.lower(),
        path=url.path,
        query=dict(parse_qsl(url.query)),
        headers={name.lower(): value for name, value in request.headers.items()},
        body=body,
        raw=raw,
    )


def _response(request: Any, reply: Reply) -> HttpResponseImpl:
    content = reply.raw if reply.raw is not None else b""
    headers = case_insensitive_dict(reply.headers)
    if reply.raw is None and reply.body is not None:
        content = json.dumps(reply.body).encode()
        headers.setdefault("Content-Type", "application/json; charset=utf-8")
    headers.setdefault("x-ms-request-id", str(uuid.uuid4()))
    response = HttpResponseImpl(
        request=request,
        internal_response=_NoConnection(),
        status_code=reply.status,
        reason=HTTPStatus(reply.status).phrase,
        content_type=headers.get("Content-Type"),
        headers=headers,
        stream_download_generator=None,
    )
    response._content = content
    return response


class FakeTransport(HttpTransport):
    """A sync azure-core transport that answers from `handler` and never touches the network."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self.sleeps: list[float] = []

    def send(self, request: Any, **kwargs: Any) -> HttpResponseImpl:
        return _response(request, self._handler(record(request)))

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> FakeTransport:
        return self

    def __exit__(self, *args: object) -> None:
        pass

    def sleep(self, duration: float) -> None:
        self.sleeps.append(duration)
