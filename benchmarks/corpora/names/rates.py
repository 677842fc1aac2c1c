"""Measurement on the names corpus: a planted name counts as found only when a finding covers it
whole; a product or a clean ticket with a finding is a false positive."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.corpora.names.corpus import NameTicket


def covered(span: tuple[int, int], text: str, findings: list[tuple[int, int]]) -> bool:
    """Every non-space character of `span` lies inside some finding (a partial cover leaks)."""
    return all(text[i].isspace() or any(s <= i < e for s, e in findings) for i in range(*span))


def overlaps(span: tuple[int, int], findings: list[tuple[int, int]]) -> bool:
    return any(s < span[1] and span[0] < e for s, e in findings)


@dataclass
class Rates:
    planted: dict[str, int] = field(default_factory=dict)
    found: dict[str, int] = field(default_factory=dict)
    products: int = 0
    products_flagged: int = 0
    flagged_products: list[str] = field(default_factory=list)
    missed: list[tuple[str, str, str]] = field(default_factory=list)  # (form, name, text)
    clean: int = 0
    clean_flagged: int = 0

    def recall(self, form: str | None = None) -> float:
        planted = self.planted.get(form, 0) if form else sum(self.planted.values())
        found = self.found.get(form, 0) if form else sum(self.found.values())
        return found / planted if planted else 1.0


def measure(tickets: list[NameTicket], findings: list[list[tuple[int, int]]]) -> Rates:
    """Recall per form, product false positives, clean tickets with any PERSON finding."""
    rates = Rates()
    for ticket, spans in zip(tickets, findings, strict=True):
        for name in ticket.names:
            rates.planted[ticket.form] = rates.planted.get(ticket.form, 0) + 1
            if covered(name, ticket.text, spans):
                rates.found[ticket.form] = rates.found.get(ticket.form, 0) + 1
            else:
                rates.missed.append((ticket.form, ticket.text[name[0] : name[1]], ticket.text))
        for product in ticket.products:
            rates.products += 1
            if overlaps(product, spans):
                rates.products_flagged += 1
                rates.flagged_products.append(ticket.text[product[0] : product[1]])
        if ticket.form == "clean":
            rates.clean += 1
            rates.clean_flagged += bool(spans)
    return rates
