"""The names corpus's tickets: each form places a person's name (or, `clean`, none) in a ticket
and records the spans of the names and products it wrote; `generate` draws a seeded corpus."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.corpora.names.people import NameSource
from benchmarks.corpora.names.words import (
    FILLER,
    PRODUCT_SENTENCES,
    PRODUCTS,
    WORD_SENTENCES,
)


@dataclass
class NameTicket:
    """One ticket: its text, how its names are placed, and the spans of names and products."""

    text: str
    form: str
    names: list[tuple[int, int]] = field(default_factory=list)
    products: list[tuple[int, int]] = field(default_factory=list)


class _Builder:
    """Appends text pieces and remembers where the name and product pieces landed."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.names: list[tuple[int, int]] = []
        self.products: list[tuple[int, int]] = []

    def add(self, piece: str, kind: str | None = None) -> _Builder:
        if kind == "name":
            self.names.append((self.length, self.length + len(piece)))
        elif kind == "product":
            self.products.append((self.length, self.length + len(piece)))
        self.parts.append(piece)
        self.length += len(piece)
        return self

    def fill(self, template: str, values: dict[str, tuple[str, str | None]]) -> _Builder:
        """`template` with {key} replaced by values[key] = (text, kind)."""
        rest = template
        while "{" in rest:
            before, _, tail = rest.partition("{")
            key, _, rest = tail.partition("}")
            self.add(before)
            text, kind = values[key]
            self.add(text, kind)
        return self.add(rest)

    def ticket(self, form: str) -> NameTicket:
        return NameTicket("".join(self.parts), form, self.names, self.products)


def _lower(text: str) -> str:
    """Lower case as people type it: "İlkbahar" becomes "ilkbahar" (no combining dot)."""
    return text.lower().replace("i\u0307", "i")


def _case(rng: random.Random, text: str, weights=(6, 2, 1)) -> str:
    how = rng.choices(["as is", "lower", "upper"], weights=weights)[0]
    return _lower(text) if how == "lower" else text.upper() if how == "upper" else text


def _n(text: str) -> tuple[str, str]:
    return text, "name"


def _p(text: str) -> tuple[str, str]:
    return text, "product"


# --- forms --------------------------------------------------------------------------------------
def _greeting(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    who = r.choice([p.first, p.first, p.full])
    hello = r.choice(
        [
            "Hi {n},",
            "Hello {n},",
            "hi {n}",
            "Hey {n} -",
            "Dear {n},",
            "Good morning {n},",
            "Hi {n}!",
        ]
    )
    return (
        _Builder()
        .fill(hello, {"n": _n(_case(r, who))})
        .add("\n" + r.choice(FILLER) + " " + r.choice(FILLER))
        .ticket("greeting")
    )


def _sign_off(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    who = r.choice([p.first, p.first, p.full])
    end = r.choice(
        [
            "Thanks,\n{n}",
            "Best regards,\n{n}",
            "Cheers, {n}",
            "Regards,\n\n{n}",
            "Thank you!\n{n}",
            "-- {n}",
            "Kind regards\n{n}\n",
        ]
    )
    return (
        _Builder()
        .add(r.choice(FILLER) + " " + r.choice(FILLER) + "\n\n")
        .fill(end, {"n": _n(_case(r, who, (5, 3, 1)))})
        .ticket("sign-off")
    )


def _question(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    q = r.choice(
        [
            "did {n} approve it?",
            "Has {n} seen the new invoice yet?",
            "Can {n} confirm the delivery address?",
            "Why was {n} charged twice?",
            "Is {n} still the account owner?",
            "Should {n} get admin rights too?",
        ]
    )
    return _Builder().add(r.choice(FILLER) + " ").fill(q, {"n": _n(p.full)}).ticket("question")


def _list(r: random.Random, src: NameSource) -> NameTicket:
    people = [src.person() for _ in range(r.randint(2, 4))]
    names = [r.choice([p.first, p.full, p.full]) for p in people]
    b = _Builder().add(r.choice(FILLER) + "\n")
    b.add(r.choice(["cc: ", "CC: ", "Attendees: ", "Looping in ", "Approvers: "]))
    for i, name in enumerate(names):
        if i:
            b.add(" and " if i == len(names) - 1 and r.random() < 0.6 else ", ")
        b.add(name, "name")
    return b.ticket("list")


def _all_caps(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    t = r.choice(
        [
            "PLEASE ASK {n} TO CALL ME BACK, THE EXPORT IS STILL BROKEN.",
            "URGENT: {n} CANNOT LOG IN SINCE THE UPDATE.",
            "HI {f}, THE INVOICE IS WRONG AGAIN.",
            "THIS IS {n}, MY ORDER NEVER ARRIVED.",
        ]
    )
    return (
        _Builder().fill(t, {"n": _n(p.full.upper()), "f": _n(p.first.upper())}).ticket("all-caps")
    )


def _lower_case(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    t = r.choice(
        [
            "can you ask {n} about the refund?",
            "my manager {n} says the report is wrong",
            "spoke to {f} yesterday but nothing changed",
            "this is {n}, i still can't log in",
            "{n} from accounting needs access too",
            "assigned to {n} last week, no reply",
        ]
    )
    return (
        _Builder().fill(t, {"n": _n(_lower(p.full)), "f": _n(_lower(p.first))}).ticket("lower-case")
    )


def _punctuated(r: random.Random, src: NameSource) -> NameTicket:
    """Names with hyphens, apostrophes or accents."""
    p = src.person(lambda n: "-" in n or "'" in n or not n.isascii())
    kind = r.random()
    if kind < 0.3:
        q = src.person()
        name = f"{p.first} {p.last}-{q.last}"
    elif kind < 0.5:
        q = src.person()
        name = f"{p.first}-{q.first} {p.last}"
    elif kind < 0.65:
        name = f"{p.first} O'{p.last}"
    else:
        name = p.full
    t = r.choice(
        [
            "My colleague {n} reported the outage.",
            "{n} cannot open the shared folder.",
            "The order was placed by {n} on Friday.",
        ]
    )
    return _Builder().fill(t, {"n": _n(name)}).ticket("hyphen-apostrophe-accent")


def _mention(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    handle = r.choice(
        [
            p.first,
            _lower(p.first),
            _lower(f"{p.first}.{p.last}"),
            _lower(f"{p.first}_{p.last}"),
            f"{p.first}{'.'}{p.last}",
        ]
    )
    t = r.choice(
        [
            "@{h} can you take a look?",
            "Assigning to @{h} for review.",
            "thanks @{h}, that fixed it",
            "{x} ping @{h} when done.",
        ]
    )
    return _Builder().fill(t, {"h": _n(handle), "x": (r.choice(FILLER), None)}).ticket("mention")


def _email_like(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    local = r.choice(
        [f"{p.first}.{p.last}", _lower(f"{p.first}.{p.last}"), _lower(f"{p.first}_{p.last}")]
    )
    domain = r.choice(["contoso.com", "example.org", "fabrikam.net"])
    if r.random() < 0.5:
        t = "From: {n} <{l}@" + domain + ">\n" + r.choice(FILLER)
    else:
        t = r.choice(FILLER) + " Please reply to {l}@" + domain + " instead."
    return _Builder().fill(t, {"n": _n(p.full), "l": _n(local)}).ticket("email-like")


def _title(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    title = r.choice(["Mr", "Mr.", "Ms", "Mrs.", "Dr", "Dr.", "Prof."])
    who = r.choice([p.last, p.last, p.full])
    t = r.choice(
        [
            "{t} {n} asked for a copy of the contract.",
            "Please forward this to {t} {n}.",
            "I spoke with {t} {n} on the phone.",
        ]
    )
    return _Builder().fill(t, {"t": (title, None), "n": _n(who)}).ticket("title")


def _possessive(r: random.Random, src: NameSource) -> NameTicket:
    p = src.person()
    who = r.choice([p.first, p.first, p.full])
    t = r.choice(
        [
            "{n}{s} laptop will not boot.",
            "I reset {n}{s} password but it fails again.",
            "Please copy {n}{s} settings to the new account.",
        ]
    )
    return (
        _Builder()
        .fill(t, {"n": _n(who), "s": (r.choice(["'s", "'s", "\u2019s"]), None)})
        .ticket("possessive")
    )


def _in_sentence(r: random.Random, src: NameSource) -> NameTicket:
    """A lone first name or full name in running text, after 'ask', 'from', 'by' or first."""
    p = src.person()
    who = r.choice([p.first, p.full])
    t = r.choice(
        [
            "{n} approved the purchase order yesterday.",
            "Could you ask {n} whether the refund went out?",
            "I got an email from {n} about the renewal.",
            "The change was made by {n} without a ticket.",
            "According to {n}, the migration is finished.",
            "I talked to {n} and {m} about the outage.",
        ]
    )
    q = src.person()
    return _Builder().fill(t, {"n": _n(who), "m": _n(q.first)}).ticket("in-sentence")


def _fields(r: random.Random, src: NameSource) -> NameTicket:
    p, q = src.person(), src.person()
    t = "Requester: {n}\nAssignee: {m}\nSubject: " + r.choice(FILLER)
    return (
        _Builder()
        .fill(t, {"n": _n(p.full), "m": _n(r.choice([q.first, q.full]))})
        .ticket("form-fields")
    )


def _clean(r: random.Random, src: NameSource) -> NameTicket:
    b = _Builder()
    for i in range(r.randint(2, 4)):
        if i:
            b.add(" ")
        if r.random() < 0.6:
            a, c = r.sample(PRODUCTS, 2)
            b.fill(r.choice(PRODUCT_SENTENCES), {"p": _p(a), "q": _p(c)})
        else:
            b.add(r.choice(WORD_SENTENCES))
    return b.ticket("clean")


FORMS: dict[str, Callable[[random.Random, NameSource], NameTicket]] = {
    "greeting": _greeting,
    "sign-off": _sign_off,
    "question": _question,
    "list": _list,
    "all-caps": _all_caps,
    "lower-case": _lower_case,
    "hyphen-apostrophe-accent": _punctuated,
    "mention": _mention,
    "email-like": _email_like,
    "title": _title,
    "possessive": _possessive,
    "in-sentence": _in_sentence,
    "form-fields": _fields,
}


def generate(
    n: int, seed: int = 0, held_out: bool = False, clean_share: float = 0.2
) -> list[NameTicket]:
    """`n` tickets: forms in turn (so every form is equally present), a `clean_share` of clean
    ones; a product sentence is appended to a third of the name tickets."""
    rng = random.Random(seed)
    src = NameSource(rng, held_out)
    forms = list(FORMS.values())
    out = []
    for i in range(n):
        if rng.random() < clean_share:
            out.append(_clean(rng, src))
            continue
        ticket = forms[i % len(forms)](rng, src)
        if rng.random() < 0.33:
            a, c = rng.sample(PRODUCTS, 2)
            extra = (
                _Builder()
                .add(ticket.text + "\n")
                .fill(rng.choice(PRODUCT_SENTENCES), {"p": _p(a), "q": _p(c)})
            )
            ticket = NameTicket(
                extra.ticket(ticket.form).text, ticket.form, ticket.names, extra.products
            )
        out.append(ticket)
    return out
