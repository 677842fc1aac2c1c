"""Azure AI Language's PII detection, the optional service backend of the screen
(`screen.pii_backend: azure-ai-language`), through the `azure-ai-textanalytics` SDK.

Texts are sent as the service takes them: at most `MAX_DOCUMENTS` documents a request and
`MAX_CHARACTERS` characters a document (a longer text goes in windows cut at white space, its
findings moved back to the text's offsets), code-point offsets, and the service's logging of the
text off (`disable_service_logs`). The SDK's pipeline retries a throttled or failed request
(429 with its Retry-After, 5xx, a dropped connection) `retries` times; a request that still
fails stops the stage with what to check, and a document the service refuses (too long, a
language it does not read) is a text not analysed: its record is quarantined, never kept
unscreened.

Each service category becomes a screen entity type (`entity_of`): Person is PERSON, Address is
STREET_ADDRESS, a national identity, passport, tax or licence number is ID, Azure's connection
strings and keys are credential types; the screen's rules (`screen.entities`, `screen.secrets`)
then apply to them as to the local findings. `mode: beside` adds them to the local recognizers'
findings; `instead` replaces the local personal-data recognizers (spaCy, Presidio, the person
model) and keeps only the local credential finders, which look for far more kinds of secret.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from screening.redact import AnalysisFailed, Span

MAX_DOCUMENTS = 5  # documents per synchronous PII request (the service's data limits)
MAX_CHARACTERS = 5120  # characters per document (text elements: never more than code points)

# Service categories named as the screen names them; others by `_KIND` below.
CATEGORY_ENTITIES = {
    "Person": "PERSON",
    "PhoneNumber": "PHONE_NUMBER",
    "Email": "EMAIL_ADDRESS",
    "Address": "STREET_ADDRESS",
    "IPAddress": "IP_ADDRESS",
    "URL": "URL",
    "Age": "AGE",
    "Date": "DATE_TIME",
    "DateTime": "DATE_TIME",
    "Organization": "ORGANIZATION",
    "CreditCardNumber": "CREDIT_CARD",
    "EUDebitCardNumber": "CREDIT_CARD",
    "InternationalBankingAccountNumber": "IBAN_CODE",
    "USSocialSecurityNumber": "US_SSN",
    "USUKPassportNumber": "US_PASSPORT",
    "USDriversLicenseNumber": "US_DRIVER_LICENSE",
    "USBankAccountNumber": "US_BANK_NUMBER",
    "USIndividualTaxpayerIdentification": "US_ITIN",
    "UKNationalHealthNumber": "UK_NHS",
    "AzureStorageAccountKey": "AZURE_STORAGE_KEY",
    "AzureStorageAccountGeneric": "AZURE_STORAGE_KEY",
    "AzureSAS": "AZURE_SAS_TOKEN",
    "AzureDocumentDBAuthKey": "API_KEY",
    "AzurePublishSettingPassword": "PASSWORD",
    "AzureIAASDatabaseConnectionAndSQLString": "AZURE_CONNECTION_STRING",
    "AzureIoTConnectionString": "AZURE_CONNECTION_STRING",
    "AzureRedisCacheString": "AZURE_CONNECTION_STRING",
    "AzureServiceBusString": "AZURE_CONNECTION_STRING",
    "SQLServerConnectionString": "AZURE_CONNECTION_STRING",
}
# A country's identity, passport, tax, health, licence, account or registration number: ID.
_KIND = re.compile(
    r"(Number|Identification|Identity|NationalID|IDCard|IDNumber|Code|Card|DNI|Account)"
    r"[A-Za-z]*$"
)
# Categories that are no one's data: a person's job title, a quantity, a product, an event.
_NOT_PERSONAL = frozenset({"PersonType", "Quantity", "Product", "Event", "Skill", "Location"})


def entity_of(category: str) -> str | None:
    """The screen's entity type for a service category (None: none the screen acts on)."""
    if category in CATEGORY_ENTITIES:
        return CATEGORY_ENTITIES[category]
    if category in _NOT_PERSONAL or category in ("SWIFTCode", "ABARoutingNumber"):
        return None  # a bank's code, not a person's
    return "ID" if _KIND.search(category) else None


class AzureLanguageError(RuntimeError):
    """The service refused a request even after retries; the message says what to check."""


def windows(text: str, size: int = MAX_CHARACTERS) -> list[tuple[int, str]]:
    """`text` as (offset, piece) windows of at most `size` characters, each cut after white space
    where there is some in its last quarter (so a value is rarely cut in two)."""
    pieces, start = [], 0
    while len(text) - start > size:
        end = start + size
        space = max(text.rfind(" ", start + size * 3 // 4, end), text.rfind("\n", start, end))
        if space > start + size * 3 // 4:
            end = space + 1
        pieces.append((start, text[start:end]))
        start = end
    pieces.append((start, text[start:]))
    return pieces


class _Client(Protocol):
    def recognize_pii_entities(self, documents: list[dict[str, str]], **kwargs: Any) -> list: ...


@dataclass
class AzureLanguageDetectors:
    """Findings of Azure AI Language for a batch of texts (the interface of `Detectors`)."""

    client: _Client
    entities: list[str]
    language: str = "en"
    model_version: str | None = None
    endpoint: str = ""
    key_env: str = ""
    requests: int = field(default=0, init=False)  # requests sent (each of up to 5 documents)

    def analyze(self, texts: Sequence[str], batch_size: int = MAX_DOCUMENTS) -> list[list[Span]]:
        """Findings for every text, in order; identical texts are sent once, empty ones never."""
        unique = [t for t in dict.fromkeys(texts) if t.strip()]
        documents = [
            (i, offset, piece) for i, t in enumerate(unique) for offset, piece in windows(t)
        ]
        found: dict[int, list[Span]] = {i: [] for i in range(len(unique))}
        size = max(1, min(batch_size, MAX_DOCUMENTS))
        for first in range(0, len(documents), size):
            batch = documents[first : first + size]
            results = self._send([{"id": str(n), "text": p} for n, (_, _, p) in enumerate(batch)])
            for (i, offset, _), result in zip(batch, results, strict=True):
                if getattr(result, "is_error", False):
                    code = getattr(result.error, "code", "error")
                    found[i] = AnalysisFailed(f"Azure AI Language refused it ({code})")
                elif not isinstance(found[i], AnalysisFailed):
                    found[i].extend(self._spans(result.entities, offset))
        by_text = {
            t: f if isinstance(f, AnalysisFailed) else sorted(f, key=_order)
            for t, f in zip(unique, found.values(), strict=True)
        }
        return [by_text.get(t, []) for t in texts]

    def _send(self, documents: list[dict[str, str]]) -> list[Any]:
        from azure.core.exceptions import ClientAuthenticationError, HttpResponseError

        self.requests += 1
        try:
            results = self.client.recognize_pii_entities(
                documents,
                language=self.language,
                model_version=self.model_version,
                disable_service_logs=True,
                string_index_type="UnicodeCodePoint",
            )
        except ClientAuthenticationError as exc:
            raise AzureLanguageError(
                f"Azure AI Language at {self.endpoint} refused the credentials ({exc.status_code}):"
                f" check the key in ${self.key_env}, or unset it to sign in with Azure AD"
            ) from None
        except HttpResponseError as exc:
            raise AzureLanguageError(
                f"Azure AI Language at {self.endpoint} failed a request after its retries "
                f"({exc.status_code}: {exc.reason}); check screen.azure_language.endpoint and "
                "the resource's pricing tier limits, then run the stage again"
            ) from None
        return sorted(results, key=lambda r: int(r.id))

    def _spans(self, entities: list[Any], offset: int) -> list[Span]:
        spans = []
        for entity in entities:
            name = entity_of(entity.category)
            if name is not None and name in self.entities:
                start = offset + entity.offset
                spans.append(Span(start, start + entity.length, name, entity.confidence_score))
        return spans


@dataclass
class CombinedDetectors:
    """Several detectors' findings for the same texts, each text's lists joined; a text any of
    them could not analyse is not analysed."""

    parts: list[Any]

    def analyze(self, texts: Sequence[str], batch_size: int = 64) -> list[list[Span]]:
        results = [part.analyze(texts, batch_size) for part in self.parts]
        joined: list[list[Span]] = []
        for found in zip(*results, strict=True):
            failed = next((f for f in found if isinstance(f, AnalysisFailed)), None)
            if failed is not None:
                joined.append(failed)
            else:
                spans = [s for f in found for s in f]
                joined.append(sorted(set(spans), key=_order))
        return joined

    def record_name_parts(
        self, texts: Sequence[str], found: Sequence[list[Span]]
    ) -> list[list[Span]]:
        """A record's findings with the parts of its names standing alone (the local
        detectors' rule, `Detectors.record_name_parts`, over every detector's names)."""
        out = list(found)
        for part in self.parts:
            if hasattr(part, "record_name_parts"):
                out = part.record_name_parts(texts, out)
        return out


def _order(span: Span) -> tuple[int, int, str]:
    return span.start, span.end, span.entity


def client(endpoint: str, key_env: str, retries: int, **kwargs: Any) -> Any:
    """A TextAnalyticsClient for `endpoint`: the key in `key_env` when it is set, else an Azure
    AD sign-in (DefaultAzureCredential: a managed identity, the Azure CLI's login...)."""
    from azure.ai.textanalytics import TextAnalyticsClient
    from azure.core.credentials import AzureKeyCredential

    key = os.environ.get(key_env)
    if key:
        credential: Any = AzureKeyCredential(key)
    else:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    return TextAnalyticsClient(endpoint, credential, retry_total=retries, **kwargs)
