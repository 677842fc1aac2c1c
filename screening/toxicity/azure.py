"""Azure AI Content Safety, the optional service backend of the toxicity screen
(`content_safety_scores`)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import httpx

API_VERSION = "2024-09-01"
CATEGORIES = ("Hate", "SelfHarm", "Sexual", "Violence")
MAX_SEVERITY = 6
MAX_TEXT = 10_000  # the service's limit per request
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class ContentSafetyError(RuntimeError):
    """The service refused a request; the message says what to check (never the text)."""


def content_safety_scores(
    texts: Sequence[str],
    endpoint: str,
    key_env: str,
    *,
    retries: int = 4,
    backoff_seconds: float = 1.0,
    timeout_seconds: float = 30.0,
) -> list[float]:
    """Toxicity scores in [0, 1]: the worst category severity of each text divided by 6."""
    key = os.environ.get(key_env)
    if not key:
        raise ContentSafetyError(
            f"screen.toxicity.backend=azure-content-safety needs the key in ${key_env}"
        )
    url = f"{endpoint.rstrip('/')}/contentsafety/text:analyze"
    headers = {"Ocp-Apim-Subscription-Key": key, "Content-Type": "application/json"}
    scores = []
    with httpx.Client(timeout=timeout_seconds) as client:
        for text in texts:
            body = {
                "text": text[:MAX_TEXT],
                "categories": list(CATEGORIES),
                "outputType": "FourSeverityLevels",
            }
            analysis = _post(client, url, headers, body, retries, backoff_seconds)
            worst = max((c.get("severity") or 0 for c in analysis["categoriesAnalysis"]), default=0)
            scores.append(worst / MAX_SEVERITY)
    return scores


def _post(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    body: dict[str, object],
    retries: int,
    backoff_seconds: float,
) -> dict:
    for attempt in range(retries + 1):
        try:
            response = client.post(
                url, params={"api-version": API_VERSION}, headers=headers, json=body
            )
        except httpx.TransportError as exc:
            if attempt == retries:
                raise ContentSafetyError(f"cannot reach {url}: {type(exc).__name__}") from None
        else:
            if response.status_code == 200:
                return response.json()
            if response.status_code not in _RETRY_STATUS or attempt == retries:
                raise ContentSafetyError(
                    f"Content Safety answered {response.status_code} at {url}: "
                    f"{_error_code(response)} (check the endpoint, the key and the region)"
                )
        time.sleep(backoff_seconds * 2**attempt)
    raise AssertionError("unreachable")


def _error_code(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", {}).get("code", "unknown error"))
    except ValueError:
        return "unknown error"
