"""The summarizer's copy head (trainer/pointer_generator.py) on a tiny random BERT2BERT: what it
copies is the document's own tokens, its loss is that mixture's, and it survives saving."""

from __future__ import annotations

from pathlib import Path

import torch
import transformers
from transformers import BertConfig

from trainer.pointer_generator import PointerGeneratorModel

VOCAB = 60
DOCUMENT = [[1, 17, 23, 41, 2]]  # [CLS]-like start, three words, [SEP]-like end


def tiny_pointer_generator() -> PointerGeneratorModel:
    torch.manual_seed(0)
    size = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2}
    encoder = transformers.BertModel(BertConfig(vocab_size=VOCAB, intermediate_size=32, **size))
    decoder = transformers.BertLMHeadModel(
        BertConfig(
            vocab_size=VOCAB,
            intermediate_size=32,
            is_decoder=True,
            add_cross_attention=True,
            **size,
        )
    )
    plain = transformers.EncoderDecoderModel(encoder=encoder, decoder=decoder)
    for key, value in {"decoder_start_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}.items():
        setattr(plain.config, key, value)
        setattr(plain.generation_config, key, value)
    return PointerGeneratorModel.from_encoder_decoder(plain).eval()


def test_copying_puts_the_probability_on_the_documents_own_tokens() -> None:
    model = tiny_pointer_generator()
    ids = torch.tensor(DOCUMENT)
    start = torch.tensor([[1]])
    with torch.no_grad():
        model.copy_gate.bias.fill_(-30.0)  # p_gen ~ 0: copy only
        copying = model(input_ids=ids, decoder_input_ids=start).logits[0, -1].exp()
        model.copy_gate.bias.fill_(30.0)  # p_gen ~ 1: the decoder's own softmax only
        generating = model(input_ids=ids, decoder_input_ids=start).logits[0, -1].exp()
    source = sorted(set(DOCUMENT[0]))
    assert torch.isclose(copying.sum(), torch.tensor(1.0), atol=1e-4)  # a distribution
    assert copying[source].sum() > 0.999  # all of it on the document's tokens
    assert generating[source].sum() < 0.5  # the vocabulary head spreads over all 60
    # generate copies too: it gets the document's ids without being told
    model.copy_gate.bias.data.fill_(-30.0)
    written = model.generate(input_ids=ids, max_new_tokens=4, do_sample=False)[0, 1:]
    assert set(written.tolist()) <= set(source)


def test_the_loss_is_the_mixtures_negative_log_likelihood() -> None:
    model = tiny_pointer_generator()
    ids, labels = torch.tensor(DOCUMENT), torch.tensor([[23, 41, 2]])
    with torch.no_grad():
        out = model(input_ids=ids, labels=labels)
    picked = out.logits[0].gather(-1, labels[0][:, None])
    assert torch.isclose(out.loss, -picked.mean(), atol=1e-5)
    model.train()
    model(input_ids=ids, labels=labels).loss.backward()
    assert model.copy_gate.weight.grad.abs().sum() > 0  # the gate learns from it


def test_saving_and_loading_keeps_the_copy_head(tmp_path: Path) -> None:
    model = tiny_pointer_generator()
    with torch.no_grad():
        model.copy_gate.weight.normal_()
        model.copy_gate.bias.fill_(-1.5)
    model.save_pretrained(tmp_path)
    # what load_trained uses (trainer.modeling.model_class: AutoModelForSeq2SeqLM)
    loaded = transformers.AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert isinstance(loaded, PointerGeneratorModel)
    assert torch.equal(loaded.copy_gate.weight, model.copy_gate.weight)
    ids = torch.tensor(DOCUMENT)
    with torch.no_grad():
        before = model(input_ids=ids, decoder_input_ids=torch.tensor([[1, 23]])).logits
        after = loaded(input_ids=ids, decoder_input_ids=torch.tensor([[1, 23]])).logits
    assert torch.allclose(before, after, atol=1e-5)
