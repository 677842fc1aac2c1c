"""Whether a request is admitted: its body read within its byte limit, its records within
every per-record and per-request limit of `ServerSettings`, and the answer when it is not
(`{"detail": message}` with a 4xx).

The checks are linear in the body's size; tokens are counted only when a bound without the
tokenizer cannot already show the request is within its token limits.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from serving.payloads import most_tokens, parse_json
from serving.scoring import Scorer
from serving.settings import ServerSettings
from serving.workers import ProcessScorer


class BodyTooLarge(ValueError):
    pass


class TooMuch(ValueError):
    """A request over one of the per-request limits (HTTP 413, naming the limit)."""


def admitted(
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


async def read_body(request: Request, limit: int) -> bytes:
    """The body, read in chunks so one sent without Content-Length cannot exceed `limit`."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(too_large(limit))
        chunks.append(chunk)
    return b"".join(chunks)


def too_large(limit: int) -> str:
    return f"request body is larger than {limit} bytes: split it into smaller requests"


def refusal(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status, headers=headers)
