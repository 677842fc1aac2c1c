"""The JSON the fake Azure ML service answers with, and the checks the service makes on writes.

Field names follow the SDK's own REST models (`azure.ai.ml._restclient.arm_ml_service.models`
and `runhistory.models`); what the service fills in on its side (`provisioningState`,
`scoringUri`, `services`, `flavors`, ...) is added here, never by the tests."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tests.azureml.fake_http import FAKE_TENANT, Reply

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
RESOURCE_GROUP = "rg"
WORKSPACE = "ws"
LOCATION = "eastus"
TENANT = FAKE_TENANT
ARM_HOST = "management.azure.com"
API_HOST = f"{LOCATION}.api.azureml.ms"
LOG_HOST = "fakelogs.blob.core.windows.net"
PROVIDER = "Microsoft.MachineLearningServices"
WORKSPACE_ID = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}/providers/{PROVIDER}/workspaces/{WORKSPACE}"
OPERATIONS_ID = f"/subscriptions/{SUBSCRIPTION}/providers/{PROVIDER}/locations/{LOCATION}"
DEFAULT_DATASTORE = "workspaceblobstore"
ASSET_KINDS = ("codes", "environments", "data", "models")
TERMINAL_JOB_STATUSES = frozenset({"Completed", "Failed", "Canceled", "NotResponding", "Paused"})

SERVER_DEFAULTS: dict[str, dict[str, Any]] = {
    "codes": {"isArchived": False},
    "data": {"isArchived": False},
    "environments": {"isArchived": False, "environmentType": "UserCreated", "osType": "Linux"},
    "models": {"isArchived": False, "flavors": {}, "stage": "Development"},
}
URI_FIELDS = {"codes": "codeUri", "data": "dataUri", "environments": "image", "models": "modelUri"}

_ASSET_ID = re.compile(
    re.escape(WORKSPACE_ID)
    + r"/(?P<kind>codes|environments|data|models)/(?P<name>[^/]+)/versions/(?P<version>[^/]+)",
    re.I,
)
_COMPUTE_ID = re.compile(re.escape(WORKSPACE_ID) + r"/computes/(?P<name>[^/]+)", re.I)
MAX_MIRROR_PERCENT = 50


def vm_size(
    name: str, family: str, vcpus: int, memory_gb: float, gpus: int, low_priority: bool = True
) -> dict[str, Any]:
    """One entry of a region's `vmSizes` list, as the service answers it."""
    return {
        "name": name,
        "family": family,
        "vCPUs": vcpus,
        "gpus": gpus,
        "osVhdSizeMB": 1047552,
        "maxResourceVolumeMB": 65536,
        "memoryGB": memory_gb,
        "lowPriorityCapable": low_priority,
        "premiumIO": True,
        "supportedComputeTypes": ["AmlCompute", "ComputeInstance"],
    }


# What the fake region offers (a few of East US's sizes): a CPU size, V100, A100 and T4 nodes.
VM_SIZES = (
    vm_size("Standard_DS3_v2", "standardDSv2Family", 4, 14, 0),
    vm_size("Standard_NC6s_v3", "standardNCSv3Family", 6, 112, 1),
    vm_size("Standard_NC24s_v3", "standardNCSv3Family", 24, 448, 4),
    vm_size("Standard_NC24ads_A100_v4", "StandardNCADSA100v4Family", 24, 220, 1),
    vm_size("Standard_NC96ads_A100_v4", "StandardNCADSA100v4Family", 96, 880, 4),
    vm_size("Standard_NC4as_T4_v3", "standardNCASv3_T4Family", 4, 28, 1),
    vm_size("Standard_NC64as_T4_v3", "standardNCASv3_T4Family", 64, 440, 4),
)


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def error(status: int, code: str, message: str) -> Reply:
    """An ARM error body, which the SDK turns into `HttpResponseError` (404: `ResourceNotFoundError`)."""
    return Reply(status, {"error": {"code": code, "message": message}})


def found(resource: dict[str, Any] | None, what: str, code: str = "ResourceNotFound") -> Reply:
    """200 with `resource`, or the service's 404 for `what` (e.g. "compute gpu") when it is None."""
    return error(404, code, f"{what} not found") if resource is None else Reply(200, resource)


def arm_resource(path: str, name: str, type_: str, properties: dict[str, Any]) -> dict[str, Any]:
    """An ARM resource under the workspace: `path` is relative to it, `type_` to `workspaces/`."""
    stamp = now()
    return {
        "id": WORKSPACE_ID + path,
        "name": name,
        "type": f"{PROVIDER}/workspaces/{type_}" if type_ else f"{PROVIDER}/workspaces",
        "properties": properties,
        "systemData": {
            "createdAt": stamp,
            "createdBy": "fake@example.com",
            "createdByType": "User",
            "lastModifiedAt": stamp,
            "lastModifiedBy": "fake@example.com",
            "lastModifiedByType": "User",
        },
    }


def system_identity(principal: int) -> dict[str, str]:
    return {
        "type": "SystemAssigned",
        "principalId": f"00000000-0000-0000-0000-{principal:012d}",
        "tenantId": TENANT,
    }


def workspace_resource(workspace_guid: str, account: str) -> dict[str, Any]:
    storage = (
        f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}"
        f"/providers/Microsoft.Storage/storageAccounts/{account}"
    )
    resource = arm_resource(
        "",
        WORKSPACE,
        "",
        {
            "friendlyName": WORKSPACE,
            "discoveryUrl": f"https://{API_HOST}/discovery",
            "workspaceId": workspace_guid,
            "storageAccount": storage,
            "mlFlowTrackingUri": f"azureml://{API_HOST}/mlflow/v1.0{WORKSPACE_ID}",
            "provisioningState": "Succeeded",
            "publicNetworkAccess": "Enabled",
            "v1LegacyMode": False,
            "tenantId": TENANT,
        },
    )
    resource.update(
        location=LOCATION,
        kind="Default",
        sku={"name": "Basic", "tier": "Basic"},
        identity=system_identity(2),
    )
    return resource


def datastore_resource(
    name: str, account: str, container: str, credentials_type: str = "AccountKey"
) -> dict[str, Any]:
    return arm_resource(
        f"/datastores/{name}",
        name,
        "datastores",
        {
            "datastoreType": "AzureBlob",
            "accountName": account,
            "containerName": container,
            "endpoint": "core.windows.net",
            "protocol": "https",
            "isDefault": name == DEFAULT_DATASTORE,
            "credentials": {"credentialsType": credentials_type},
            "serviceDataAccessAuthIdentity": "None",
            "subscriptionId": SUBSCRIPTION,
            "resourceGroup": RESOURCE_GROUP,
            "tags": {},
            "properties": {},
        },
    )


DATASTORE_NAME = re.compile(r"[A-Za-z0-9_]+")
DATASTORE_TYPES = frozenset({"AzureBlob", "AzureDataLakeGen2", "AzureFile", "AzureDataLakeGen1"})
DATASTORE_CREDENTIALS = frozenset(
    {"None", "AccountKey", "Sas", "ServicePrincipal", "Certificate", "NoneCredentials"}
)


def check_datastore(name: str, properties: dict[str, Any]) -> str | None:
    """What the service refuses in a datastore PUT (None: accepted)."""
    if not DATASTORE_NAME.fullmatch(name):
        return f"datastore name {name!r}: only letters, digits and underscores"
    kind = properties.get("datastoreType")
    if kind not in DATASTORE_TYPES:
        return f"datastoreType {kind!r} is not one of {sorted(DATASTORE_TYPES)}"
    credentials = (properties.get("credentials") or {}).get("credentialsType")
    if credentials not in DATASTORE_CREDENTIALS:
        return f"credentials.credentialsType {credentials!r} is not supported"
    needed = {"AzureBlob": ("accountName", "containerName")}.get(kind, ("accountName",))
    missing = [field for field in needed if not properties.get(field)]
    return f"datastore {name}: {', '.join(missing)} required" if missing else None


def discovery_document() -> dict[str, str]:
    """What `<discoveryUrl>` answers: the base URLs of the workspace's data-plane services."""
    api = f"https://{API_HOST}"
    services = ("api", "catalog", "experimentation", "history", "hyperdrive", "labeling")
    return {
        **{service: api for service in services},
        "modelmanagement": api,
        "pipelines": api,
        "gallery": f"{api}/gallery/v1.0",
        "studio": "https://ml.azure.com",
    }


def job_services(name: str) -> dict[str, Any]:
    """The `services` the service adds to a job (the SDK appends the tenant to the Studio URL)."""
    return {
        "Tracking": {
            "jobServiceType": "Tracking",
            "endpoint": f"azureml://{API_HOST}/mlflow/v1.0{WORKSPACE_ID}?",
        },
        "Studio": {
            "jobServiceType": "Studio",
            "endpoint": f"https://ml.azure.com/runs/{name}?wsid={WORKSPACE_ID}",
        },
    }


def log_url(job: str, log: str) -> str:
    return f"https://{LOG_HOST}/azureml/ExperimentRun/dcid.{job}/{log}"


def asset_hash(resource: dict[str, Any]) -> str | None:
    return (resource["properties"].get("properties") or {}).get("hash_sha256")


def _referenced_ids(value: Any) -> list[str]:
    return (
        [value] if isinstance(value, str) and value.lower().startswith(WORKSPACE_ID.lower()) else []
    )


def job_references(properties: dict[str, Any]) -> list[str]:
    """Workspace ARM ids a job needs: code, environment, compute, and data-asset inputs."""
    ids = [
        *_referenced_ids(properties.get("codeId")),
        *_referenced_ids(properties.get("environmentId")),
    ]
    ids += _referenced_ids(properties.get("computeId"))
    for job_input in (properties.get("inputs") or {}).values():
        ids += _referenced_ids(job_input.get("uri"))
    return ids


def deployment_references(properties: dict[str, Any]) -> list[str]:
    """Workspace ARM ids an online deployment needs: model, environment, scoring code."""
    code = (properties.get("codeConfiguration") or {}).get("codeId")
    return [
        *_referenced_ids(properties.get("model")),
        *_referenced_ids(properties.get("environmentId")),
        *_referenced_ids(code),
    ]


def missing(ids: list[str], exists: Callable[[str, str, str | None], bool]) -> list[str]:
    """The ids among `ids` that name nothing in the workspace (`exists(kind, name, version)`)."""
    return [arm_id for arm_id in ids if not _names_something(arm_id, exists)]


def _names_something(arm_id: str, exists: Callable[[str, str, str | None], bool]) -> bool:
    asset = _ASSET_ID.fullmatch(arm_id)
    if asset:
        return exists(asset["kind"], asset["name"], asset["version"])
    compute = _COMPUTE_ID.fullmatch(arm_id)
    return exists("computes", compute["name"], None) if compute else True


def traffic_errors(properties: dict[str, Any], deployments: set[str]) -> list[str]:
    """What the service rejects in an endpoint's `traffic` and `mirrorTraffic`."""
    traffic = properties.get("traffic") or {}
    mirror = properties.get("mirrorTraffic") or {}
    problems = [
        f"deployment {name!r} in traffic does not exist"
        for name in sorted({*traffic, *mirror} - deployments)
    ]
    if traffic and sum(traffic.values()) not in (0, 100):
        problems.append(f"traffic must sum to 0 or 100, got {sum(traffic.values())}")
    if len([name for name, share in mirror.items() if share]) > 1:
        problems.append("mirror traffic can go to one deployment only")
    problems += [
        f"mirror traffic to {name!r} is {share}%, at most {MAX_MIRROR_PERCENT}% is allowed"
        for name, share in mirror.items()
        if share > MAX_MIRROR_PERCENT
    ]
    return problems
