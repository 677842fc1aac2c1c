"""How one local endpoint runs: its key, state folder and the limits every request is held to."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

MiB = 1024 * 1024


class ServerSettings(BaseModel):
    """How one local endpoint runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key_file: Path = Field(description="the endpoint key; created with mode 0600 when missing")
    state_dir: Path | None = Field(None, description="deployments and traffic survive restarts")
    max_body_bytes: int = Field(MiB, ge=1, description="larger request bodies get 413")
    max_batch_size: int = Field(8, ge=1, le=256, description="micro-batch size per model call")
    max_wait_ms: float = Field(5.0, ge=0, le=1000, description="how long a batch waits to fill")
    max_input_chars: int = Field(
        20_000, ge=1, description="characters the model reads per record; more get 413"
    )
    max_input_tokens: int = Field(
        4096, ge=1, description="tokens the model reads per record; more get 413"
    )
    max_request_records: int = Field(
        5_000,
        ge=1,
        description="records one request may hold ({'inputs': [...]}); more get 413",
    )
    max_request_tokens: int = Field(
        300_000,
        ge=1,
        description="tokens the model reads for all records of one request; more get 413 "
        "(scoring time grows with them)",
    )
    max_json_depth: int = Field(32, ge=4, le=1000, description="deeper request bodies get 400")
    score_timeout_s: float = Field(
        60.0, gt=0, description="a request not answered by then gets 504 (the model finishes it)"
    )
    seed: int | None = Field(None, description="routing random seed (tests); None: random")
    collect: bool = Field(
        True,
        description="write every scoring request and its answer, masked, to "
        "<state_dir>/collected/ (needs a masker: see create_app)",
    )
    collect_max_bytes: int = Field(
        8 * MiB, ge=4096, description="a collected file is rotated at this size"
    )
    collect_keep: int = Field(3, ge=0, le=100, description="rotated collected files kept")
