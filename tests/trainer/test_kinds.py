"""One module of code per task kind, found through one table; an unknown kind is an error."""

from __future__ import annotations

import dataclasses
import importlib
import json

import pytest

from serving.runtimes import EXPORTERS, exporter_of
from trainer.kinds import KIND_MODULES, KindCode, kind_code
from trainer.taskspec import TASK_SPECS, task_spec


@pytest.mark.parametrize("kind", sorted(KIND_MODULES))
def test_every_kind_module_provides_the_whole_table(kind: str) -> None:
    code = kind_code(kind)
    assert code is importlib.import_module(KIND_MODULES[kind])  # type: ignore[index]
    for name in ("prepare_tokenizer", "features", "collator", "predict", "respond"):
        assert callable(getattr(code, name)), f"{kind} has no {name}"
    assert isinstance(code.GENERATIVE, bool)
    assert code.EXPORTER in EXPORTERS


@pytest.mark.parametrize("name", sorted(TASK_SPECS))
def test_a_spec_names_its_kind_module(name: str) -> None:
    spec = task_spec(name)
    code: KindCode = spec.code
    assert code.__name__ == f"trainer.kinds.{spec.kind}"  # type: ignore[attr-defined]
    assert exporter_of(name) is EXPORTERS[code.EXPORTER]


def test_an_unknown_kind_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown task kind 'poetry'"):
        kind_code("poetry")
    with pytest.raises(ValueError, match="unknown task kind 'poetry'"):
        dataclasses.replace(task_spec("chat"), kind="poetry")  # type: ignore[arg-type]


def test_an_exporter_the_table_lacks_is_an_error_naming_it(monkeypatch) -> None:
    monkeypatch.setattr(kind_code("causal"), "EXPORTER", "tflite")
    with pytest.raises(ValueError, match="names exporter 'tflite'"):
        exporter_of("chat")


# --- the text kind: language modelling on raw text ---------------------------------------------
DOCUMENTS = [
    {"id": "d1", "text": "The day at Harrow Point began with a low grey sky and a light wind."},
    {"id": "d2", "text": "Rain in the gauge measured four millimetres since the last reading."},
]


class Args:
    max_length = 8
    max_target_length = 4


def test_a_document_is_cut_into_windows_whose_labels_are_its_tokens() -> None:
    from trainer.kinds.text import document_ids
    from trainer.modeling import load_tokenizer
    from trainer.taskspec import PACKAGED_DECODER

    tokenizer = load_tokenizer(PACKAGED_DECODER)
    data = kind_code("text").features(tokenizer, DOCUMENTS[:1], Args, None)
    ids = document_ids(tokenizer, DOCUMENTS[0]["text"])
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    assert [x for window in data["input_ids"] for x in window] == ids  # every token, in order
    assert all(len(w) <= Args.max_length for w in data["input_ids"])
    assert data["labels"] == data["input_ids"]  # the loss is on every token


def test_a_prediction_holds_the_token_counts_and_the_completion_the_endpoint_answers() -> None:
    import torch

    from trainer.kinds.prompts import text_prompt
    from trainer.metric_specs import lm_completion
    from trainer.modeling import load_base, load_tokenizer
    from trainer.predict import predict

    spec = task_spec("text-generation")
    tokenizer = load_tokenizer(spec.default_model)
    tokenizer.model_max_length = 32
    model = load_base(spec.name, spec.default_model, seed=0)
    model.generation_config.max_new_tokens = 5
    predictions = [json.loads(p) for p in predict(model, tokenizer, spec.name, DOCUMENTS)]
    for prediction, record in zip(predictions, DOCUMENTS, strict=True):
        tokens = len(tokenizer(record["text"])["input_ids"]) - 1  # all but the first are scored
        assert prediction["tokens"] == tokens and 0 <= prediction["correct"] <= tokens
        # the summed negative log-likelihood, by hand
        ids = torch.tensor([tokenizer(record["text"])["input_ids"]])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, :-1]
        nll = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="sum")
        assert prediction["nll"] == pytest.approx(float(nll), rel=1e-4)
    # the endpoint completes the same prompt the same way
    requests = [spec.request_of(r) for r in DOCUMENTS]
    assert requests[0] == {"prompt": text_prompt(DOCUMENTS[0]["text"])}
    with torch.inference_mode():
        served = spec.code.respond(model, tokenizer, requests, "completion", _lengths(32, 5))
    offline = [lm_completion(p) for p in predict(model, tokenizer, spec.name, DOCUMENTS)]
    assert [s["completion"] for s in served] == offline and all(offline)


def _lengths(max_length: int, new: int):  # type: ignore[no-untyped-def]
    from trainer.kinds import Lengths

    return Lengths(max_length, new, 64)


def test_the_text_kind_serves_in_torch() -> None:
    from serving.onnx_generation import NotExportable

    with pytest.raises(NotExportable, match="serves in torch"):
        exporter_of("text-generation").check("packaged:minilm-decoder")


@pytest.mark.slow
def test_a_text_model_trained_here_completes_a_prompt_as_it_predicts(tmp_path) -> None:
    from serving.scoring import Scorer
    from tasks.records import TaskType
    from tests.trainer.tiny import text_record, write_dataset
    from trainer.metric_specs import lm_completion
    from trainer.modeling import load_trained
    from trainer.predict import predict
    from trainer.train import main

    data = write_dataset(tmp_path, TaskType("text-generation"), text_record, n=16)
    out = tmp_path / "model"
    flags = [
        "--max-steps=2",
        "--max-length=48",
        "--doc-stride=16",
        "--max-target-length=6",
        "--logging-steps=1",
    ]
    metrics = main(
        ["--task", "text-generation", "--data-dir", str(data), "--output-dir", str(out), *flags]
    )
    assert metrics["train_loss"] > 0 and metrics["base_model"] == "packaged:minilm-decoder"
    assert json.loads((out / "model_info.json").read_text())["max_new_tokens"] == 6
    answer = Scorer(out).run(json.dumps({"prompt": "The day at station"}))
    assert set(answer) == {"completion"} and isinstance(answer["completion"], str)
    model, tokenizer, _ = load_trained(out)
    document = {"id": "x", "text": "The day at station"}
    assert answer["completion"] == lm_completion(
        predict(model, tokenizer, "text-generation", [document])[0]
    )
