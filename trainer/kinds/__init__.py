"""The code of each kind of task, one module per kind, found through one table.

A `TaskSpec` names its kind (`span`, `seq2seq`, `causal`, `text`); `kind_code(spec.kind)` is that kind's
module, which provides everything that differs between kinds:

- `features(tokenizer, records, args, model_config)`: the tokenised training inputs and labels;
- `collator(tokenizer, model)`: what pads a batch of them;
- `prepare_tokenizer(tokenizer)`: the tokenizer as the kind trains and predicts with it;
- `predict(model, tokenizer, records, lengths, batch_size)`: one prediction string per record,
  what evaluation scores;
- `respond(model, tokenizer, records, key, lengths)`: the endpoint's response objects;
- `GENERATIVE`: whether it generates text (and so keeps a generation length);
- `EXPORTER`: the key of its ONNX exporter in `serving/runtimes.py`'s table.

The modules are imported on first use: this table imports neither torch nor transformers, so the
pipeline and the CLI can read specs without them. A kind missing from the table is an error that
names it, never a fall-through to another kind's code.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Kind = Literal["span", "seq2seq", "causal", "text"]
KIND_MODULES: dict[Kind, str] = {
    "span": "trainer.kinds.span",
    "seq2seq": "trainer.kinds.seq2seq",
    "causal": "trainer.kinds.causal",
    "text": "trainer.kinds.text",
}
DEFAULT_BATCH_SIZE = 32  # records per model call of a generative kind's endpoint response


@dataclass(frozen=True)
class Lengths:
    """How much a model reads and writes: the prompt or context (`max_length`, in tokens), the
    generated answer (`max_new_tokens`), a QA context's window stride (`doc_stride`)."""

    max_length: int
    max_new_tokens: int
    doc_stride: int


class KindCode(Protocol):
    """What a kind module provides (see the module docstring)."""

    GENERATIVE: bool
    EXPORTER: str

    def prepare_tokenizer(self, tokenizer: Any) -> Any: ...

    def features(
        self, tokenizer: Any, records: Sequence[dict[str, Any]], args: Any, model_config: Any
    ) -> dict[str, list[list[int]]]: ...

    def collator(self, tokenizer: Any, model: Any) -> Any: ...

    def predict(
        self,
        model: Any,
        tokenizer: Any,
        records: Sequence[dict[str, Any]],
        lengths: Lengths,
        batch_size: int,
    ) -> list[str]: ...

    def respond(
        self,
        model: Any,
        tokenizer: Any,
        records: Sequence[dict[str, Any]],
        key: str,
        lengths: Lengths,
    ) -> list[dict[str, Any]]: ...


def on_model_device(batch: Any, model: Any) -> Any:
    """A batch of tensors (a tokenizer's `BatchEncoding`) on the device of `model`: a model placed
    on a GPU (`trainer.modeling.placement`) reads its inputs there. A model without a device (an
    exported ONNX runtime) or on the CPU gets the batch as it is."""
    device = getattr(model, "device", None)
    return batch if device is None or str(device) == "cpu" else batch.to(device)


def check_kind(kind: str) -> str:
    """`kind` when the table has it; ValueError naming it and the known kinds otherwise."""
    if kind not in KIND_MODULES:
        raise ValueError(f"unknown task kind {kind!r}: expected one of {sorted(KIND_MODULES)}")
    return kind


def kind_code(kind: str) -> KindCode:
    """The module with `kind`'s code (imported on first use); ValueError for an unknown kind."""
    module: Any = importlib.import_module(KIND_MODULES[check_kind(kind)])
    return module
