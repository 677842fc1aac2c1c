"""Azure AI Content Safety backend over real HTTP, against a local server shaped like the service."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from flows.config import ConfigError, load_config
from screening.toxicity.azure import ContentSafetyError, content_safety_scores


class _Service(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []
    throttle_next = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "key": self.headers.get("Ocp-Apim-Subscription-Key"), "body": body}
        )
        if type(self).throttle_next:
            type(self).throttle_next -= 1
            return self._reply(429, {"error": {"code": "TooManyRequests"}})
        if self.headers.get("Ocp-Apim-Subscription-Key") != "k3y":
            return self._reply(401, {"error": {"code": "InvalidSubscriptionKey"}})
        severity = 4 if "idiots" in body["text"] else 0
        self._reply(
            200,
            {
                "categoriesAnalysis": [
                    {"category": c, "severity": severity if c == "Hate" else 0}
                    for c in body["categories"]
                ]
            },
        )

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def service() -> Iterator[str]:
    _Service.requests, _Service.throttle_next = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_scores_come_from_the_worst_category_and_throttling_is_retried(
    service, monkeypatch
) -> None:
    monkeypatch.setenv("CS_KEY", "k3y")
    _Service.throttle_next = 1
    scores = content_safety_scores(
        ["Thanks for the quick fix!", "You idiots broke it again"],
        service,
        "CS_KEY",
        backoff_seconds=0.01,
    )
    assert scores == [0.0, 4 / 6]
    assert len(_Service.requests) == 3  # one throttled, then one per text
    first = _Service.requests[-1]
    assert first["path"] == "/contentsafety/text:analyze?api-version=2024-09-01"
    assert first["key"] == "k3y"
    assert first["body"]["categories"] == ["Hate", "SelfHarm", "Sexual", "Violence"]


def test_a_wrong_key_is_an_error_that_names_no_text(service, monkeypatch) -> None:
    monkeypatch.setenv("CS_KEY", "wrong")
    with pytest.raises(ContentSafetyError, match=r"401.*InvalidSubscriptionKey") as info:
        content_safety_scores(["my email is ann@example.com"], service, "CS_KEY")
    assert "ann@example.com" not in str(info.value)


def test_a_missing_key_or_endpoint_is_reported(monkeypatch) -> None:
    monkeypatch.delenv("CS_KEY", raising=False)
    with pytest.raises(ContentSafetyError, match=r"\$CS_KEY"):
        content_safety_scores(["x"], "http://127.0.0.1:9", "CS_KEY")
    with pytest.raises(ConfigError, match=r"needs toxicity\.endpoint"):
        load_config(None, ["screen.toxicity.backend=azure-content-safety"])


# --- The toxicity screen on text written by others (benchmarks/corpora, docs/benchmarks.md) ----

EXTERNAL = Path(__file__).resolve().parents[2] / "benchmarks" / "corpora"


def _slice(name: str, n: int) -> list[dict[str, Any]]:
    """n records spread over the test half of a corpus (never tuned on)."""
    with (EXTERNAL / f"{name}.jsonl").open(encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r["split"] == "test"]
    step = max(1, len(records) // n)
    return [{"id": r["id"], "messages": r["messages"]} for r in records[::step][:n]]


def _toxicity_outcomes(
    records: list[dict[str, Any]], reasons: dict[str, str] | None = None
) -> tuple[set[str], set[str]]:
    """Ids dropped and ids flagged by the default policy on toxicity alone: the screen's
    toxicity scores (`scan._toxicity`) through `apply_policy`, no personal-data findings (the
    Presidio pass would cost more than all the rest and decides nothing about toxicity).
    `reasons` receives each dropped record's reason."""
    from screening.config import ScreenConfig
    from screening.policy import apply_policy
    from screening.scan import _toxicity, worst

    config = ScreenConfig()
    texts = [m["content"] for r in records for m in r["messages"]]
    scores = iter(_toxicity(texts, config.toxicity))
    dropped, flagged = set(), set()
    for record in records:
        fields = {f"messages[{i}].content": [] for i in range(len(record["messages"]))}
        score, why = worst(next(scores) for _ in record["messages"])
        outcome = apply_policy("chat", record, fields, score, config, toxicity_why=why)
        if outcome.reason:
            dropped.add(record["id"])
            if reasons is not None:
                reasons[record["id"]] = outcome.reason
        elif outcome.flagged:
            flagged.add(record["id"])
    return dropped, flagged


def test_everyday_dialogue_and_code_are_kept_and_clear_abuse_is_dropped() -> None:
    everyday = (
        _slice("everyday_topical_chat", 10)  # whole conversations, ~21 turns each
        + _slice("everyday_convabuse_clean", 100)
        + _slice("code_chat", 40)
    )
    toxic = _slice("toxic_convabuse_strong", 50) + _slice("toxic_davidson_hate", 50)
    dropped, flagged = _toxicity_outcomes(everyday + toxic)
    everyday_ids, toxic_ids = {r["id"] for r in everyday}, {r["id"] for r in toxic}
    assert len(dropped & everyday_ids) <= 0.005 * len(everyday_ids), dropped & everyday_ids
    # Measured on the whole test halves: 87.3% and 92.6% dropped (docs/benchmarks.md).
    assert len(dropped & toxic_ids) >= 0.85 * len(toxic_ids)
    assert len((dropped | flagged) & toxic_ids) >= 0.9 * len(toxic_ids)


def test_code_is_not_read_as_prose_and_the_middle_band_is_flagged() -> None:
    def chat(rid: str, *turns: str) -> dict[str, Any]:
        roles = ("user", "assistant")
        return {
            "id": rid,
            "messages": [{"role": roles[i % 2], "content": t} for i, t in enumerate(turns)],
        }

    records = [
        chat(
            "fence",
            "How do I stop the stuck job?",
            "Find its process id first:\n```sh\nps aux | grep worker\nkill -9 $(pgrep -f worker)\n"
            "rm -rf /tmp/worker-*\n```\nThen run `kill -HUP 1` to reload.",
        ),
        chat("code-lines", "Why does this fail?\nif (dead) { killChild(); }\nreturn suck(x);"),
        chat("sick", "I was sick.", "Sorry to hear that. I hate this raincoat."),
        chat("mild", "What a stupid rule!", "Are you stupid?"),
        chat("slur", "Thanks.", "Get lost, you faggot."),
        chat("threat", "I will find you and I'll slit your throat"),
        chat("prose-beside-code", "```py\nprint(1)\n```\nYou fucking morons broke it again."),
    ]
    dropped, flagged = _toxicity_outcomes(records)
    assert dropped == {"slur", "threat", "prose-beside-code"}
    assert "mild" in flagged  # the middle band: kept, counted, shown to the reviewer
    assert not {"fence", "code-lines"} & (dropped | flagged)
    assert "sick" not in dropped  # `I was sick.` 0.90, `I hate this raincoat.` 0.91: flagged


def test_the_toxicity_config_keeps_old_fields_and_names_a_bad_one() -> None:
    old = load_config(None, ["screen.toxicity.threshold=0.8", "screen.toxicity.action=drop"])
    assert old.screen.toxicity.decide(0.85) == "drop"  # an old config still drops at 0.8
    new = load_config(None, [])
    assert new.screen.toxicity.decide(0.85) == "flag" and new.screen.toxicity.decide(1.0) == "drop"
    assert new.screen.toxicity.decide(0.5) is None
    with pytest.raises(ConfigError, match=r"toxicity\.flag_threshold \(0\.9\) must not be above"):
        load_config(None, ["screen.toxicity.threshold=0.5", "screen.toxicity.flag_threshold=0.9"])
    with pytest.raises(ConfigError, match=r"screen\.toxicity\.flag_threshold"):
        load_config(None, ["screen.toxicity.flag_threshold=2"])
    off = load_config(None, ["screen.toxicity.flag_threshold=null"])
    assert off.screen.toxicity.decide(0.99) is None


@pytest.mark.parametrize(
    ("sentence", "abusive"),
    [
        ("Shut it, you stupid faggot.", True),  # slur
        ("I'm going to slit your throat tonight", True),  # threat
        ("kill yourself", True),
        ("suck my dick", True),  # sexual harassment
        ("You worthless piece of shit", True),  # insult with strong profanity
        ("Georgia Tech beat Cumberland 222-0.", False),  # words that hold a term
        ("That was a chink in their armor.", False),
        ("Homo sapiens left Africa.", False),
        ("Dick Van Dyke was in Mary Poppins.", False),
        ("I could die laughing, that game will kill you.", False),  # mild, left to the model
        ("How do I get back into my accunt?", False),  # a typo, not a term
    ],
)
def test_abusive_terms_are_abuse_in_every_use(sentence: str, abusive: bool) -> None:
    from screening.toxicity.terms import ABUSIVE, abusive_terms

    assert abusive_terms(sentence) is abusive
    assert (ABUSIVE.search(sentence) is not None) is abusive  # the word prefilter skips none


# What the last version let through, by kind (the dev halves of benchmarks/corpora and their
# kinds, reworded), and the everyday sentences the new entries must leave alone.
_ABUSE = {
    "masked": "f*ck off and take your b1tch friend with you",
    "spaced": "f u c k you",
    "symbols": "shut up you a$$hole",
    "look-alike": "you fu\u0441k off",  # a Cyrillic es for the c
    "threat-later": "I will find you and kill you",
    "threat-body": "i'm going to break your legs",
    "threat-lowercase": "kill yourself",  # was read as a shell command
    "threat-wish": "I hope you get cancer and die",
    "threat-others": "someone should shoot you",
    "insult-at-you": "you're a worthless piece of garbage",
    "insult-beast": "nobody likes you, you disgusting pig",
    "slur-at-you": "are you a dike",
    "slur-and-insult": "your brother looks so queer and ugly",
    "sexual-touch": "let me touch your breasts",  # was read as JavaScript
    "sexual-naked": "I want to see you naked",
    "identity-colored": "that bar is full of colored folks again",
    "identity-negro": "the problem with this town is some negro in charge",
    "identity-filth": "they are foreign filth and should leave",
    "identity-kill": "all muslims should be deported and shot",
    "identity-group": "whites are just evil",
}
_EVERYDAY = {
    "cake": "I'll cut you a slice of cake.",
    "email": "I'll shoot you an email tonight.",
    "not": "I will not hurt you, I promise.",
    "tomatoes": "I hope the frost doesn't kill your tomatoes.",
    "hair": "I'll cut your hair on Sunday.",
    "killing-it": "You're killing it!",
    "cracker": "Would you like a cracker with your cheese?",
    "leagues": "The Negro Leagues were founded in 1920.",
    "naacp": "She joined the National Association for the Advancement of Colored People.",
    "niger": "She was born in Niger.",
    "dike": "The Dutch built a dike to hold back the sea.",
    "cripple": "The strike could cripple the railways.",
    "ticks": "Ticks? They are parasites.",
    "lease": "You have no right to live here without a lease.",
    "surname": "Thanks, Hicks.",
    "languages": "I love C# and F#.",
    "stretched": "Wow!!! Soooo good",
    "mild-mask": 'He said "d**n" loudly.',
    "handle": "@fucktyler thanks for the follow!",
    "let-me-know": "let me know when you land",
    "code": "Stop it with:\n```sh\nkill -9 1234\n```",
}


def test_disguised_aimed_and_identity_abuse_is_dropped_and_everyday_words_are_kept() -> None:
    records = [
        {"id": rid, "messages": [{"role": "user", "content": text}]}
        for rid, text in (_ABUSE | _EVERYDAY).items()
    ]
    dropped, _ = _toxicity_outcomes(records)
    assert dropped == set(_ABUSE)


# Hate aimed at a group, and the same groups named in ordinary, warm or negated sentences
# (written for this test; the public measurement is benchmarks/toxicity.py on HateCheck).
_GROUP_HATE = {
    "hate": "Honestly I despise Hindus.",
    "vile": "Refugees are nothing but filthy vermin.",
    "lesser": "Everyone knows Asian people are lesser beings.",
    "threat": "We should shoot every immigrant on sight.",
    "modal": "Jewish people must all be executed.",
    "next": "I'm going to stab the next Arab man I see.",
    "not-worthy": "Lesbians are not worthy of respect.",
    "lives": "Christian lives are worthless.",
    "pair": "Sikhs keep coming here. I hate every single one of them.",
    "rhetorical": "Isn't it obvious that migrants are parasites?",
}
_GROUP_ORDINARY = {
    "neutral": "Many Hindus celebrate Diwali in November.",
    "warm": "Refugees like you make this city better.",
    "negated-no": "No Arab man should ever be executed.",
    "negated-never": "I would never hate Jewish people.",
    "negated-modal": "Immigrants should never be shot at a border.",
    "denied": "I don't think women are stupid at all.",
    "thing": "I despise these long Monday meetings.",
    "history": "Thousands of refugees were killed in the war.",
    "levee": "The dyke along the river was raised after the flood.",
    "meatball": "We ate faggots and peas for dinner.",
    "tool": "Grab the hoe from the garden shed.",
}


def test_hate_aimed_at_a_group_is_dropped_and_the_group_named_otherwise_is_kept() -> None:
    from screening.toxicity.group_hate import group_hate

    records = [
        {"id": rid, "messages": [{"role": "user", "content": text}]}
        for rid, text in (_GROUP_HATE | _GROUP_ORDINARY).items()
    ]
    dropped, _ = _toxicity_outcomes(records)
    assert dropped == set(_GROUP_HATE)
    assert not any(group_hate(text) for text in _GROUP_ORDINARY.values())


def test_undisguised_reads_disguises_and_leaves_plain_text_alone() -> None:
    from screening.toxicity.disguise import undisguised
    from screening.toxicity.terms import ABUSIVE, abusive_terms

    assert undisguised("you are such a b!tch") == ["you are such a bitch"]
    assert undisguised("go f*** yourself") == ["go fuck yourself"]
    assert undisguised("n****r") == ["nigger"]
    assert "fuck you" in undisguised("fuuuuck you")
    assert undisguised("I love C# and F#.") == []
    assert undisguised("This is **bold** and *it* matters") == []  # Markdown, not a mask
    # The three-letter prefilter of `abusive_terms` skips no sentence the full search matches.
    for text in (*_ABUSE.values(), *_EVERYDAY.values()):
        for variant in (text, *undisguised(text)):
            assert abusive_terms(variant) or not ABUSIVE.search(variant), variant


# --- The learned classifier (screening/data/toxicity_classifier.npz) -----------------------------
# Sentences written for this test, not taken from any corpus.
_INSULTS = {  # no abusive term holds them: the classifier drops them
    "clown": "you ugly ass clown",
    "idiot": "shut up idiot",
}
_KEPT = {  # everyday complaints, illness, mild insults, code: kept (flagged at most)
    "flu": "I was sick all week with the flu.",
    "landlord": "My landlord is an idiot who never fixes anything.",
    "printer": "This printer is garbage, I hate it.",
    "tired": "Are you stupid or just tired?",
    "keys": "I feel like an idiot for forgetting my keys.",
    "chess": "I'm such a loser at chess.",
    "back": "My back is killing me.",
    "slow": "Why is this code so damn slow?",
    "fence": "Stop the stuck worker:\n```sh\nkill -9 $(pgrep -f worker)\n```",
}


def test_the_classifier_drops_insults_no_term_holds_and_the_reason_names_it() -> None:
    records = [
        {"id": rid, "messages": [{"role": "user", "content": text}]}
        for rid, text in (_INSULTS | _KEPT | {"term": "what an ugly bitch"}).items()
    ]
    reasons: dict[str, str] = {}
    dropped, _ = _toxicity_outcomes(records, reasons)
    assert dropped == {*_INSULTS, "term"}
    assert reasons["term"] == "toxicity 1.00 >= 1.0 (abusive term)"
    for rid in _INSULTS:
        assert re.fullmatch(r"toxicity 1\.00 >= 1\.0 \(classifier 0\.\d\d\)", reasons[rid])


def test_the_shipped_classifier_loads_from_the_package_and_is_switched_off_by_config() -> None:
    import tomllib

    from screening.toxicity.classifier import CLASSIFIER, CLASSIFIER_FEATURES, abuse_classifier
    from screening.toxicity.score import local_toxicity

    root = Path(__file__).resolve().parents[2]
    package_data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert (
        CLASSIFIER.relative_to(root / "screening").as_posix()
        in package_data["package-data"]["screening"]
    )
    learned = abuse_classifier()
    assert learned.weights.shape == (2 * CLASSIFIER_FEATURES,)
    assert 0.5 <= learned.drop_at < 1.0
    clown, flu = learned.probabilities([_INSULTS["clown"], _KEPT["flu"]])
    assert clown >= learned.drop_at > flu
    on, off = local_toxicity([_INSULTS["clown"]]), local_toxicity([_INSULTS["clown"]], False, False)
    assert on[0].score == 1.0 and off[0].score < 1.0 and off[0].why == "model"


# --- Swearing: aimed at someone it is abuse, among friends it is talk -----------------------------
# Sentences written for this test. Friends swear at a game table or over a beer (CRD3's table
# talk: 22.2% of its records were dropped for it); an expletive aimed at a person, at a group or
# with an insult is abuse as before.
_SWEARING_AMONG_FRIENDS = {
    "oh": "Oh fuck, the dragon is awake.",
    "cool": "That is pretty fucking cool, I love it.",
    "bored": "I'm bored as shit, let's roll initiative.",
    "plane": "We can't go, we don't own a private fucking plane.",
    "what": "What the fuck is that thing in the well?",
    "monster": "Hit that motherfucker with the hammer again!",
    "luggage": "All of our shit is still on the boat.",
    "prick": "Prick your finger and let a drop fall on the map.",
}
_SWEARING_AT_SOMEONE = {
    "at-you": "fuck you, I'm done talking to a machine",
    "off": "just fuck off already",
    "call": "give me back my phone, asshole",
    "you-are": "you're a lying bastard and everyone knows it",
    "of-her": "his sister is such a total prick",
    "group": "most refugees are absolute scumbags",
    "group-expletive": "Muslims should get the fuck out of this town.",
    "names": "This app crashed again, fix your shit, you morons.",
    "intensified": "what a fucking imbecile",
    "shut-up": "shut the fuck up",
    "alone": "Bastard!",
    "proposition": "do you want to fuck me",
}


def test_swearing_among_friends_is_kept_and_swearing_at_someone_dropped() -> None:
    from screening.toxicity.terms import ABUSIVE, abusive_terms

    records = [
        {"id": rid, "messages": [{"role": "user", "content": text}]}
        for rid, text in (_SWEARING_AMONG_FRIENDS | _SWEARING_AT_SOMEONE).items()
    ]
    dropped, flagged = _toxicity_outcomes(records)
    assert dropped == set(_SWEARING_AT_SOMEONE)
    # kept, but the model still reads strong words: most go to the reviewer as flagged
    assert len(flagged & set(_SWEARING_AMONG_FRIENDS)) >= len(_SWEARING_AMONG_FRIENDS) // 2
    for text in _SWEARING_AT_SOMEONE.values():
        assert abusive_terms(text), text
    for text in _SWEARING_AMONG_FRIENDS.values():  # the classifier read them without the words
        assert not abusive_terms(text) and not ABUSIVE.search(text), text


def test_words_that_are_also_slurs_or_sexual_terms_stay_in_their_other_senses() -> None:
    """The Scunthorpe cases of the term list: a degree's Latin, a kitchen-cum-diner, spick and
    span, a pussy willow, the ignition timing retarded, a Maine Coon, a British cigarette, a
    gearbox's fluid; the same words as abuse still count."""
    from screening.toxicity.terms import abusive_terms

    for text in (
        "She graduated summa cum laude from Leiden in 2019.",
        "BSc, magna cum laude; MSc cum laude.",
        "Take the forecast cum grano salis.",
        "The flat has a kitchen-cum-diner and a study-cum-guest-room.",
        "Spick and span, the kitchen shone; Spic & Span did the floor.",
        "She bought a pussy willow for the vase.",
        "Retard the ignition timing by two degrees; cold retards growth.",
        "The retarded potential of a moving charge.",
        "Our Maine Coon cat and the neighbour's coon dog.",
        "I'm just going out for a fag; back after my fag break.",
        "The tranny fluid needs changing before the trip.",
    ):
        assert not abusive_terms(text), text
    for text in (
        "send me a pic, I want to cum on you",
        "what a cum slut",
        "go home, you dirty spic",
        "show me your pussy",
        "you retard",
        "what a retarded idea",
        "go back, coon",
        "you fag",
        "look at that tranny",
    ):
        assert abusive_terms(text), text


def test_advice_against_self_harm_and_dyed_hair_are_no_threats() -> None:
    from screening.toxicity.terms import abusive_terms

    for text in (
        "Do not kill yourself and do not kill others, either.",
        "Don't kill yourself over a deadline.",
        "Kelsey you should die your hair the colour it was.",
    ):
        assert not abusive_terms(text), text
    for text in ("go kill yourself", "Why don't you just kill yourself?", "you should just die"):
        assert abusive_terms(text), text
