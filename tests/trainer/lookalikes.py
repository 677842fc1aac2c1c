"""Tokenizers built here that behave like Llama-3's and t5's, and tiny random models for them.

Llama-3's: a start token written by its chat template, `<|eot_id|>` closing every turn, header
tokens around each role, no pad token. t5's: sentencepiece-style words (a `▁` prefix marks a
word start), `</s>` appended to every input, `<pad>`, and a model config whose
`task_specific_params` asks for the `summarize: ` prefix.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>"
    "{% endfor %}{% if add_generation_prompt %}"
    "<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
LLAMA3_SPECIALS = ["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>"]
CORPUS = [
    "the",
    "vpn",
    "dropped",
    "every",
    "hour",
    "for",
    "three",
    "days",
    "and",
    "the",
    "customer",
    "asked",
    "for",
    "a",
    "reset",
    ".",
    "summarize:",
    "ticket",
    "order",
    "invoice",
    "printer",
    "laptop",
    "screen",
    "flickers",
    "after",
    "update",
    "password",
    "reset",
    "done",
    "it",
    "is",
    "reset",
    "hello",
    "thanks",
    "please",
    "help",
    "which",
    "what",
    "how",
    "when",
    "user",
    "assistant",
    "system",
    "you",
    "are",
    "a",
    "support",
    "assistant",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "my",
    "account",
    "is",
    "locked",
    "since",
    "monday",
    "the",
    "router",
    "restarts",
    "at",
    "night",
]


def _words(extra: Iterable[str]) -> list[str]:
    return [*CORPUS, *extra]


def llama3_like_tokenizer(extra: Iterable[str] = ()) -> PreTrainedTokenizerFast:
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(
        [" ".join(_words(extra))],
        trainers.WordLevelTrainer(special_tokens=["<unk>", *LLAMA3_SPECIALS]),
    )
    raw.decoder = decoders.WordPiece(prefix="##")  # words joined by spaces when decoded
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        unk_token="<unk>",
        additional_special_tokens=LLAMA3_SPECIALS[2:],
    )
    tokenizer.chat_template = LLAMA3_TEMPLATE
    return tokenizer


def t5_like_tokenizer(extra: Iterable[str] = ()) -> PreTrainedTokenizerFast:
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Metaspace()
    raw.train_from_iterator(
        [" ".join(_words(extra))],
        trainers.WordLevelTrainer(special_tokens=["<pad>", "</s>", "<unk>"]),
    )
    raw.decoder = decoders.Metaspace()
    raw.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", raw.token_to_id("</s>"))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )


def tiny_llama(tokenizer: PreTrainedTokenizerFast) -> LlamaForCausalLM:
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config).eval()


def tiny_t5(tokenizer: PreTrainedTokenizerFast) -> T5ForConditionalGeneration:
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_heads=2,
        decoder_start_token_id=tokenizer.pad_token_id,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        task_specific_params={"summarization": {"prefix": "summarize: "}},
    )
    return T5ForConditionalGeneration(config).eval()
