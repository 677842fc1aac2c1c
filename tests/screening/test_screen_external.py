"""Issue 23's targets on a fixed slice of the external corpora (benchmarks/corpora/).

The slice is drawn from the `dev` halves only: for each labelled type the first records holding
it, taken from each corpus in turn, and the first clean ones, at most 150 records. They go
through the default screen in-process (ingest's validation + `screening.scan.screen_records`,
the policy of `tunegate screen`; benchmarks/corpora/measure.py), once per module. Types the detectors do not
reach yet are strict xfails: when one is reached its test fails, and the marker comes off.
`benchmarks/screen_external.py` prints the same figures on the whole corpora.
"""

from __future__ import annotations

import re
from itertools import zip_longest
from typing import Any

import pytest

from benchmarks.corpora.measure import CORPORA, MAX_LEFT, MIN_KEPT, Measured, load, run

PER_TYPE = {  # records per labelled type in the slice (capped by what the dev halves hold)
    "PERSON": 20,
    "STREET_ADDRESS": 20,
    "PHONE_NUMBER": 20,
    "CREDIT_CARD": 20,
    "EMAIL_ADDRESS": 6,
    "IBAN_CODE": 8,
    "US_SSN": 2,
    "IP_ADDRESS": 8,
    "CREDENTIAL": 40,
}
CLEAN = 10


def _slice() -> list[dict[str, Any]]:
    corpora = [load(name, "dev") for name in CORPORA]
    chosen: dict[str, dict[str, Any]] = {}
    for kind, n in PER_TYPE.items():
        holding = [[r for r in c if any(s["type"] == kind for s in r["spans"])] for c in corpora]
        chosen.update((r["id"], r) for r in _round_robin(holding)[:n])
    clean = _round_robin([[r for r in c if r["clean"]] for c in corpora])
    chosen.update((r["id"], r) for r in clean[:CLEAN])
    return list(chosen.values())


def _round_robin(lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The first record of each list, then the second of each, ...: every source in the slice."""
    return [r for row in zip_longest(*lists) for r in row if r is not None]


@pytest.fixture(scope="module")
def measured() -> Measured:
    return run(_slice())


def _xfail(reason: str) -> Any:
    return pytest.mark.xfail(strict=True, reason=reason)


# Issue 23's items and what the slice measured on the detectors of the day. Since web text and
# news joined the names (`uner-en`, 2026-12-01) the slice holds 29 names and leaves one (`then Faz
# will be able to help`: a name no list holds, which the reader scores low); the whole dev half
# leaves 36 of 769 (4.7%, bound 2%: `benchmarks/screen_external.py --split dev`).
LEFT_TODAY: dict[str, Any] = {
    "PERSON": _xfail("names of web text the reader misses: 1 of the slice's 29 (issue 45)"),
}


def test_slice_is_small_and_holds_every_type() -> None:
    records = _slice()
    assert len(records) <= 150
    assert {s["type"] for r in records for s in r["spans"]} == set(PER_TYPE)
    assert all(r["split"] == "dev" for r in records)


@pytest.mark.parametrize("kind", [pytest.param(k, marks=LEFT_TODAY.get(k, ())) for k in PER_TYPE])
@pytest.mark.slow
def test_values_left_whole_within_target(measured: Measured, kind: str) -> None:
    count = measured.types[kind]
    assert count.left_rate <= MAX_LEFT[kind], (
        f"{count.left_whole} of {count.values} {kind} values left whole in kept records: "
        f"{count.left_examples[:5]}"
    )


def test_handles_are_written_as_people_write_them() -> None:
    """The tweets' `@handle` and `#tag` stand as written, not as the tokenizer's `@ handle`,
    and an underscore inside a name too (`@md_addam`, not `@md _ addam`)."""
    texts = [r["text"] for r in load("wnut17")]
    assert sum("@" in t for t in texts) > 50 and sum("_" in t for t in texts) > 20
    assert not any(re.search(r"(?:^|\s)[@#] \w", t) for t in texts)
    assert not any(re.search(r"[@A-Za-z0-9] _ [A-Za-z0-9]", t) for t in texts)


def test_records_kept(measured: Measured) -> None:
    assert measured.kept_rate >= MIN_KEPT, f"kept {measured.kept} of {measured.records}"


def test_kept_qa_answers_at_their_offsets(measured: Measured) -> None:
    assert measured.qa_kept > 0
    assert measured.qa_misplaced == 0


ADDRESS_CORPORA = ("usaddress", "libpostal", "usaddress-us50", "pyap", "opencage", "pelias")


def test_address_corpora_are_split_and_labelled_in_place() -> None:
    """Each address corpus of others: both halves present, every value at its offsets."""
    for name in ADDRESS_CORPORA:
        records = load(name)
        assert {r["split"] for r in records} == {"dev", "test"}, name
        for r in records:
            for s in r["spans"]:
                assert s["type"] == "STREET_ADDRESS"
                assert r["text"][s["start"] : s["end"]] == s["value"], r["id"]


def test_product_lines_of_an_address_parser_are_no_addresses() -> None:
    """pyap's negative cases (`3 STRUCTURE WITH PE`: a quantity, capitals and two letters that
    are also a state's), dev half: no address found at the screen's 0.5."""
    from screening.finders.addresses import find_addresses

    clean = [r["text"] for r in load("pyap", "dev") if r["clean"]]
    assert len(clean) >= 5
    found = {t: [s for s in find_addresses(t) if s.score >= 0.5] for t in clean}
    assert not any(found.values()), found


def test_the_dev_only_address_corpus_holds_no_line_of_another() -> None:
    """usaddress's other training lines (`usaddress-training`) are dev only, and none of their
    texts or street values is a text or value of an address corpus with a test half."""
    from benchmarks.corpora.readers.usaddress import plain

    extra = load("usaddress-training")
    assert len(extra) > 1000 and {r["split"] for r in extra} == {"dev"}
    others = {
        plain(x)
        for name in ADDRESS_CORPORA
        for r in load(name)
        for x in (r["text"], *(s["value"] for s in r["spans"]))
    }
    mine = {plain(x) for r in extra for x in (r["text"], r["spans"][0]["value"])}
    assert not mine & others


_IOB2 = """# newdoc id = email-enronsent01_01
# sent_id = email-enronsent01_01-0001
# text = Thanks, Debra Perlingiere will call.
1\tThanks\tO\t-\t-
2\t,\tO\t-\t-
3\tDebra\tB-PER\t-\tstephen
4\tPerlingiere\tI-PER\t-\tstephen
5\twill\tO\t-\t-
6\tcall\tO\t-\t-
7\t.\tO\t-\t-

# sent_id = email-enronsent01_01-0002
# text = Houston isn't far.
1\tHouston\tB-LOC\t-\tstephen
2\tis\tO\t-\t-
3\tn't\tO\t-\t-
4\tfar\tO\t-\t-
5\t.\tO\t-\t-

# newdoc id = reviews-000001
# sent_id = reviews-000001-0001
# text = Great food in Tampa Bay!
1\tGreat\tO\t-\t-
2\tfood\tO\t-\t-
3\tin\tO\t-\t-
4\tTampa\tB-LOC\t-\tstephen
5\tBay\tI-LOC\t-\tstephen
6\t!\tO\t-\t-
"""


def test_universal_ner_runs_keep_the_text_as_written(tmp_path) -> None:
    """UNER's sentences are joined per document as the treebank wrote them (`isn't`, not
    `is n't`); a PER entity is one PERSON span at its place, LOC and ORG are no value; EWT's
    own files give the split; a document without a person is a clean record."""
    from benchmarks.corpora.readers.uner import uner_records

    for split in ("dev", "test"):
        (tmp_path / f"en_ewt-ud-{split}.iob2").write_text(_IOB2)
    records = uner_records(tmp_path, None, 10, 10)
    assert [r["split"] for r in records] == ["dev", "dev", "test", "test"]
    named, clean = records[0], records[1]
    assert named["text"] == "Thanks, Debra Perlingiere will call. Houston isn't far."
    assert [(s["type"], s["value"]) for s in named["spans"]] == [("PERSON", "Debra Perlingiere")]
    assert not named["clean"]
    assert clean["text"] == "Great food in Tampa Bay!" and clean["clean"] and not clean["spans"]


def test_the_web_text_corpus_is_split_as_its_treebank() -> None:
    """`uner-en`: both halves, names in e-mails, reviews and news, every value in place."""
    records = load("uner-en")
    assert {r["split"] for r in records} == {"dev", "test"}
    names = [s for r in records for s in r["spans"]]
    assert len(names) > 1000 and {s["type"] for s in names} == {"PERSON"}
    for r in records:
        for s in r["spans"]:
            assert r["text"][s["start"] : s["end"]] == s["value"], r["id"]
