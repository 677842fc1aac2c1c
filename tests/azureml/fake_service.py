"""An in-memory Azure ML workspace behind a fake HTTP transport, for driving a real `MLClient`.

`FakeAzureML` answers the ARM (`management.azure.com`) and workspace data-plane
(`eastus.api.azureml.ms`) requests that `MLClient` sends for jobs, computes, datastores, data,
models, online endpoints and deployments, and the endpoints' scoring URIs. Bodies are shaped like the
service's (ARM resources with `id`, `name`, `type`, `properties`, `systemData`); long-running
operations answer 201/202 with `Azure-AsyncOperation` and `Location` and are polled to the end
(the transport records poll sleeps instead of sleeping). Writes are checked as the service
checks them (referenced code, environment, compute, data and model must exist; asset paths
never change). Every request is recorded so tests assert on what the SDK serialized; anything
the fake does not know raises `UnexpectedRequestError` and is listed in `unhandled`.

`ml_client(fake)` passes the fake transport as `MLClient(..., transport=...)`. MLClient hands
its kwargs to every service client it builds: the ARM clients of each api-version, the
run-history, dataset and model data-plane clients that `jobs` builds lazily, and the raw
`HttpPipeline` used for discovery, log downloads and `invoke`.

Blob storage is the one thing the transport cannot carry: the SDK builds its own
azure-storage-blob clients. With a `BlobAccount` (Azurite's dev account) it stays real:
- Code uploads (`code=` on jobs and deployments) ask `startPendingUpload` for a SAS URI; the
  fake answers with an Azurite container URL and the SDK uploads there, unmodified.
- Reads through a datastore (`jobs.download`) build the account URL from the SDK's template
  `https://{account}.blob.{cloud storage suffix}`; no datastore field (`endpoint`,
  `protocol`) or cloud setting turns that into Azurite's `http://127.0.0.1:<port>/<account>`.
  `route_datastores_to_azurite` swaps that one template entry for a test's duration; nothing
  else in the SDK is patched.
"""

from __future__ import annotations

import copy
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from azure.ai.ml import MLClient
from azure.ai.ml.constants._common import STORAGE_ACCOUNT_URLS
from azure.storage.blob import ContainerSasPermissions, generate_container_sas

from tests.azureml import fake_shapes as shapes
from tests.azureml.fake_endpoints import OnlineEndpointsPart
from tests.azureml.fake_http import FakeCredential, RecordedRequest, Reply, UnexpectedRequestError
from tests.azureml.fake_jobs import JobsPart
from tests.azureml.fake_shapes import error, found
from tests.azureml.fake_workspace import BlobAccount, Route, arm_routes, succeed

__all__ = [
    "BlobAccount",
    "FakeAzureML",
    "FakeCredential",
    "RecordedRequest",
    "UnexpectedRequestError",
    "ml_client",
    "route_datastores_to_azurite",
]

_UPLOAD_SAS = ContainerSasPermissions(read=True, write=True, list=True, create=True, add=True)


class FakeAzureML(JobsPart, OnlineEndpointsPart):
    """One fake workspace: its resources in memory, every request recorded.

    Tests read `requests`, `calls()`, `bodies()`/`last_body()` and the state dicts (`jobs`,
    `computes`, `datastores`, `data`, `models`, `endpoints`, `deployments`, ...), and drive it
    with `add_compute`/`add_data`/`add_datastore`, `vm_sizes` (the region's; None: refused), `set_job_status`/`progress_job`, `write_log`,
    `write_job_output`, `lro_polls` (InProgress answers per long-running operation),
    `scorer` (what scoring answers for `(deployment, body)`) and `deployment_logs`."""

    def __init__(self, blob: BlobAccount | None = None, *, lro_polls: int = 1) -> None:
        super().__init__(blob, lro_polls)
        self._routes = [
            *self._operation_routes(),
            *self._workspace_routes(),
            *arm_routes(shapes.OPERATIONS_ID, [("GET", "/vmSizes", self._list_vm_sizes)]),
            *self._job_routes(),
            *self._endpoint_routes(),
        ]

    @property
    def data(self) -> dict[tuple[str, str], dict[str, Any]]:
        return self.assets["data"]

    @property
    def models(self) -> dict[tuple[str, str], dict[str, Any]]:
        return self.assets["models"]

    def add_compute(
        self,
        name: str,
        vm_size: str = "Standard_NC6s_v3",
        nodes: int = 2,
        priority: str = "Dedicated",
    ) -> None:
        """An existing, provisioned AmlCompute cluster (`priority`: Dedicated or LowPriority)."""
        properties = {
            "computeType": "AmlCompute",
            "computeLocation": shapes.LOCATION,
            "provisioningState": "Succeeded",
            "properties": {
                "vmSize": vm_size,
                "vmPriority": priority,
                "osType": "Linux",
                "scaleSettings": {"minNodeCount": 0, "maxNodeCount": nodes},
            },
        }
        with self._lock:
            self._store_compute(name, {"location": shapes.LOCATION, "properties": properties})

    def add_data(self, name: str, version: str, path: str, data_type: str = "uri_folder") -> None:
        """An existing data asset version."""
        with self._lock:
            self._store_version("data", name, version, {"dataType": data_type, "dataUri": path})

    def _workspace_routes(self) -> list[Route]:
        name, version = "(?P<name>[^/]+)", "(?P<version>[^/]+)"
        kind = "(?P<kind>" + "|".join(shapes.ASSET_KINDS) + ")"
        return arm_routes(
            shapes.WORKSPACE_ID,
            [
                ("GET", "", self._get_workspace),
                ("GET", "/datastores", self._list_datastores),
                ("GET", f"/datastores/{name}", self._get_datastore),
                ("PUT", f"/datastores/{name}", self._put_datastore),
                ("POST", f"/datastores/{name}/listSecrets", self._list_secrets),
                (
                    "POST",
                    f"/codes/{name}/versions/{version}/startPendingUpload",
                    self._start_upload,
                ),
                ("GET", f"/{kind}/{name}/versions", self._list_versions),
                ("GET", f"/{kind}/{name}/versions/{version}", self._get_version),
                ("PUT", f"/{kind}/{name}/versions/{version}", self._put_version),
                ("GET", f"/computes/{name}", self._get_compute),
                ("PUT", f"/computes/{name}", self._put_compute),
            ],
        )

    # ---- workspace and datastores

    def _account_name(self) -> str:
        return self.blob.name if self.blob else "fakestorage"

    def _get_workspace(self, request: RecordedRequest) -> Reply:
        return Reply(200, shapes.workspace_resource(self.workspace_guid, self._account_name()))

    def _default_datastore(self) -> dict[str, Any]:
        name = shapes.DEFAULT_DATASTORE
        return shapes.datastore_resource(name, self._account_name(), self.container)

    def add_datastore(
        self, name: str, account: str, container: str, credentials_type: str = "None"
    ) -> None:
        """An existing blob datastore besides the default one."""
        with self._lock:
            self.datastores[name] = shapes.datastore_resource(
                name, account, container, credentials_type
            )

    def _list_datastores(self, request: RecordedRequest) -> Reply:
        return Reply(200, {"value": [self._default_datastore(), *self.datastores.values()]})

    def _get_datastore(self, request: RecordedRequest, name: str) -> Reply:
        if name == shapes.DEFAULT_DATASTORE:
            return Reply(200, self._default_datastore())
        return found(self.datastores.get(name), f"datastore {name}", "UserError")

    def _put_datastore(self, request: RecordedRequest, name: str) -> Reply:
        """Create or replace a datastore (synchronous: 201 new, 200 replaced). As the service
        does, secrets sent with it are kept out of what it answers (`listSecrets` has them)."""
        if name == shapes.DEFAULT_DATASTORE:
            return error(400, "UserError", "the workspace's default datastore cannot be replaced")
        properties = copy.deepcopy(request.body["properties"])
        refused = shapes.check_datastore(name, properties)
        if refused:
            return error(400, "UserError", refused)
        properties["credentials"] = {
            "credentialsType": properties["credentials"]["credentialsType"]
        }
        properties = {
            "isDefault": False,
            "serviceDataAccessAuthIdentity": "None",
            "subscriptionId": shapes.SUBSCRIPTION,
            "resourceGroup": shapes.RESOURCE_GROUP,
            "properties": {},
            **properties,
        }
        existing = name in self.datastores
        resource = shapes.arm_resource(f"/datastores/{name}", name, "datastores", properties)
        self.datastores[name] = resource
        return Reply(200 if existing else 201, resource)

    def _list_secrets(self, request: RecordedRequest, name: str) -> Reply:
        return Reply(200, {"secretsType": "AccountKey", "key": self._blob().key})

    # ---- versioned assets: codes, environments, data, models

    def _start_upload(self, request: RecordedRequest, name: str, version: str) -> Reply:
        """A fresh container with a SAS per upload, like the service's temporary blob reference."""
        blob = self._blob()
        container = f"upload-{uuid.uuid4().hex}"
        blob.service().create_container(container)
        expiry = datetime.now(UTC) + timedelta(hours=1)
        sas = generate_container_sas(
            blob.name, container, account_key=blob.key, permission=_UPLOAD_SAS, expiry=expiry
        )
        url = f"{blob.endpoint}/{container}"
        reference = {
            "blobUri": url,
            "credential": {"credentialType": "SAS", "sasUri": f"{url}?{sas}"},
        }
        return Reply(
            200,
            {
                "blobReferenceForConsumption": reference,
                "pendingUploadId": str(uuid.uuid4()),
                "pendingUploadType": "TemporaryBlobReference",
            },
        )

    def _list_versions(self, request: RecordedRequest, kind: str, name: str) -> Reply:
        """Newest first. With `hash`, match content across the workspace whatever the name: the
        SDK looks a code snapshot up under a fresh random name to reuse an earlier upload."""
        wanted = request.query.get("hash")
        versions = [
            resource
            for (asset, _), resource in self.assets[kind].items()
            if (shapes.asset_hash(resource) == wanted if wanted else asset == name)
        ]
        versions.sort(key=lambda r: r["systemData"]["createdAt"], reverse=True)
        return Reply(200, {"value": versions})

    def _get_version(self, request: RecordedRequest, kind: str, name: str, version: str) -> Reply:
        return found(
            self.assets[kind].get((name, version)), f"{kind} {name}:{version}", "UserError"
        )

    def _put_version(self, request: RecordedRequest, kind: str, name: str, version: str) -> Reply:
        """Create a version, or update the mutable fields (tags, ...) of an existing one."""
        properties = copy.deepcopy(request.body["properties"])
        existing = self.assets[kind].get((name, version))
        uri_field = shapes.URI_FIELDS[kind]
        if existing is not None and properties.get(uri_field) != existing["properties"].get(
            uri_field
        ):
            return error(400, "UserError", "Asset paths cannot be updated.")
        resource = self._store_version(kind, name, version, properties)
        return Reply(201 if existing is None else 200, resource)

    def _store_version(
        self, kind: str, name: str, version: str, properties: dict[str, Any]
    ) -> dict[str, Any]:
        properties = {
            **shapes.SERVER_DEFAULTS[kind],
            **properties,
            "provisioningState": "Succeeded",
        }
        if kind == "models":
            job = re.match(r"azureml://jobs/([^/]+)/", properties.get("modelUri") or "")
            properties.setdefault("jobName", job.group(1) if job else None)
        existing = self.assets[kind].get((name, version))
        if existing is not None:
            existing["properties"] = properties
            existing["systemData"]["lastModifiedAt"] = shapes.now()
            return existing
        path = f"/{kind}/{name}/versions/{version}"
        resource = shapes.arm_resource(path, version, f"{kind}/versions", properties)
        self.assets[kind][(name, version)] = resource
        return resource

    # ---- computes

    def _list_vm_sizes(self, request: RecordedRequest) -> Reply:
        if self.vm_sizes is None:
            return error(403, "AuthorizationFailed", "the client may not list VM sizes")
        return Reply(200, {"value": self.vm_sizes})

    def _get_compute(self, request: RecordedRequest, name: str) -> Reply:
        return found(self.computes.get(name), f"compute {name}")

    def _put_compute(self, request: RecordedRequest, name: str) -> Reply:
        body = copy.deepcopy(request.body)
        body["properties"]["provisioningState"] = "Creating"
        resource = self._store_compute(name, body)
        return Reply(201, resource, self._start_operation(lambda: succeed(resource)))

    def _store_compute(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        resource = shapes.arm_resource(f"/computes/{name}", name, "computes", body["properties"])
        top_level = ("location", "tags", "sku", "identity")
        resource.update({key: value for key, value in body.items() if key in top_level})
        self.computes[name] = resource
        return resource


def ml_client(fake: FakeAzureML) -> MLClient:
    """A real MLClient whose every service client (ARM, data plane, raw pipeline) uses `fake`."""
    return MLClient(
        credential=fake.credential,
        subscription_id=shapes.SUBSCRIPTION,
        resource_group_name=shapes.RESOURCE_GROUP,
        workspace_name=shapes.WORKSPACE,
        transport=fake.transport,
        enable_telemetry=False,
        show_progress=False,
    )


def route_datastores_to_azurite(monkeypatch: pytest.MonkeyPatch, blob: BlobAccount) -> None:
    """Point the SDK's datastore account URL (`https://{account}.blob.{suffix}`) at `blob`."""
    base = blob.endpoint.removesuffix(f"/{blob.name}")
    monkeypatch.setitem(STORAGE_ACCOUNT_URLS, "AzureBlob", base + "/{}")
