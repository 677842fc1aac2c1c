"""Generation done right for the big models' tokenizers, on look-alikes built here (Llama-3's chat
template and missing pad token, t5's task prefix): what training and prediction feed the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from tests.trainer.lookalikes import llama3_like_tokenizer, t5_like_tokenizer, tiny_llama, tiny_t5
from trainer.kinds import causal
from trainer.kinds.causal import IGNORE, chat_batch, chat_features, chat_prompt, with_chat_template
from trainer.kinds.seq2seq import summary_features
from trainer.modeling import load_trained, with_pad_token, write_model_info
from trainer.predict import predict

LONG_USER = " ".join(["the router restarts at night"] * 30)


def conversation(last_user: str = "my account is locked since monday") -> dict[str, Any]:
    return {
        "id": "c1",
        "messages": [
            {"role": "system", "content": "you are a support assistant"},
            {"role": "user", "content": LONG_USER},
            {"role": "assistant", "content": "thanks which account"},
            {"role": "user", "content": last_user},
            {"role": "assistant", "content": "password reset done it is reset"},
        ],
    }


class Args:
    max_length = 48
    max_target_length = 12


def test_the_loss_is_on_every_reply_only_and_long_prompts_lose_their_beginning() -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    record = conversation()
    data = chat_features(tokenizer, [record], Args.max_length, Args.max_target_length)
    ids, labels = data["input_ids"][0], data["labels"][0]
    assert len(ids) == len(labels) == Args.max_length  # cut to fit

    def words(text: str) -> list[int]:
        return [*tokenizer(text, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]

    learnt = [label for label in labels if label != IGNORE]
    # both replies and their end tokens, nothing the user or the system wrote, no header
    assert learnt == words("thanks which account") + words("password reset done it is reset")
    last = len(words("password reset done it is reset"))
    assert labels[-last:] == ids[-last:]  # the last reply, whole, at the end
    text = tokenizer.decode(ids)
    assert ids[0] == tokenizer.bos_token_id and labels[0] == IGNORE  # the start survives the cut
    assert "my account is locked since monday" in text  # the end of the conversation stays
    assert "you are a support assistant" not in text  # the beginning went
    # what the model reads before the last reply is the prompt prediction gives it
    prompt = chat_prompt(tokenizer, record["messages"][:-1])
    assert ids[1:-last] == prompt[len(prompt) - (len(ids) - last - 1) :]
    assert tokenizer.decode(ids[:-last]).endswith("<|start_header_id|> assistant <|end_header_id|>")


def test_a_share_of_earlier_replies_is_learnt_the_same_way_every_time() -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    records = [
        {"id": f"c{i}", "messages": conversation(f"my account {i} is locked")["messages"]}
        for i in range(40)
    ]

    def learnt(share: float) -> list[str]:
        data = chat_features(tokenizer, records, 400, 12, earlier_replies=share)
        return [tokenizer.decode([t for t in row if t != IGNORE]) for row in data["labels"]]

    assert all("thanks" not in text and "password reset" in text for text in learnt(0.0))
    assert all("thanks" in text and "password reset" in text for text in learnt(1.0))
    some = learnt(0.3)
    assert all("password reset" in text for text in some)  # the last reply, always
    assert 4 <= sum("thanks" in text for text in some) <= 20  # about 12 of 40 earlier replies
    assert learnt(0.3) == some  # by the record's id, not at random


def test_a_template_that_rewrites_earlier_replies_learns_the_last_one_as_prompts_read_it() -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    # earlier replies rendered shorter once a later turn follows (as some templates drop past
    # replies' reasoning): they cannot be learnt as written, the last one still is
    tokenizer.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'assistant' and not loop.last %}"
        "{{ m['role'] + ': (earlier)\\n' }}{% else %}{{ m['role'] + ': ' + m['content'] + '\\n' }}"
        "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'assistant: ' }}{% endif %}"
    )
    messages = conversation()["messages"]
    record = {"id": "c3", "messages": [messages[0], *messages[2:]]}
    data = chat_features(tokenizer, [record], 200, 12)
    ids, labels = data["input_ids"][0], data["labels"][0]
    learnt = tokenizer.decode([t for t in labels if t != IGNORE])
    assert "password reset" in learnt and "thanks" not in learnt
    prompt = chat_prompt(tokenizer, record["messages"][:-1])
    assert ids[: len(prompt)] == prompt  # as prediction's prompt holds the earlier reply


def test_the_collator_keeps_the_prompt_out_of_the_loss() -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    short = {"id": "c2", "messages": conversation()["messages"][3:]}
    data = chat_features(tokenizer, [conversation(), short], Args.max_length, 12)
    rows = [{k: data[k][i] for k in data} for i in range(2)]
    batch = causal.collator(tokenizer, None)(rows)
    for i in range(2):
        kept = batch["labels"][i][batch["labels"][i] != IGNORE].tolist()
        assert kept == [x for x in data["labels"][i] if x != IGNORE]  # a language-model
        # collator would copy the input ids (prompt included) into the labels instead


def test_prediction_cuts_prompts_like_training_and_pads_them_on_the_left() -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    assert tokenizer.pad_token == tokenizer.eos_token  # Llama-3 ships none
    records = [conversation(), {"id": "c2", "messages": conversation()["messages"][3:]}]
    batch = chat_batch(tokenizer, records, budget=36)
    width = batch["input_ids"].shape[1]
    assert width == 36
    short = batch["attention_mask"][1]
    assert short[0] == 0 and short[-1] == 1  # padding on the left, the prompt ends last
    header = tokenizer.convert_tokens_to_ids("<|end_header_id|>")
    assert batch["input_ids"][:, -1].tolist() == [header, header]  # both end with the prompt
    assert tokenizer.padding_side == "right"  # left only while building the batch


def test_decoder_only_batches_generate_what_single_prompts_do() -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    torch.manual_seed(0)
    model = tiny_llama(tokenizer)
    records = [conversation(), {"id": "c2", "messages": conversation()["messages"][3:]}]
    kw = {"max_length": 64, "max_new_tokens": 6}
    batched = predict(model, tokenizer, "causal-lm", records, batch_size=2, **kw)
    single = [predict(model, tokenizer, "causal-lm", [r], **kw)[0] for r in records]
    assert batched == single and all(batched)


def test_a_trained_model_predicts_with_its_training_lengths(tmp_path: Path, monkeypatch) -> None:
    tokenizer = with_pad_token(llama3_like_tokenizer())
    model = tiny_llama(tokenizer)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    write_model_info(tmp_path, "causal-lm", "lookalike", False, max_length=40, max_new_tokens=5)
    loaded, tok, _ = load_trained(tmp_path)
    seen: dict[str, Any] = {}
    generate = type(loaded).generate

    def spy(self: Any, **kw: Any) -> Any:
        seen.update(width=kw["input_ids"].shape[1], new=kw["max_new_tokens"])
        return generate(self, **kw)

    monkeypatch.setattr(type(loaded), "generate", spy)
    predict(loaded, tok, "causal-lm", [conversation()])
    assert seen == {"width": 40 - 5, "new": 5}


def test_t5_gets_its_summarize_prefix_in_training_and_prediction(monkeypatch) -> None:
    tokenizer = t5_like_tokenizer()
    model = tiny_t5(tokenizer)
    record = {"id": "s1", "document": "the vpn dropped every hour", "summary": "vpn dropped"}
    prefix = tokenizer("summarize:", add_special_tokens=False)["input_ids"]
    trained = summary_features(tokenizer, [record], Args, "summarize: ")
    assert trained["input_ids"][0][: len(prefix)] == prefix
    assert trained["labels"][0][-1] == tokenizer.eos_token_id
    seen: list[list[int]] = []
    generate = type(model).generate

    def spy(self: Any, **kw: Any) -> Any:
        seen.extend(kw["input_ids"].tolist())
        return generate(self, **kw)

    monkeypatch.setattr(type(model), "generate", spy)
    predict(model, tokenizer, "summarization", [record], max_length=32, max_new_tokens=3)
    assert seen[0] == trained["input_ids"][0]  # the same input, prefix included


def test_a_tokenizer_without_a_template_gets_one_whose_prompt_does_not_end_the_sequence() -> None:
    from trainer.modeling import load_tokenizer
    from trainer.taskspec import PACKAGED_DECODER

    tokenizer = with_chat_template(load_tokenizer(PACKAGED_DECODER))
    ids = chat_prompt(tokenizer, conversation()["messages"][:-1])
    assert ids[0] == tokenizer.cls_token_id and ids[-1] != tokenizer.sep_token_id
    assert tokenizer.decode(ids).endswith("since monday assistant :")  # the generation prompt
    whole = tokenizer.apply_chat_template(conversation()["messages"], tokenize=False)
    assert whole.rstrip().endswith("it is reset [SEP]")  # a reply ends with the end token


@pytest.mark.parametrize("missing", ["pad", "all"])
def test_pad_token_fallback(missing: str) -> None:
    tokenizer = llama3_like_tokenizer()
    if missing == "pad":
        assert with_pad_token(tokenizer).pad_token == "<|eot_id|>"
    else:
        tokenizer.eos_token = None
        tokenizer.unk_token = None
        with pytest.raises(ValueError, match="no pad"):
            with_pad_token(tokenizer)


def test_the_packaged_encoder_decoder_attends_to_the_document_from_the_start() -> None:
    from trainer.modeling import load_base
    from trainer.pointer_generator import NO_REPEAT_NGRAM, PointerGeneratorModel
    from trainer.taskspec import PACKAGED_SEQ2SEQ

    model = load_base("summarization", PACKAGED_SEQ2SEQ, seed=0)
    assert model.config.decoder_start_token_id == 101  # [CLS] starts, [SEP] (102) ends
    assert model.generation_config.eos_token_id == 102
    # with a copy head, decoding without repeated trigrams (saved in its generation config)
    assert isinstance(model, PointerGeneratorModel)
    assert model.generation_config.no_repeat_ngram_size == NO_REPEAT_NGRAM
    for layer in model.decoder.bert.encoder.layer:
        cross, self_attention = layer.crossattention.state_dict(), layer.attention.state_dict()
        assert all(torch.equal(cross[k], self_attention[k]) for k in self_attention)


def test_the_packaged_encoder_decoder_reads_the_document_with_minilms_first_two_layers() -> None:
    """Its encoder is pretrained MiniLM cut after two layers (trainer/modeling.py says why): what
    it makes of a document is MiniLM's own second-layer states, not new weights'."""
    from transformers import AutoModel, AutoTokenizer

    from trainer.modeling import SEQ2SEQ_ENCODER_LAYERS, load_base, resolve_model
    from trainer.taskspec import PACKAGED_SEQ2SEQ

    model = load_base("summarization", PACKAGED_SEQ2SEQ, seed=0).eval()
    path = resolve_model(PACKAGED_SEQ2SEQ)
    minilm = AutoModel.from_pretrained(path).eval()
    inputs = AutoTokenizer.from_pretrained(path)(
        ["The kettle from order 4471 arrived with a cracked lid."], return_tensors="pt"
    )
    with torch.no_grad():
        states = model.encoder(**inputs).last_hidden_state
        full = minilm(**inputs, output_hidden_states=True)
    assert len(model.encoder.encoder.layer) == SEQ2SEQ_ENCODER_LAYERS < len(minilm.encoder.layer)
    assert torch.allclose(states, full.hidden_states[SEQ2SEQ_ENCODER_LAYERS], atol=1e-5)
    assert not torch.allclose(states, full.last_hidden_state, atol=1e-2)
