"""Connecting to a workspace, and retrying only what is transient.

`DefaultAzureCredential` tries the environment (service principal), managed identity and the Azure
CLI login in turn; nothing here reads or logs a secret.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from azure.core.exceptions import (
    HttpResponseError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)

from platforms.azureml.config import WorkspaceConfig

log = logging.getLogger(__name__)
T = TypeVar("T")
TRANSIENT_STATUS = {408, 429, 500, 502, 503, 504}


def connect(workspace: WorkspaceConfig, credential: Any = None, **client_options: Any) -> Any:
    """An `MLClient` for the configured workspace (ValueError naming any missing id)."""
    from azure.ai.ml import MLClient

    subscription, group, name = workspace.resolved()
    if credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    return MLClient(
        credential=credential,
        subscription_id=subscription,
        resource_group_name=group,
        workspace_name=name,
        **client_options,
    )


def status_text(status: Any) -> str:
    """The SDK gives statuses as strings or as str enums (`JobStatus.RUNNING`): the value."""
    return str(getattr(status, "value", status))


def is_transient(error: BaseException) -> bool:
    """Network failures, throttling and 5xx: worth another try. A 4xx is an answer."""
    if isinstance(error, ResourceNotFoundError):
        return False
    if isinstance(error, ServiceRequestError | ServiceResponseError):
        return True
    return isinstance(error, HttpResponseError) and error.status_code in TRANSIENT_STATUS


def retrying(
    call: Callable[[], T],
    what: str,
    attempts: int = 5,
    first_delay: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """`call()`, retried with exponential backoff while it fails transiently."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except (HttpResponseError, ServiceRequestError, ServiceResponseError) as error:
            if attempt == attempts or not is_transient(error):
                raise
            delay = first_delay * 2 ** (attempt - 1)
            log.warning(
                "%s failed (%s); retry %d/%d in %.0fs",
                what,
                _short(error),
                attempt,
                attempts - 1,
                delay,
            )
            sleep(delay)
    raise AssertionError("unreachable")


def _short(error: BaseException) -> str:
    status = getattr(error, "status_code", None)
    return f"HTTP {status}" if status else type(error).__name__
