"""The packaged generative models exported to ONNX: greedy decoding over ONNX Runtime with a
key/value cache writes what transformers' `generate` writes (fp32), every request is answered the
same alone and in a batch (int8 too), and the scoring code serves from the graphs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from samples.generate import valid_records
from serving import runtimes
from serving.onnx_generation import NotExportable, OnnxGenerator
from serving.scoring import Scorer
from trainer.kinds.causal import with_chat_template
from trainer.modeling import (
    _warm_started_encoder_decoder,
    load_base,
    load_tokenizer,
    load_trained,
    resolve_model,
    write_model_info,
)
from trainer.predict import predict
from trainer.taskspec import PACKAGED_DECODER, PACKAGED_SEQ2SEQ, task_spec


@pytest.fixture(scope="module", params=["summarization", "chat"])
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(task, model folder, torch model, tokenizer, {runtime: its exported folder}) of a packaged
    generative model saved as training saves it, exported as the evaluate stage exports it (for
    summarization the BERT2BERT without its copy head, which is not exported)."""
    task = request.param
    name = PACKAGED_SEQ2SEQ if task == "summarization" else PACKAGED_DECODER
    folder = tmp_path_factory.mktemp(task)
    model_dir = folder / "model"
    tokenizer = load_tokenizer(name)
    if task == "chat":
        tokenizer = with_chat_template(tokenizer)
    if task == "summarization":
        torch.manual_seed(42)
        base = _warm_started_encoder_decoder(resolve_model(name), copy_head=False)
    else:
        base = load_base(task, name, seed=42)
    base.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    write_model_info(model_dir, task, name, adapter=False, max_new_tokens=24)
    folders = runtimes.export(model_dir, folder / runtimes.FOLDER)
    model, tokenizer, _ = load_trained(model_dir)
    yield task, model_dir, model, tokenizer, folders
    shutil.rmtree(folder, ignore_errors=True)  # the module's hundreds of MB, not the session's


@pytest.mark.slow
def test_fp32_graphs_write_what_torch_generate_writes(exported) -> None:  # type: ignore[no-untyped-def]
    task, _, model, tokenizer, folders = exported
    records = valid_records(task, 8, seed=1)
    onnx = runtimes.load(folders["onnx"])
    assert isinstance(onnx, OnnxGenerator)
    expected = predict(model, tokenizer, task, records, batch_size=8)  # padded, batched, cached
    assert len(set(expected)) > 1 and all(expected)  # not one empty answer for every record
    assert predict(onnx, tokenizer, task, records, batch_size=8) == expected
    assert predict(onnx, tokenizer, task, records[:1], batch_size=1) == expected[:1]


@pytest.mark.slow
def test_int8_answers_a_request_the_same_alone_and_in_a_batch(exported) -> None:  # type: ignore[no-untyped-def]
    task, _, _, tokenizer, folders = exported
    records = valid_records(task, 6, seed=2)
    int8 = runtimes.load(folders["onnx-int8"])
    together = predict(int8, tokenizer, task, records, batch_size=6)
    alone = [predict(int8, tokenizer, task, [r], batch_size=1)[0] for r in records]
    assert together == alone and all(together)


def test_an_architecture_without_an_exporter_serves_in_torch(tmp_path: Path) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    from serving.onnx_generation import export

    tiny = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=50))
    with pytest.raises(NotExportable, match=r"GPT2LMHeadModel.*serves in torch"):
        export(tiny, None, tmp_path / "onnx", runtimes.OPSET)


def test_the_summarizer_with_its_copy_head_serves_in_torch(tmp_path: Path) -> None:
    from serving.onnx_generation import export
    from tests.trainer.test_pointer_generator import tiny_pointer_generator

    with pytest.raises(NotExportable, match=r"copy head.*serves in torch"):
        export(tiny_pointer_generator(), None, tmp_path / "onnx", runtimes.OPSET)


@pytest.mark.slow
def test_the_scoring_code_serves_from_the_graphs_alone(exported, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Staged as registration stages it and without the torch weights (which an ONNX-served
    model never loads), the model answers a request as the graphs do offline (as the evaluation
    made the rollout's smoke expectations)."""
    task, model_dir, _, tokenizer, folders = exported
    staged = tmp_path / "staged"
    runtimes.stage(model_dir, folders["onnx"], runtimes.ServingChoice("onnx", {}, []), staged)
    for weights in staged.glob("*.safetensors"):
        weights.unlink()
    scorer = Scorer(staged)
    assert scorer.runtime == "onnx" and isinstance(scorer.model, OnnxGenerator)
    spec = task_spec(task)
    record = valid_records(task, 1, seed=3)[0]
    answer = scorer.run(json.dumps(spec.request_of(record)))
    offline = predict(runtimes.load(folders["onnx"]), tokenizer, task, [record])[0]
    assert answer[spec.response_key] == offline and offline


def test_a_large_generative_model_is_refused_before_its_weights_load(tmp_path: Path) -> None:
    """A generative model of another base (a 7B on Azure ML) is not exported, and its weights,
    downloaded to the orchestrator, are never loaded for it (there are none here to load)."""
    write_model_info(tmp_path, "summarization", "google/flan-t5-xl", adapter=False)
    with pytest.raises(NotExportable, match="google/flan-t5-xl: only the packaged"):
        runtimes.export(tmp_path, tmp_path / "exported")
