"""One module of code per task kind, found through one table; an unknown kind is an error."""

from __future__ import annotations

import dataclasses
import importlib

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
