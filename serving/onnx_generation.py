"""Generative models in ONNX Runtime: the graphs of one decoding step with a key/value cache, and
greedy decoding outside them, token for token what transformers' `generate(do_sample=False)`
writes (tests/serving/test_onnx_generation.py).

The packaged generative models (trainer/taskspec.py) are BERT decoders: the encoder-decoder
(MiniLM bert2bert, summarization) and the decoder (MiniLM as a `BertLMHeadModel`, chat). Their
graphs:
- encoder-decoder, `encoder.onnx`: (input_ids, attention_mask [1, S]) -> every decoder layer's
  cross-attention keys and values (`cross_k.i`, `cross_v.i` [1, heads, S, head size]), computed
  once per document; `decoder.onnx`: (input_ids, position_ids [1, T], encoder_attention_mask,
  `past_k.i`/`past_v.i` [1, heads, P, head size], the cross keys and values) -> the last
  position's logits [1, vocabulary] and `present_k.i`/`present_v.i` [1, heads, P + T, ...].
- decoder, `decoder.onnx`: (input_ids [1, T], attention_mask [1, P + T], position_ids [1, T],
  the past keys and values) -> the same outputs. The prompt is one call with an empty past.
The wrappers build the attention masks themselves (additive, 4D), so none of transformers'
data-dependent shortcuts ("no padding", SDPA's is_causal) is frozen into the trace, and only the
last position goes through the language-model head. Export traces with padding and a non-empty
past, so no shape is frozen either.

Measured on the packaged models (32 new tokens, 2 threads): ONNX fp32 1.7-2.7x torch's cached
`generate`, int8 2.9-6.8x; on the summarization model trained by `tunegate run` (33 test
documents), fp32 wrote the same 33 summaries as torch (ROUGE-L 69.6 both), int8 changed 2
(68.6). Other architectures are not exported (`NotExportable`): they serve in torch. Nor is the
packaged summarizer since it has a copy head (trainer/pointer_generator.py): its decoding step
would need the last layer's cross-attention weights and the source ids beside the logits (not
done yet); the graphs above are those of the plain BERT2BERT it is built on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

ENCODER = "encoder.onnx"
DECODER = "decoder.onnx"


class NotExportable(ValueError):
    """The model's architecture has no exporter here: it serves in torch."""


def check_exportable(base_model: str) -> None:
    """NotExportable unless `base_model` is one of the packaged generative models (BERT
    decoders, the only architecture exported here): checked before any weights load."""
    from trainer.taskspec import PACKAGED_DECODER, PACKAGED_SEQ2SEQ

    if base_model not in (PACKAGED_SEQ2SEQ, PACKAGED_DECODER):
        raise NotExportable(
            f"{base_model}: only the packaged generative models ({PACKAGED_SEQ2SEQ}, "
            f"{PACKAGED_DECODER}) are exported; it serves in torch"
        )


def _padding_mask(mask: torch.Tensor) -> torch.Tensor:
    """[B, K] of 1/0 -> additive [B, 1, 1, K]: 0 where a key is read, the lowest float where not."""
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def _causal_mask(mask: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """[B, P + T] padding mask and [B, T] new tokens -> additive [B, 1, T, P + T]: new token i
    (at P + i) reads key j when j <= P + i and j is not padding. Shape-derived only: dynamic."""
    at = torch.cumsum(torch.ones_like(mask), -1) - 1
    query_at = at[:, -input_ids.shape[1] :]
    allowed = (at[:, None, :] <= query_at[:, :, None]) & (mask[:, None, :] > 0)
    lowest = torch.full((), torch.finfo(torch.float32).min)
    return torch.where(allowed, torch.zeros(()), lowest)[:, None]


def _cache(flat: tuple[torch.Tensor, ...]) -> Any:
    from transformers.cache_utils import DynamicCache

    return DynamicCache([(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)])


def _flat(cache: Any) -> list[torch.Tensor]:
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


def _names(prefix: str, layers: int) -> list[str]:
    return [f"{prefix}_{kv}.{i}" for i in range(layers) for kv in ("k", "v")]


class _Encoder(torch.nn.Module):
    """The encoder, then each decoder layer's cross-attention keys and values of its output."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.encoder = model.encoder
        self.projection = getattr(model, "enc_to_dec_proj", None)
        self.layers = model.decoder.bert.encoder.layer

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple:
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=_padding_mask(attention_mask)
        ).last_hidden_state
        if self.projection is not None:
            hidden = self.projection(hidden)
        out = []
        for layer in self.layers:
            attention = layer.crossattention.self
            shape = (*hidden.shape[:2], -1, attention.attention_head_size)
            for projection in (attention.key, attention.value):
                out.append(projection(hidden).view(shape).transpose(1, 2))
        return tuple(out)


class _Seq2SeqStep(torch.nn.Module):
    def __init__(self, model: Any) -> None:
        super().__init__()
        self.decoder = model.decoder
        self.layers = len(self.decoder.bert.encoder.layer)

    def forward(self, input_ids, position_ids, encoder_attention_mask, *kv):  # type: ignore[no-untyped-def]
        from transformers.cache_utils import EncoderDecoderCache

        past, cross = kv[: 2 * self.layers], kv[2 * self.layers :]
        # a filled cross-attention cache is read, not computed again from encoder_hidden_states
        cache = EncoderDecoderCache(_cache(past), _cache(cross))
        seen = torch.ones_like(past[0][:, 0, :, 0], dtype=torch.long)
        mask = torch.cat([seen, torch.ones_like(input_ids)], 1)
        hidden = self.decoder.bert(
            input_ids=input_ids,
            position_ids=position_ids,
            attention_mask=_causal_mask(mask, input_ids),
            encoder_hidden_states=cross[0][:, 0],  # only needs to be there: the cache holds K/V
            encoder_attention_mask=_padding_mask(encoder_attention_mask),
            past_key_values=cache,
            use_cache=True,
        ).last_hidden_state
        logits = self.decoder.cls(hidden[:, -1:, :])[:, 0, :]
        return (logits, *_flat(cache.self_attention_cache))


class _CausalStep(torch.nn.Module):
    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, *past):  # type: ignore[no-untyped-def]
        cache = _cache(past)
        hidden = self.model.bert(
            input_ids=input_ids,
            position_ids=position_ids,
            attention_mask=_causal_mask(attention_mask, input_ids),
            past_key_values=cache,
            use_cache=True,
        ).last_hidden_state
        logits = self.model.cls(hidden[:, -1:, :])[:, 0, :]
        return (logits, *_flat(cache))


def _export(
    module: torch.nn.Module, args: tuple, path: Path, inputs, outputs, axes, *, opset
) -> None:  # type: ignore[no-untyped-def]
    # A new module is in training mode, and export restores the mode it found: without eval()
    # the wrapped model would be left dropping out in every later torch generate.
    module.eval()
    with torch.no_grad():
        torch.onnx.export(
            module,
            args,
            str(path),
            input_names=inputs,
            output_names=outputs,
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,
        )


def export(model: Any, tokenizer: Any, folder: Path, opset: int) -> list[Path]:
    """The decoding-step graphs of a BERT encoder-decoder or decoder, with its config and
    generation config beside them (what `OnnxGenerator` reads); NotExportable for others."""
    from transformers import BertLMHeadModel, EncoderDecoderModel

    from trainer.pointer_generator import PointerGeneratorModel

    if isinstance(model, PointerGeneratorModel):
        raise NotExportable(
            "the summarizer's copy head (trainer/pointer_generator.py) mixes the decoder's "
            "cross-attention over the source ids into each step's distribution, which the "
            "exported decoding step does not compute: it serves in torch"
        )
    save = functools.partial(_export, opset=opset)
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    seq2seq = isinstance(model, EncoderDecoderModel)
    decoder = model.decoder if seq2seq else model
    if not isinstance(decoder, BertLMHeadModel):
        raise NotExportable(
            f"{type(model).__name__} ({type(decoder).__name__} decoder): only BERT decoders "
            "(the packaged generative models) are exported; it serves in torch"
        )
    config = decoder.config
    layers, heads = config.num_hidden_layers, config.num_attention_heads
    size = config.hidden_size // heads
    past_names, present_names = _names("past", layers), _names("present", layers)
    batch, past_length, new = 2, 3, 2  # traced with padding and a past: no shape frozen
    past = [torch.randn(batch, heads, past_length, size) for _ in range(2 * layers)]
    kv_axes = {
        **{n: {0: "batch", 2: "past"} for n in past_names},
        **{n: {0: "batch", 2: "total"} for n in present_names},
    }
    outputs = ["logits", *present_names]
    if seq2seq:
        sample = tokenizer(["a short one", "a longer document to trace"], padding=True)
        ids = torch.tensor(sample["input_ids"])
        mask = torch.tensor(sample["attention_mask"])
        cross_names = _names("cross", layers)
        source = {0: "batch", 1: "source"}
        encoder = _Encoder(model)
        save(
            encoder,
            (ids, mask),
            folder / ENCODER,
            ["input_ids", "attention_mask"],
            cross_names,
            {"input_ids": source, "attention_mask": source}
            | {n: {0: "batch", 2: "source"} for n in cross_names},
        )
        with torch.no_grad():
            cross = encoder(ids, mask)
        step_ids = torch.full((batch, new), config.bos_token_id or 0)
        positions = torch.arange(past_length, past_length + new).expand(batch, new)
        save(
            _Seq2SeqStep(model),
            (step_ids, positions.contiguous(), mask, *past, *cross),
            folder / DECODER,
            ["input_ids", "position_ids", "encoder_attention_mask", *past_names, *cross_names],
            outputs,
            {
                "input_ids": {0: "batch", 1: "new"},
                "position_ids": {0: "batch", 1: "new"},
                "encoder_attention_mask": source,
                "logits": {0: "batch"},
                **{n: {0: "batch", 2: "source"} for n in cross_names},
                **kv_axes,
            },
        )
    else:
        ids = torch.randint(1000, 2000, (batch, new))
        mask = torch.ones(batch, past_length + new, dtype=torch.long)
        mask[0, :2] = 0  # left padding
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -new:]
        save(
            _CausalStep(model),
            (ids, mask, positions, *past),
            folder / DECODER,
            ["input_ids", "attention_mask", "position_ids", *past_names],
            outputs,
            {
                "input_ids": {0: "batch", 1: "new"},
                "attention_mask": {0: "batch", 1: "total"},
                "position_ids": {0: "batch", 1: "new"},
                "logits": {0: "batch"},
                **kv_axes,
            },
        )
    model.config.save_pretrained(folder)
    model.generation_config.save_pretrained(folder)
    model.eval()
    return [folder / ENCODER, folder / DECODER] if seq2seq else [folder / DECODER]


class OnnxGenerator:
    """A generative model's exported graphs, answering `generate(input_ids, attention_mask,
    max_new_tokens)` as transformers' greedy `generate` does (an encoder-decoder: the start token
    and what follows; a decoder: the prompt and what follows; rows that ended padded), so
    trainer.predict runs it unchanged. Each row is decoded alone, without its padding, so a
    request's output never depends on what else shares its batch (as `OnnxSpanModel`)."""

    def __init__(self, folder: Path, session: Any) -> None:
        from transformers import AutoConfig, GenerationConfig

        self.config = AutoConfig.from_pretrained(folder)
        self.generation_config = GenerationConfig.from_pretrained(folder)
        self.encoder = session(folder / ENCODER) if (folder / ENCODER).exists() else None
        self.decoder = session(folder / DECODER)
        past = [i for i in self.decoder.get_inputs() if i.name.startswith("past_")]
        self.layers = len(past) // 2
        self.heads, self.head_size = past[0].shape[1], past[0].shape[3]
        pad = self.generation_config.pad_token_id
        self.pad = int(pad if pad is not None else 0)
        self.eos = self.generation_config.eos_token_id

    def eval(self) -> OnnxGenerator:
        return self

    def generate(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        max_new_tokens: int | None = None,
        **_: Any,  # do_sample=False (greedy is all there is), token_type_ids (all zero)
    ) -> torch.Tensor:
        steps = int(max_new_tokens or self.generation_config.max_new_tokens or 20)
        ids = input_ids.numpy().astype(np.int64)
        mask = np.ones_like(ids) if attention_mask is None else attention_mask.numpy()
        rows = []
        for row, kept in zip(ids, mask.astype(bool), strict=True):
            prompt = row[kept][None]
            if self.encoder is not None:
                start = self.generation_config.decoder_start_token_id
                rows.append(np.concatenate([[start], self._seq2seq(prompt, steps)]))
            else:
                rows.append(np.concatenate([row, self._causal(prompt, steps)]))
        width = max(len(r) for r in rows)
        out = np.full((len(rows), width), self.pad, dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return torch.from_numpy(out)

    def _empty_past(self) -> list[np.ndarray]:
        return [np.zeros((1, self.heads, 0, self.head_size), np.float32)] * (2 * self.layers)

    def _ended(self, token: int) -> bool:
        eos = self.eos if isinstance(self.eos, list) else [self.eos]
        return token in eos

    def _seq2seq(self, document: np.ndarray, steps: int) -> np.ndarray:
        assert self.encoder is not None
        mask = np.ones_like(document)
        cross = self.encoder.run(None, {"input_ids": document, "attention_mask": mask})
        feeds = {
            "input_ids": np.array([[self.generation_config.decoder_start_token_id]], np.int64),
            "position_ids": np.zeros((1, 1), np.int64),
            "encoder_attention_mask": mask,
            **dict(zip(_names("cross", self.layers), cross, strict=True)),
        }

        def advance(token: int) -> None:
            feeds["input_ids"] = np.array([[token]], np.int64)
            feeds["position_ids"] = feeds["position_ids"] + 1

        return self._greedy(feeds, advance, steps)

    def _causal(self, prompt: np.ndarray, steps: int) -> np.ndarray:
        feeds = {  # the prompt in one call, with an empty past
            "input_ids": prompt,
            "attention_mask": np.ones_like(prompt),
            "position_ids": np.arange(prompt.shape[1], dtype=np.int64)[None],
        }

        def advance(token: int) -> None:
            feeds["input_ids"] = np.array([[token]], np.int64)
            feeds["position_ids"] = feeds["position_ids"][:, -1:] + 1
            feeds["attention_mask"] = np.concatenate(
                [feeds["attention_mask"], np.ones((1, 1), np.int64)], 1
            )

        return self._greedy(feeds, advance, steps)

    def _greedy(
        self, feeds: dict[str, np.ndarray], advance: Callable[[int], None], steps: int
    ) -> np.ndarray:
        """Up to `steps` tokens, each the decoder's most likely next one, the cache carried from
        step to step; `advance` feeds the token just written. Stops after an end token."""
        past = self._empty_past()
        written: list[int] = []
        for _ in range(steps):
            feeds |= dict(zip(_names("past", self.layers), past, strict=True))
            logits, *past = self.decoder.run(None, feeds)
            token = int(logits[0].argmax())
            written.append(token)
            if self._ended(token):
                break
            advance(token)
        return np.array(written, np.int64)
