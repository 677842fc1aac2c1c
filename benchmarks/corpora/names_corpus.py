"""A seeded corpus for measuring person-name recall and product false positives.

Every ticket knows the character spans of the names planted in it (`names`) and of the product
names in it (`products`). Names are drawn from the Latin-script first and last names of Faker's
person providers of `LOCALES`; a name is put in a ticket in one of `FORMS` (a placement and a
surface: greeting, sign-off, question, list, all caps, lower case, possessive...). Clean tickets
(form `clean`) hold no name, only products and common words that are also names (Will, May,
Mark...).

`held_out=True` draws only names that `screening.persons.faker_names.held_out` keeps out of the recognizer's
list when it is built with `exclude_held_out=True`: recall on names the list has never seen.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from screening.persons.faker_names import held_out as is_held_out
from screening.persons.faker_names import locale_names
from screening.persons.name_words import PRODUCT_NAMES, words

LOCALES = [
    "en_US",
    "en_GB",
    "en_IN",
    "en_IE",
    "en_NZ",
    "en_KE",
    "de_DE",
    "de_AT",
    "fr_FR",
    "fr_CA",
    "es_ES",
    "es_MX",
    "it_IT",
    "pt_BR",
    "pt_PT",
    "nl_NL",
    "pl_PL",
    "sv_SE",
    "da_DK",
    "no_NO",
    "fi_FI",
    "cs_CZ",
    "sk_SK",
    "hu_HU",
    "ro_RO",
    "hr_HR",
    "sl_SI",
    "tr_TR",
    "vi_VN",
    "id_ID",
    "ja_JP",
    "zh_CN",
    "yo_NG",
    "sw",
    "zu_ZA",
    "et_EE",
    "lv_LV",
    "lt_LT",
]

_PRODUCT_WORDS = words(PRODUCT_NAMES)

# Products and brands, several of them also names somewhere (Ruby, Alexa, Jenkins, Hudson, Sage).
PRODUCTS = [
    "Azure",
    "Teams",
    "Excel",
    "Outlook",
    "Jira",
    "Slack",
    "Zoom",
    "Alexa",
    "Siri",
    "Cortana",
    "Dell",
    "Mac",
    "Ruby",
    "Jenkins",
    "Kafka",
    "Hudson",
    "Sage",
    "Oracle",
    "Ubuntu",
    "Windows",
    "Chrome",
    "Firefox",
    "Safari",
    "SharePoint",
    "OneDrive",
    "Power BI",
    "Salesforce",
    "Zendesk",
    "Okta",
    "Docker",
    "Kubernetes",
    "Redis",
    "Django",
    "Flask",
    "Pandas",
    "Grafana",
    "Splunk",
    "Tableau",
    "Confluence",
    "Trello",
    "Asana",
    "Dropbox",
    "Webex",
    "Skype",
    "Intune",
    "Android",
    "ThinkPad",
    "Lenovo",
    "Cisco",
    "Citrix",
    "Xero",
    "QuickBooks",
    "Workday",
    "ServiceNow",
    "HubSpot",
    "Stripe",
    "Shopify",
    "Twilio",
    "Heroku",
    "Nginx",
    "Apache",
    "Airflow",
    "Snowflake",
    "Databricks",
    "Terraform",
]

# Common words that are also first or last names somewhere, used as words.
WORD_SENTENCES = [
    "Will you reset my password before Monday?",
    "May I get access to the shared drive?",
    "Mark the ticket as resolved once the fix is deployed.",
    "Bill me for the annual plan, not the monthly one.",
    "Grant read access to the finance folder, please.",
    "Hope this helps, the logs are attached.",
    "I had to chase the vendor for three weeks.",
    "The invoice was due on June 3 and paid in May.",
    "Our summer sale page shows the wrong prices.",
    "The sky-blue theme rose to the top of the feedback list.",
    "Please page the on-call engineer if the queue grows.",
    "We will grant a refund if the order has not shipped.",
    "Can you mark all alerts from the staging cluster as read?",
    "The king-size monitor arrived with a dead pixel.",
    "Frost on the outdoor camera lens blurs the night view.",
    "Long waits on the phone line are hurting our rating.",
    "Young users find the onboarding flow confusing.",
    "Rich text formatting is lost when I paste from the browser.",
]
PRODUCT_SENTENCES = [
    "{p} crashes every time I open the quarterly report.",
    "After the update {p} no longer syncs with {q}.",
    "Can you reinstall {p} on my laptop?",
    "The {p} integration stopped sending notifications to {q}.",
    "We moved from {p} to {q} last month and lost some settings.",
    "{p} says my licence has expired but it was renewed.",
    "Is {p} supported on the new {q} build?",
    "Please add me to the {p} workspace.",
    "the {p} connector times out after 30 seconds.",
    "{p} and {q} both show the same error code.",
    "I get a 403 when {p} calls the {q} API.",
    "Our {p} pipeline fails at the deploy step since {q} was upgraded.",
]
FILLER = [
    "The export has been failing since Tuesday.",
    "I cannot log in to the billing portal.",
    "The invoice total does not match the order.",
    "My laptop keeps dropping the VPN connection.",
    "The dashboard shows no data for last week.",
    "Two-factor codes arrive several minutes late.",
    "The refund has not reached my account yet.",
    "Printing to the third-floor printer fails with a timeout.",
]


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


@dataclass(frozen=True)
class Person:
    first: str
    last: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


class NameSource:
    """Draws people from Faker's lists of `LOCALES` (held-out names only, or none of them)."""

    def __init__(self, rng: random.Random, held_out: bool = False) -> None:
        self.rng = rng
        self.pools: list[tuple[list[str], list[str]]] = []
        for locale in LOCALES:
            firsts, lasts = locale_names(locale)
            keep = [n for n in firsts if _simple(n) and _all_held(n) == held_out]
            keep_last = [n for n in lasts if _simple(n) and _all_held(n) == held_out]
            if held_out:  # a held-out first name may pair with any surname, and vice versa
                keep_last = keep_last or [n for n in lasts if _simple(n)]
            if keep and keep_last:
                self.pools.append((keep, keep_last))

    def person(self, pick: Callable[[str], bool] | None = None) -> Person:
        for _ in range(200):
            firsts, lasts = self.rng.choice(self.pools)
            person = Person(self.rng.choice(firsts), self.rng.choice(lasts))
            if pick is None or pick(person.full):
                return person
        return person


def _simple(name: str) -> bool:
    """One word (hyphens and apostrophes allowed), at least two letters, no product's name: a
    person called Siri or Jenkins alone is a known miss (products are never a person alone)."""
    return (
        " " not in name
        and len(name) > 1
        and "." not in name
        and name.casefold() not in _PRODUCT_WORDS
    )


def _all_held(name: str) -> bool:
    return all(is_held_out(p) for p in name.split("-"))


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


# --- measurement --------------------------------------------------------------------------------
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
