"""Drift of a served model's traffic against its own data: the signals, their thresholds and the
decision, measured with Evidently (a maintained drift library: its column drift tests, text
domain classifier and embedding drift), plus the rates a person reads directly.

A window of collected traffic (masked requests and answers, `serving/collect.py`) is compared
with a reference built from the champion's own data, found through its lineage: its screened
test split's requests (what its users were expected to send) and their reference answers, and
its training split's vocabulary. Three kinds of signal, each with a threshold in config
(`monitor.signals`):

- input: request length (words), vocabulary (Evidently's text domain classifier), the share of
  words the model never saw in training, sentence embeddings of the requests (the packaged
  MiniLM encoder; Evidently's embedding drift, a domain classifier's ROC AUC);
- output: answer length, empty answers, the answer's score (against the same version's earlier
  traffic, Azure ML's default reference for prediction drift);
- data quality: requests carrying personal data or credentials (the collector masks them with the
  screen's own recognizers, so a placeholder such as `<EMAIL_ADDRESS>` in a collected request is a
  finding), requests that are not English, malformed requests (4xx) and failed answers (5xx).

`measure_drift` returns a typed `DriftResult`; `drift_report_html` writes what a person reads.
"""

from __future__ import annotations

import hashlib
import heapq
import html
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

os.environ.setdefault("DO_NOT_TRACK", "1")  # Evidently's usage telemetry: offline, never sent

Kind = Literal["input", "output", "quality"]
# Evidently's methods this config offers: p-values drift below the threshold, distances and
# domain classifiers' ROC AUC at or above it.
Method = Literal["wasserstein", "psi", "jensenshannon", "ks", "text", "embedding", "rate"]
P_VALUE_METHODS = frozenset({"ks"})
WORD = re.compile(r"[^\W\d_]+")
PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]+)>")
LATIN = re.compile(r"[A-Za-z\u00C0-\u024F]")
LETTER = re.compile(r"[^\W\d_]")
# Frequent English function words: a request of several words with none of them is not English.
_ENGLISH_WORDS = (
    "the a an of to in and or is are was were be it that this for on with as at by from not "
    "what when where who why how which do does did can i you he she we they my your our its "
    "has have had will would should could there here if but about me"
)
ENGLISH = frozenset(_ENGLISH_WORDS.split())
EMBEDDING_TOKENS = 128  # requests are cut to this many tokens before they are embedded


class SignalThreshold(BaseModel):
    """How one signal is measured and when it counts as drift."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool = Field(True, description="Measure this signal.")
    threshold: float = Field(
        description="Drift at or above this value (a distance, a domain classifier's ROC AUC, or "
        "the rise of a rate over the reference's); for the `ks` method, drift below this "
        "p-value."
    )
    method: Method = Field(description="How it is measured (Evidently's drift method, or rate).")


def _signal(threshold: float, method: Method, description: str) -> Any:
    return Field(
        default_factory=lambda: SignalThreshold(threshold=threshold, method=method),
        description=description,
    )


class DriftSignals(BaseModel):
    """Every signal the monitor measures, with its threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_length: SignalThreshold = _signal(
        0.3, "wasserstein", "Request length in words (normed Wasserstein distance)."
    )
    vocabulary: SignalThreshold = _signal(
        0.75, "text", "Request words (ROC AUC of a classifier telling window from reference)."
    )
    out_of_vocabulary: SignalThreshold = _signal(
        0.1, "rate", "Share of request words never seen in training: its rise."
    )
    embedding: SignalThreshold = _signal(
        0.75, "embedding", "Sentence embeddings of requests (domain classifier's ROC AUC)."
    )
    answer_length: SignalThreshold = _signal(
        0.3, "wasserstein", "Answer length in words, against the test split's references."
    )
    empty_answers: SignalThreshold = _signal(0.1, "rate", "Share of empty answers: its rise.")
    score: SignalThreshold = _signal(
        0.3, "wasserstein", "Answer scores, against the version's traffic before the window."
    )
    personal_data: SignalThreshold = _signal(
        0.05, "rate", "Share of requests with personal data or credentials masked: its rise."
    )
    not_english: SignalThreshold = _signal(
        0.1, "rate", "Share of requests not in English: its rise."
    )
    malformed_requests: SignalThreshold = _signal(
        0.05, "rate", "Share of requests refused as malformed (4xx)."
    )
    failed_answers: SignalThreshold = _signal(
        0.05, "rate", "Share of requests the model failed to answer (5xx)."
    )


KINDS: dict[str, Kind] = {
    "input_length": "input",
    "vocabulary": "input",
    "out_of_vocabulary": "input",
    "embedding": "input",
    "answer_length": "output",
    "empty_answers": "output",
    "score": "output",
    "personal_data": "quality",
    "not_english": "quality",
    "malformed_requests": "quality",
    "failed_answers": "quality",
}


class SignalResult(BaseModel):
    """One signal of one window: what was measured against what, and whether it drifted."""

    model_config = ConfigDict(frozen=True)
    name: str
    kind: Kind
    method: Method
    value: float | None = Field(description="The measured value; None when it was not measured.")
    threshold: float
    drift: bool
    current: float | None = Field(None, description="For a rate: the window's rate.")
    reference: float | None = Field(None, description="For a rate: the reference's rate.")
    note: str | None = Field(None, description="Why it was not measured, or what it compared.")


class DriftResult(BaseModel):
    """One window of a served model's traffic against its reference."""

    model_config = ConfigDict(frozen=True)
    model: str
    version: int | None = Field(description="The version whose traffic was read (the champion).")
    since: str | None
    until: str
    requests: int = Field(description="Requests the version answered or refused in the window.")
    reference_records: int
    judged: bool = Field(description="False when the window held too few requests to judge.")
    drift: bool
    drifted: list[str] = Field(default_factory=list, description="Names of the drifted signals.")
    signals: list[SignalResult] = Field(default_factory=list)
    reason: str = Field(description="One line: what was found, or why nothing was judged.")
    source: str = Field("local", description="Where the traffic was read (monitor.source).")
    read: dict[str, int] = Field(
        default_factory=dict,
        description="What reading the collected lines found (monitor.source azureml): files, "
        "lines, requests, malformed lines and the rest (tasks/monitor_azure.py).",
    )

    def signal(self, name: str) -> SignalResult | None:
        return next((s for s in self.signals if s.name == name), None)


@dataclass
class Sample:
    """What the signals read of a set of requests (the reference, or a window of traffic),
    gathered one request at a time: each request's features, and a stable sample of at most
    `sample_size` texts (the smallest hashes) for the text and embedding signals. Memory grows
    by a few numbers a request, never by its text."""

    known_words: frozenset[str]  # the training vocabulary
    entities: frozenset[str]  # the placeholders that mean personal data
    sample_size: int = 300
    lengths: list[int] = field(default_factory=list)
    oov: list[float] = field(default_factory=list)
    personal: list[bool] = field(default_factory=list)
    foreign: list[bool] = field(default_factory=list)
    answer_lengths: list[int] = field(default_factory=list)  # the answered requests'
    empty: list[bool] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    _kept: list[tuple[bytes, str]] = field(default_factory=list)  # a max-heap by hash

    def add(self, text: str, answer: str | None, status: int = 200) -> None:
        """One request's strings joined, its answer (None: it got none) and its status."""
        found = words(text)
        self.lengths.append(len(found))
        self.oov.append(oov_share(found, self.known_words))
        self.personal.append(has_personal_data(text, self.entities))
        self.foreign.append(not_english(text))
        self.statuses.append(status)
        if answer is not None:
            self.answer_lengths.append(len(words(answer)))
            self.empty.append(not answer.strip())
        key = bytes(255 - b for b in hashlib.sha256(text.encode()).digest())
        if len(self._kept) < self.sample_size:
            heapq.heappush(self._kept, (key, text))
        elif key > self._kept[0][0]:
            heapq.heapreplace(self._kept, (key, text))

    @property
    def texts(self) -> list[str]:
        """The sampled texts (the same requests give the same sample, in hash order)."""
        return [text for _, text in sorted(self._kept, reverse=True)]

    def __len__(self) -> int:
        return len(self.lengths)


def strings(value: Any) -> Iterable[str]:
    """Every string in a JSON value, in order (a request's fields, a chat's messages)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def words(text: str) -> list[str]:
    """Lower-cased words; a placeholder of masked personal data (`<EMAIL_ADDRESS>`) is one."""
    return [w.lower() for w in WORD.findall(PLACEHOLDER.sub(r" \1 ", text).replace("_", ""))]


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """The lower-cased words of `texts` (the champion's training requests)."""
    seen: set[str] = set()
    for text in texts:
        seen.update(words(text))
    return frozenset(seen)


def oov_share(found: Sequence[str], known: frozenset[str]) -> float:
    """The share of the words `found` (of one request) that are not `known`."""
    return sum(w not in known for w in found) / len(found) if found else 0.0


def has_personal_data(text: str, entities: frozenset[str]) -> bool:
    return any(m.group(1) in entities for m in PLACEHOLDER.finditer(text))


def not_english(text: str) -> bool:
    """Mostly letters of another script, or several words and not one English function word."""
    plain = PLACEHOLDER.sub(" ", text)
    letters = LETTER.findall(plain)
    if letters and sum(bool(LATIN.match(c)) for c in letters) < len(letters) / 2:
        return True
    found = words(plain)
    return len(found) >= 6 and not any(w in ENGLISH for w in found)


def stable_sample(items: Sequence[Any], n: int, key: Sequence[str]) -> list[Any]:
    """At most `n` of `items`, chosen by a hash of `key` (the same items give the same sample)."""
    if len(items) <= n:
        return list(items)
    ranked = sorted(range(len(items)), key=lambda i: hashlib.sha256(key[i].encode()).digest())
    return [items[i] for i in sorted(ranked[:n])]


def _rate(values: Iterable[bool]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def measure_drift(
    reference: Sample,
    current: Sample,
    signals: DriftSignals,
    baseline_scores: Sequence[float] = (),
    plots: bool = True,
) -> tuple[list[SignalResult], str]:
    """Every enabled signal of `current` against `reference`; `baseline_scores`: the same
    version's earlier answer scores. Text and embedding signals read each side's sampled texts.
    Returns the signals and, with `plots`, the figures of the measured distributions (HTML, for
    `drift_report_html`)."""
    import numpy as np
    import pandas as pd

    results: list[SignalResult] = []
    rates = {
        "out_of_vocabulary": (current.oov, reference.oov),
        "empty_answers": (current.empty, reference.empty),
        "personal_data": (current.personal, reference.personal),
        "not_english": (current.foreign, reference.foreign),
        "malformed_requests": ([400 <= s < 500 for s in current.statuses], []),
        "failed_answers": ([s >= 500 for s in current.statuses], []),
    }
    for name, (now, before) in rates.items():
        setting: SignalThreshold = getattr(signals, name)
        if not setting.enabled:
            continue
        ours, theirs = (
            float(np.mean(now)) if now else 0.0,
            float(np.mean(before)) if before else 0.0,
        )
        rise = ours - theirs
        results.append(
            SignalResult(
                name=name,
                kind=KINDS[name],
                method="rate",
                value=round(rise, 4),
                threshold=setting.threshold,
                drift=rise >= setting.threshold,
                current=round(ours, 4),
                reference=round(theirs, 4),
                note="the window's rate minus the reference's",
            )
        )

    frames: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    notes: dict[str, str] = {}
    numeric = {
        "input_length": (current.lengths, reference.lengths),
        "answer_length": (current.answer_lengths, reference.answer_lengths),
        "score": (current.scores, list(baseline_scores)),
    }
    for name, (now, before) in numeric.items():
        if getattr(signals, name).enabled:
            if len(now) < 2 or len(before) < 2:
                notes[name] = "too few values to compare" + (
                    " (no earlier traffic of this version)" if name == "score" else ""
                )
                continue
            frames[name] = (
                pd.DataFrame({name: np.asarray(now, dtype=float)}),
                pd.DataFrame({name: np.asarray(before, dtype=float)}),
            )
    cur_texts, ref_texts = current.texts, reference.texts
    if signals.vocabulary.enabled:
        frames["vocabulary"] = (
            pd.DataFrame({"vocabulary": cur_texts}),
            pd.DataFrame({"vocabulary": ref_texts}),
        )
    if signals.embedding.enabled:
        dims = [f"e{i}" for i in range(EMBEDDING_DIMS)]
        frames["embedding"] = (
            pd.DataFrame(embed(cur_texts), columns=dims),
            pd.DataFrame(embed(ref_texts), columns=dims),
        )
    values = _evidently_values(frames, signals)
    for name in ("input_length", "vocabulary", "embedding", "answer_length", "score"):
        setting = getattr(signals, name)
        if not setting.enabled:
            continue
        value = values.get(name)
        drift = value is not None and (
            value < setting.threshold
            if setting.method in P_VALUE_METHODS
            else value >= setting.threshold
        )
        results.append(
            SignalResult(
                name=name,
                kind=KINDS[name],
                method=setting.method,
                value=None if value is None else round(float(value), 4),
                threshold=setting.threshold,
                drift=drift,
                note=notes.get(name, _EVIDENTLY_NOTES[setting.method]),
            )
        )
    order = list(KINDS)
    results.sort(key=lambda s: order.index(s.name))
    plotted = {n: (list(map(float, a)), list(map(float, b))) for n, (a, b) in numeric.items()}
    return results, _plots(plotted, [r for r in results if r.method == "rate"]) if plots else ""


_EVIDENTLY_NOTES = {
    "wasserstein": "Evidently: normed Wasserstein distance",
    "psi": "Evidently: population stability index",
    "jensenshannon": "Evidently: Jensen-Shannon distance",
    "ks": "Evidently: Kolmogorov-Smirnov p-value",
    "text": "Evidently: ROC AUC of a classifier telling window from reference by their words",
    "embedding": "Evidently: ROC AUC of a classifier telling window from reference embeddings",
    "rate": "",
}


def _evidently_values(
    frames: dict[str, tuple[Any, Any]], signals: DriftSignals
) -> dict[str, float]:
    """Each signal's drift value by Evidently: its column drift test (`ValueDrift`, one report a
    signal since the columns' lengths differ) or, for embeddings, its domain-classifier method
    called directly (the metric would also draw a t-SNE map: a minute of CPU for a picture)."""
    from evidently import DataDefinition, Dataset, Report
    from evidently.legacy.metrics.data_drift.embedding_drift_methods import model
    from evidently.metrics import ValueDrift

    values: dict[str, float] = {}
    for name, (now, before) in frames.items():
        setting: SignalThreshold = getattr(signals, name)
        if setting.method == "embedding":
            values[name] = float(model(threshold=setting.threshold)(now, before)[0])
            continue
        if setting.method == "text":
            definition = DataDefinition(text_columns=[name])
            metric = ValueDrift(column=name, threshold=setting.threshold)
        else:
            definition = DataDefinition(numerical_columns=[name])
            metric = ValueDrift(column=name, method=setting.method, threshold=setting.threshold)
        snapshot = Report([metric]).run(
            Dataset.from_pandas(now, data_definition=definition),
            Dataset.from_pandas(before, data_definition=definition),
        )
        found = snapshot.dict()["metrics"]
        if found and isinstance(found[0]["value"], int | float):
            values[name] = float(found[0]["value"])
    return values


def _plots(numeric: dict[str, tuple[list[float], list[float]]], rates: list[SignalResult]) -> str:
    """Inline PNG figures: each measured distribution, window against reference, and the rates
    side by side; HTML `<img>` tags (no script, so the page reads anywhere)."""
    import base64
    import io

    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = {name: pair for name, pair in numeric.items() if pair[0] and pair[1]}
    fig, axes = plt.subplots(1, len(shown) + 1, figsize=(4.2 * (len(shown) + 1), 3.2))
    for ax, (name, (now, before)) in zip(axes, shown.items(), strict=False):
        bins = np.histogram_bin_edges([*before, *now], bins=30)  # one set for both sides
        ax.hist(before, bins=bins, density=True, alpha=0.55, label="reference", color="#4c72b0")
        ax.hist(now, bins=bins, density=True, alpha=0.55, label="window", color="#dd8452")
        ax.set_title(name)
        ax.legend(fontsize=8)
    ax = axes[-1]
    names = [r.name for r in rates]
    ax.barh(
        names, [r.reference or 0 for r in rates], height=0.4, label="reference", color="#4c72b0"
    )
    ax.barh(
        [i + 0.4 for i in range(len(names))],
        [r.current or 0 for r in rates],
        height=0.4,
        label="window",
        color="#dd8452",
    )
    ax.set_title("rates")
    ax.legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="distributions, window against reference" src="data:image/png;base64,{data}">'


EMBEDDING_DIMS = 384  # the packaged MiniLM's hidden size


@cache
def _encoder() -> tuple[Any, Any]:
    from transformers import AutoModel, AutoTokenizer

    from trainer.modeling import resolve_model
    from trainer.taskspec import PACKAGED_ENCODER

    path = resolve_model(PACKAGED_ENCODER)
    model = AutoModel.from_pretrained(path, local_files_only=True)
    model.eval()
    return AutoTokenizer.from_pretrained(path, local_files_only=True), model


def embed(texts: Sequence[str], batch_size: int = 64) -> Any:
    """Mean-pooled, unit-length sentence embeddings of `texts` by the packaged MiniLM encoder
    (all-MiniLM-L6-v2, a sentence encoder), each cut to EMBEDDING_TOKENS tokens."""
    import numpy as np
    import torch

    tokenizer, model = _encoder()
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(
                list(texts[start : start + batch_size]),
                padding=True,
                truncation=True,
                max_length=EMBEDDING_TOKENS,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, EMBEDDING_DIMS), dtype=np.float32)


def drift_report_html(result: DriftResult, sections: str = "") -> str:
    """A page a person reads: the decision, every signal against its threshold (drifted ones
    first, in red), then Evidently's plots of the measured distributions."""
    rows = []
    for s in sorted(result.signals, key=lambda s: (not s.drift, list(KINDS).index(s.name))):
        value = "-" if s.value is None else f"{s.value:g}"
        rate = (
            f"{s.current:.1%} vs {s.reference:.1%}"
            if s.current is not None and s.reference is not None
            else ""
        )
        rows.append(
            f'<tr class="{"drift" if s.drift else "ok"}"><td>{html.escape(s.name)}</td>'
            f"<td>{s.kind}</td><td>{value}</td><td>{s.threshold:g}</td>"
            f"<td>{'DRIFT' if s.drift else 'ok'}</td><td>{html.escape(rate)}</td>"
            f"<td>{html.escape(s.note or '')}</td></tr>"
        )
    verdict = "DRIFT" if result.drift else ("no drift" if result.judged else "not judged")
    window = f"{result.since or 'the start'} → {result.until}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>tunegate monitor: {html.escape(result.model)} v{result.version}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px; max-width: 1200px; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; font-size: 14px; }}
tr.drift td {{ background: #fde2e1; }}
img {{ max-width: 100%; height: auto; }}
.verdict {{ font-size: 22px; font-weight: 600; }}
</style></head><body>
<h1>{html.escape(result.model)} version {result.version}</h1>
<p class="verdict">{verdict}</p>
<p>{html.escape(result.reason)}</p>
<p>Window {html.escape(window)}: {result.requests} requests, against
{result.reference_records} reference records (the version's screened test split).</p>
<table><thead><tr><th>signal</th><th>kind</th><th>value</th><th>threshold</th><th>result</th>
<th>window vs reference</th><th>how</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table>
<h2>Distributions</h2>
{sections or "<p>No distribution was measured.</p>"}
</body></html>
"""
