"""GUM's mentions to the person reader's training labels (screening/data/build/gum_persons.py):
only proper nouns whose innermost mention is a person, without titles, one name per mention."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BUILD = Path(__file__).resolve().parents[2] / "screening" / "data" / "build" / "gum_persons.py"
_spec = importlib.util.spec_from_file_location("gum_persons", BUILD)
gum_persons = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gum_persons)

# CorefUD's bracket notation as GUM writes it in MISC: `(id-type-...` opens, `id)` closes,
# `(id-type-...)` is a one-token mention; mentions nest and may span sentences.
ROWS = [
    ("Mayor", "PROPN", "Entity=(1-person-new-sssss-cf1-1-coref"),
    ("Ada", "PROPN", "_"),
    ("Okafor", "PROPN", "Entity=1)"),
    ("visited", "VERB", "_"),
    ("the", "DET", "Entity=(2-organization-new-nnnnn-cf2-1-sgl"),
    ("Lena", "PROPN", "_"),
    ("Berg", "PROPN", "_"),
    ("School", "PROPN", "Entity=2)"),
    ("with", "ADP", "_"),
    ("her", "PRON", "Entity=(3-person-giv:act-sssss-cf1-1-ana)"),
    ("aide", "NOUN", "Entity=(4-person-new-sssss-cf3-1-sgl)"),
    (",", "PUNCT", "_"),
    ("Dr.", "PROPN", "Entity=(5-abstract-new-nnnnn-cf4-1-sgl(6-person-new-sssss-cf5-2-sgl"),
    ("Tom", "PROPN", "_"),
    ("Hale", "PROPN", "Entity=6)5)"),
    ("in", "ADP", "_"),
    ("Lagos", "PROPN", "Entity=(7-place-new-nnnnn-cf6-1-sgl-Lagos)|SpaceAfter=No"),
    (".", "PUNCT", "_"),
]


def conllu(rows, newdoc="GUM_news_example") -> str:
    lines = [f"# newdoc id = {newdoc}", "# text = ..."]
    for i, (form, upos, misc) in enumerate(rows, 1):
        lines.append(f"{i}\t{form}\t{form.lower()}\t{upos}\tNNP\t_\t0\tdep\t_\t{misc}")
    return "\n".join(lines) + "\n\n"


def test_named_persons_only_without_titles(tmp_path: Path) -> None:
    path = tmp_path / "GUM_news_example.conllu"
    path.write_text(conllu(ROWS), encoding="utf-8")
    (sentence,) = list(gum_persons.sentences(path))
    tagged = [(form, label) for form, label in sentence if label != "O"]
    # `Mayor` is a title, `Lena Berg` names a school, `her`/`aide` are no proper nouns, and the
    # abstract mention around Dr. Tom Hale does not hide the person inside it
    assert tagged == [("Ada", "B-PER"), ("Okafor", "I-PER"), ("Tom", "B-PER"), ("Hale", "I-PER")]
    assert [form for form, _ in sentence] == [form for form, _, _ in ROWS]


def test_a_mention_open_across_sentences_still_counts(tmp_path: Path) -> None:
    first = [("Kofi", "PROPN", "Entity=(1-person-new-sssss-cf1-1-coref"), ("Mensah", "PROPN", "_")]
    second = [("Annan", "PROPN", "Entity=1)"), ("spoke", "VERB", "_"), ("Lima", "PROPN", "_")]
    path = tmp_path / "GUM_bio_example.conllu"
    path.write_text(conllu(first) + conllu(second).split("\n", 2)[2], encoding="utf-8")
    labels = [[label for _, label in s] for s in gum_persons.sentences(path)]
    assert labels == [["B-PER", "I-PER"], ["B-PER", "O", "O"]]


def test_only_openly_licensed_genres_are_read(tmp_path: Path, capsys) -> None:
    for name in ("GUM_news_a", "GUM_fiction_b", "GUM_reddit_c", "GENTLE_poetry_d"):
        (tmp_path / f"{name}.conllu").write_text(conllu(ROWS, name), encoding="utf-8")
    out = tmp_path / "persons.conll"
    gum_persons.main([str(tmp_path), "--out", str(out)])
    assert "1 documents, 1 sentences, 2 persons" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").count("B-PER") == 2
