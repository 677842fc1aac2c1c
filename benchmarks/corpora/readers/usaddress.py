"""Readers of datamade/usaddress's hand-labelled addresses: the `usaddress` and `usaddress-us50`
corpora, and the dev-only `usaddress-training` corpus that keeps out every line of the others."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from benchmarks.corpora.measure import load
from benchmarks.corpora.readers.records import record, sample

# --- datamade/usaddress: its hand-labelled training addresses --------------------------------

STREET_TAGS = ("AddressNumber", "StreetName", "Occupancy", "USPSBox", "Subaddress", "Building")


def usaddress_lines(
    path: Path, n: int, source: str = "usaddress", exclude: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Each labelled address as one line; the street address is its run of street-level tokens
    (number, street, suite, PO box; not the city, state or ZIP), only where it has a number.
    Lines in `exclude` (another corpus's texts) are left out before sampling."""
    out: list[dict[str, Any]] = []
    nodes = [node for node in ET.parse(path).getroot() if _xml_line(node) not in exclude]
    if exclude:  # and each line once
        nodes = [
            node for i, node in enumerate(nodes) if _xml_line(node) not in map(_xml_line, nodes[:i])
        ]
    for node in sample(nodes, n, source):
        text, start, end, numbered = "", None, None, False
        for token in node:
            if text:
                text += " "
            value = (token.text or "").strip()
            if token.tag.startswith(STREET_TAGS):
                start = len(text) if start is None else start
                end = len(text) + len(value.rstrip(","))
                numbered |= token.tag in ("AddressNumber", "USPSBoxID")
            text += value
        if start is None or not numbered:
            continue
        span = {"type": "STREET_ADDRESS", "value": text[start:end], "start": start, "end": end}
        out.append(record(source, len(out), text, [span]))
    return out


def _xml_line(node: ET.Element) -> str:
    """A labelled address's tokens joined by spaces (the text `usaddress_lines` writes)."""
    return " ".join((token.text or "").strip() for token in node)


def usaddress_us50(path: Path, training: Path, n: int) -> list[dict[str, Any]]:
    """usaddress's other hand-labelled test file, `us50_test_tagged.xml` (business addresses of
    the 50 states), as `usaddress_lines` reads it; the lines its `training/labeled.xml` also
    holds (the `usaddress` corpus samples that file) are left out, so no line is in both."""
    seen = frozenset(_xml_line(node) for node in ET.parse(training).getroot())
    return usaddress_lines(path, n, "usaddress-us50", seen)


# usaddress's training files beside `labeled.xml`'s sample: messy US lines to tune on, no test half.
USADDRESS_TRAINING = (
    "labeled.xml",
    "us50_train_tagged.xml",
    "us50_messiest_manual_label.xml",
    "multi_word_state_addresses.xml",
)
ADDRESS_CORPORA = ("usaddress", "libpostal", "usaddress-us50", "pyap", "opencage", "pelias")


def usaddress_training(folder: Path, n: int, corpora: Path) -> list[dict[str, Any]]:
    """Dev-only records (every `split` is `dev`) from usaddress's `training/` files: the lines
    of `labeled.xml` the `usaddress` corpus did not sample (its `n`), and every line of the
    other labelled files, each once, as written (the text between tags kept: `Road# 1,
    Kenai`), its street part as `usaddress_lines` takes it. Left out, so that nothing here is
    a test value: a line whose text (or street part), spaces and case aside, is a text or a
    labelled value of any record of the address corpora already written in `corpora`."""
    taken: set[str] = set()
    for name in ADDRESS_CORPORA:
        for r in load(name, None, corpora):
            taken.add(plain(r["text"]))
            taken.update(plain(s["value"]) for s in r["spans"])
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in USADDRESS_TRAINING:
        nodes = list(ET.parse(folder / name).getroot())
        if name == "labeled.xml":  # the usaddress corpus's sample of this file
            sampled = {id(node) for node in sample(nodes, n, "usaddress")}
            nodes = [node for node in nodes if id(node) not in sampled]
        for node in nodes:
            text, start, end, numbered = (node.text or "").lstrip(), None, None, False
            for token in node:
                value = (token.text or "").strip()
                at = len(text)
                text += value
                if token.tag.startswith(STREET_TAGS):
                    start = at if start is None else start
                    end = at + len(value.rstrip(","))
                    numbered |= token.tag in ("AddressNumber", "USPSBoxID")
                text += re.sub(r"\s+", " ", token.tail or "") if token is not node[-1] else ""
            text = text.strip()
            if start is None or not numbered or plain(text) in seen:
                continue
            seen.add(plain(text))
            value = text[start:end]
            if plain(text) in taken or plain(value) in taken:
                continue
            span = {"type": "STREET_ADDRESS", "value": value, "start": start, "end": end}
            out.append(record("usaddress-training", len(out), text, [span], split="dev"))
    return out


def plain(text: str) -> str:
    """A text with its case, spaces and punctuation left out, for comparing lines."""
    return re.sub(r"[\W_]+", "", text.lower())
