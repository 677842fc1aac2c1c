"""The state, request log, routing and long-running operations shared by the fake's parts.

`FakeAzureML` (fake_service.py) is assembled from this base and the jobs and online-endpoint
parts; all of its state is declared here, in one place."""

from __future__ import annotations

import itertools
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from azure.storage.blob import BlobServiceClient

from tests.azureml import fake_shapes as shapes
from tests.azureml.fake_http import (
    FakeCredential,
    FakeTransport,
    RecordedRequest,
    Reply,
    UnexpectedRequestError,
)
from tests.azureml.fake_shapes import error

Scorer = Callable[[str, Any], Any]
Handler = Callable[..., Reply]
Route = tuple[str, re.Pattern[str], re.Pattern[str], Handler]
_LRO_API_VERSION = "2023-04-01"


@dataclass(frozen=True)
class BlobAccount:
    """The workspace's storage account as the fake hands it out (in tests: Azurite's)."""

    name: str
    key: str
    endpoint: str  # e.g. http://127.0.0.1:10000/devstoreaccount1

    @classmethod
    def from_connection_string(cls, connection: str) -> BlobAccount:
        parts = dict(p.split("=", 1) for p in connection.split(";") if p)
        return cls(parts["AccountName"], parts["AccountKey"], parts["BlobEndpoint"].rstrip("/"))

    def service(self) -> BlobServiceClient:
        return BlobServiceClient(self.endpoint, credential=self.key)


@dataclass
class _Operation:
    """A long-running operation: `polls` InProgress answers, then `finish()` and Succeeded."""

    polls: int
    finish: Callable[[], None]
    done: bool = False


def route(method: str, host: str, path: str, handler: Handler) -> Route:
    """A route; `host` and `path` are regular expressions whose named groups reach `handler`."""
    return (method, re.compile(host, re.I), re.compile(path, re.I), handler)


def arm_routes(base: str, table: list[tuple[str, str, Handler]]) -> list[Route]:
    """Routes on management.azure.com for paths under `base` (an ARM id)."""
    host = re.escape(shapes.ARM_HOST)
    return [route(method, host, re.escape(base) + path, handler) for method, path, handler in table]


def succeed(resource: dict[str, Any]) -> None:
    resource["properties"]["provisioningState"] = "Succeeded"


def _echo_scorer(deployment: str, body: Any) -> Any:
    return {"deployment": deployment, "input": body}


class WorkspaceState:
    """Everything the fake workspace holds, the record of requests, and request dispatch."""

    def __init__(self, blob: BlobAccount | None, lro_polls: int) -> None:
        self.blob = blob
        self.lro_polls = lro_polls
        self.requests: list[RecordedRequest] = []
        self.unhandled: list[str] = []
        self.computes: dict[str, dict[str, Any]] = {}
        # the region's VM sizes (`vmSizes`); None: listing them is refused (403)
        self.vm_sizes: list[dict[str, Any]] | None = [dict(s) for s in shapes.VM_SIZES]
        self.datastores: dict[str, dict[str, Any]] = {}  # besides the default one
        self.assets: dict[str, dict[tuple[str, str], dict[str, Any]]] = {
            kind: {} for kind in shapes.ASSET_KINDS
        }
        self.jobs: dict[str, dict[str, Any]] = {}
        self.logs: dict[str, dict[str, str]] = {}
        self.job_errors: dict[str, dict[str, str]] = {}  # run history's error of a failed run
        self.endpoints: dict[str, dict[str, Any]] = {}
        self.endpoint_keys: dict[str, dict[str, str]] = {}
        self.deployments: dict[tuple[str, str], dict[str, Any]] = {}
        self.deployment_logs: dict[tuple[str, str], str] = {}
        self.scorer: Scorer = _echo_scorer
        self.workspace_guid = str(uuid.UUID(int=1))
        self.container = f"azureml-blobstore-{self.workspace_guid}"
        self.credential = FakeCredential(shapes.TENANT)
        self.transport = FakeTransport(self.handle)
        self._routes: list[Route] = []
        self._status_plans: dict[str, list[str]] = {}
        self._operations: dict[str, _Operation] = {}
        self._operation_ids = itertools.count(1)
        self._lock = threading.RLock()  # pollers call from their own threads

    # ---- the record, for assertions

    def calls(self) -> list[str]:
        """Every request as `METHOD path`: ARM paths with `{ws}` for the workspace id and
        `{location}` for the operations root; other hosts as full URLs."""
        return [f"{r.method} {self._short(r)}" for r in self.requests]

    def bodies(self, method: str, path_suffix: str) -> list[Any]:
        """The JSON bodies of `method` requests whose path ends with `path_suffix`, oldest first."""
        suffix = path_suffix.lower()
        return [
            r.body for r in self.requests if r.method == method and r.path.lower().endswith(suffix)
        ]

    def last_body(self, method: str, path_suffix: str) -> Any:
        bodies = self.bodies(method, path_suffix)
        if not bodies:
            calls = "\n".join(self.calls())
            raise AssertionError(f"no {method} ...{path_suffix}; calls were:\n{calls}")
        return bodies[-1]

    def _short(self, request: RecordedRequest) -> str:
        path = re.sub(re.escape(shapes.WORKSPACE_ID), "{ws}", request.path, flags=re.I)
        path = re.sub(re.escape(shapes.OPERATIONS_ID), "{location}", path, flags=re.I)
        return path if request.host == shapes.ARM_HOST else f"https://{request.host}{path}"

    # ---- dispatch

    def handle(self, request: RecordedRequest) -> Reply:
        """Record `request` and answer it from the first matching route, or raise."""
        with self._lock:
            self.requests.append(request)
            for method, host, path, handler in self._routes:
                host_match, path_match = host.fullmatch(request.host), path.fullmatch(request.path)
                if method == request.method and host_match and path_match:
                    return handler(request, **host_match.groupdict(), **path_match.groupdict())
            return self._unexpected(request)

    def _unexpected(self, request: RecordedRequest) -> Reply:
        message = f"fake Azure ML has no route for {request.method} {request.url}"
        self.unhandled.append(message)
        raise UnexpectedRequestError(message)

    def _blob(self) -> BlobAccount:
        if self.blob is None:
            raise UnexpectedRequestError(
                "this needs blob storage: FakeAzureML(blob=BlobAccount(...))"
            )
        return self.blob

    def _exists(self, kind: str, name: str, version: str | None) -> bool:
        if kind == "computes":
            return name in self.computes
        return (name, str(version)) in self.assets[kind]

    # ---- long-running operations

    def _operation_routes(self) -> list[Route]:
        return arm_routes(
            shapes.OPERATIONS_ID,
            [
                ("GET", "/mfeOperationsStatus/(?P<op>[^/]+)", self._operation_status),
                ("GET", "/mfeOperationResults/(?P<op>[^/]+)", self._operation_result),
            ],
        )

    def _start_operation(self, finish: Callable[[], None]) -> dict[str, str]:
        """Register an LRO; return the headers the service sends with its 201/202."""
        op = f"fakeop-{next(self._operation_ids)}"
        self._operations[op] = _Operation(polls=self.lro_polls, finish=finish)
        base = f"https://{shapes.ARM_HOST}{shapes.OPERATIONS_ID}"
        return {
            "Azure-AsyncOperation": f"{base}/mfeOperationsStatus/{op}?api-version={_LRO_API_VERSION}",
            "Location": f"{base}/mfeOperationResults/{op}?api-version={_LRO_API_VERSION}",
            "Retry-After": "10",
        }

    def _advance(self, op: str) -> _Operation | None:
        operation = self._operations.get(op)
        if operation is not None and not operation.done:
            if operation.polls > 0:
                operation.polls -= 1
            else:
                operation.finish()
                operation.done = True
        return operation

    def _operation_status(self, request: RecordedRequest, op: str) -> Reply:
        operation = self._advance(op)
        if operation is None:
            return error(404, "ResourceNotFound", f"operation {op} not found")
        if not operation.done:
            return Reply(200, {"name": op, "status": "InProgress"}, {"Retry-After": "10"})
        return Reply(200, {"name": op, "status": "Succeeded", "endTime": shapes.now()})

    def _operation_result(self, request: RecordedRequest, op: str) -> Reply:
        operation = self._advance(op)
        if operation is None:
            return error(404, "ResourceNotFound", f"operation {op} not found")
        if not operation.done:
            return Reply(202, headers={"Location": request.url, "Retry-After": "10"})
        return Reply(200)
