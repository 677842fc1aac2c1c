"""The Azure AI Language backend of the screen (`screen.pii_backend: azure-ai-language`), through
the `azure-ai-textanalytics` SDK as the screen builds it: its client, its pipeline (key header,
retries), its `requests` transport; only the socket is replaced, by answers recorded in the
service's shape (`recordings/azure_language_pii.json`, api-version 2023-04-01). A request for a
text with no recorded answer fails the test, as a test proxy in playback mode does."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import urllib3
from requests.adapters import HTTPAdapter

from flows.config import ConfigError, load_config
from screening.azure_language import MAX_CHARACTERS, MAX_DOCUMENTS, AzureLanguageError, entity_of
from screening.config import ScreenConfig
from screening.detectors import _azure_detectors
from screening.scan import screen_records

RECORDING = json.loads(
    (Path(__file__).parent / "recordings" / "azure_language_pii.json").read_text()
)
TEXTS: dict[str, str] = RECORDING["texts"]
ENDPOINT = "https://tunegate-test.cognitiveservices.azure.com"
KEY = "recorded-key"
TOKEN = "ghp_" + "Zk3QmR8vLp2Wn5Xc7Tb9Yd4Hf6Jg1Ks0Ae3U"  # a GitHub token: the local finders'


class Service:
    """The recorded service behind `requests`: what each request sent, and the answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []  # replies to give before the recorded ones (429, 401...)

    def send(self, request: requests.PreparedRequest, **_: Any) -> requests.Response:
        url = request.url or ""
        assert url == f"{ENDPOINT}/{RECORDING['api']}", url
        body = json.loads(request.body or b"{}")
        self.requests.append({"key": request.headers.get("Ocp-Apim-Subscription-Key"), **body})
        if self.statuses:
            status = self.statuses.pop(0)
            error = {"error": {"code": str(status), "message": "recorded refusal"}}
            throttled = {"Retry-After": "0"} if status == 429 else {}
            return _response(request, status, error, throttled)
        assert body["kind"] == "PiiEntityRecognition"
        assert body["parameters"] == {"loggingOptOut": True, "stringIndexType": "UnicodeCodePoint"}
        documents, errors = [], []
        for document in body["analysisInput"]["documents"]:
            assert len(document["text"]) <= MAX_CHARACTERS
            answer = RECORDING["documents"].get(document["text"])
            assert answer is not None, f"no recorded answer for {document['text'][:60]!r}"
            target = errors if "error" in answer else documents
            target.append({"id": document["id"], **answer})
        assert len(documents) + len(errors) <= MAX_DOCUMENTS
        results = {
            "documents": documents,
            "errors": errors,
            "modelVersion": RECORDING["modelVersion"],
        }
        return _response(request, 200, {"kind": RECORDING["kind"], "results": results})


def _response(
    request, status: int, payload: dict, headers: dict | None = None
) -> requests.Response:
    data = json.dumps(payload).encode()
    response = requests.Response()
    response.status_code, response.request, response.url = status, request, request.url
    response.headers.update({"Content-Type": "application/json", **(headers or {})})
    response.raw = urllib3.HTTPResponse(
        body=io.BytesIO(data),
        headers={"Content-Length": str(len(data)), **response.headers},
        status=status,
        preload_content=False,
    )
    return response


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    recorded = Service()
    monkeypatch.setattr(HTTPAdapter, "send", recorded.send)
    monkeypatch.setenv("AZURE_LANGUAGE_KEY", KEY)
    _azure_detectors.cache_clear()
    yield recorded
    _azure_detectors.cache_clear()


def _config(mode: str = "instead", **screen: Any) -> ScreenConfig:
    names = ("PERSON", "PHONE_NUMBER", "ID", "STREET_ADDRESS")
    screen.setdefault("entities", {e: {"action": "redact"} for e in names})
    return ScreenConfig(
        pii_backend="azure-ai-language",
        azure_language={"endpoint": ENDPOINT, "mode": mode},
        **screen,
    )


def _chat(i: int, user: str, assistant: str) -> dict[str, Any]:
    turns = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return {"id": f"c{i}", "messages": turns}


def test_the_service_s_findings_are_redacted_under_the_screen_s_rules(service: Service) -> None:
    records = [
        _chat(0, TEXTS["intro"], TEXTS["answer"]),
        _chat(1, f"{TEXTS['phone']} The deploy token is {TOKEN}", TEXTS["answer"]),
        _chat(2, TEXTS["clean"], TEXTS["answer"]),
    ]
    service_texts = [
        TEXTS["intro"],
        TEXTS["answer"],
        f"{TEXTS['phone']} The deploy token is {TOKEN}",
    ]
    RECORDING["documents"][service_texts[2]] = _moved(TEXTS["phone"], service_texts[2])

    screening = screen_records(
        "chat", records, _config(secrets={"GITHUB_TOKEN": {"action": "redact"}})
    )

    kept = {r["id"]: [m["content"] for m in r["messages"]] for r in screening.kept}
    assert kept["c0"][0] == (
        "Hei! This is <PERSON> from the Tromsø office; my fødselsnummer is <ID>."
    )  # the place scored 0.45, below the rule's 0.5
    assert kept["c1"][0].startswith("Ring me on <PHONE_NUMBER> after")
    assert TOKEN not in kept["c1"][0] and "<GITHUB_TOKEN>" in kept["c1"][0]  # the local finder
    assert kept["c2"][0] == TEXTS["clean"]  # a duration and a share are no one's data
    # identical texts sent once, 5 documents a request, the key in the SDK's header
    sent = [d["text"] for r in service.requests for d in r["analysisInput"]["documents"]]
    assert sorted(sent) == sorted({*service_texts, TEXTS["clean"]}) and len(service.requests) == 1
    assert {r["key"] for r in service.requests} == {KEY}
    counts = {(c.entity, c.action): c.findings for c in screening.tally.entities}
    assert counts[("PERSON", "redact")] == 1 and counts[("ID", "redact")] == 1


def _moved(recorded_text: str, text: str) -> dict[str, Any]:
    """The recorded answer of `recorded_text`, for `text` that begins with it."""
    answer = json.loads(json.dumps(RECORDING["documents"][recorded_text]))
    answer["redactedText"] += text[len(recorded_text) :]
    return answer


def test_a_long_text_goes_in_windows_and_its_findings_keep_their_place(service: Service) -> None:
    text = RECORDING["long"]
    assert len(text) > MAX_CHARACTERS
    records = [{"id": "r", "document": text, "summary": "A report."}]

    kept = screen_records("summarization", records, _config()).kept[0]["document"]

    assert kept == text.replace("Ingrid Haugland", "<PERSON>")
    (request,) = service.requests
    windows = [d["text"] for d in request["analysisInput"]["documents"] if d["text"] in text]
    assert len(windows) == 2 and "".join(windows) == text


def test_a_text_the_service_refuses_quarantines_its_record(service: Service) -> None:
    records = [
        {"id": "ok", "document": TEXTS["phone"], "summary": "A call."},
        {"id": "refused", "document": TEXTS["refused"], "summary": "A call."},
    ]
    screening = screen_records("summarization", records, _config())
    assert [r["id"] for r in screening.kept] == ["ok"]
    (quarantined,) = screening.quarantined
    assert quarantined.reason == (
        "screen could not analyse document: Azure AI Language refused it (InvalidDocument)"
    )


def test_a_throttled_request_is_retried_and_a_refused_key_says_what_to_check(
    service: Service,
) -> None:
    records = [{"id": "r", "document": TEXTS["phone"], "summary": "A call."}]
    service.statuses = [429, 429]
    kept = screen_records("summarization", records, _config()).kept
    assert kept[0]["document"].startswith("Ring me on <PHONE_NUMBER>")
    assert len(service.requests) == 3  # two throttled, then answered

    service.statuses = [401]
    with pytest.raises(
        AzureLanguageError, match=r"refused the credentials \(401\).*AZURE_LANGUAGE_KEY"
    ):
        screen_records("summarization", records, _config())


def test_beside_the_local_recognizers_both_find(service: Service) -> None:
    records = [{"id": "r", "document": TEXTS["intro"], "summary": "An introduction."}]
    config = _config(
        mode="beside", entities={"ID": {"action": "redact"}, "PERSON": {"action": "redact"}}
    )
    kept = screen_records("summarization", records, config).kept[0]["document"]
    assert "Ingrid" not in kept and "01017012345" not in kept and "<ID>" in kept


def test_categories_become_the_screen_s_entity_types() -> None:
    assert entity_of("Person") == "PERSON" and entity_of("Address") == "STREET_ADDRESS"
    assert entity_of("FRSocialSecurityNumber") == entity_of("ESDNI") == "ID"
    assert entity_of("AzureSAS") == "AZURE_SAS_TOKEN" and entity_of("PersonType") is None
    assert entity_of("SWIFTCode") is None  # a bank's, not a person's


def test_the_config_names_what_is_missing_and_a_local_screen_hashes_as_before() -> None:
    assert "pii_backend" not in ScreenConfig().model_dump()  # the screen's content hash unchanged
    assert "azure_language" not in ScreenConfig().model_dump()
    assert _config().model_dump()["azure_language"]["endpoint"] == ENDPOINT
    backend = "screen.pii_backend=azure-ai-language"
    for overrides, says in [
        ([backend], "screen.azure_language.endpoint"),
        ([backend, "screen.azure_language.endpoint=http://x"], "is no https:// URL"),
        ([f"screen.azure_language.endpoint={ENDPOINT}"], "set pii_backend azure-ai-language"),
    ]:
        with pytest.raises(ConfigError, match=says):
            load_config(None, overrides)
    config = load_config(None, [backend, f"screen.azure_language.endpoint={ENDPOINT}"])
    assert (
        config.screen.azure_language is not None and config.screen.azure_language.mode == "beside"
    )
