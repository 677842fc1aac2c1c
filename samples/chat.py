"""Support conversations for the `chat` task, built from the ticket scenarios of
`samples.templates`.

A conversation is an optional system message and one to three user/assistant exchanges, the
assistant's reply last. The customer's turns are a scenario's ticket sentences (opening, details,
ask), with greetings, sign-offs, lower case and typos. The agent's last reply, the training target,
follows from them: an acknowledgement, a restatement of what the customer named (the scenario's
`restate`, only with values the customer gave), the fix for the customer's ask (`fix[i]` for
`ask[i]`) and a closing. PII, secrets and toxic lines are planted with the tickets' value makers
(`samples.values`) and sentences, in the system message and in both sides' turns;
`Conversation.fields` says which message holds each planted value.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from samples import templates as t
from samples import values

_EXCHANGES, _EXCHANGE_WEIGHTS = (1, 2, 3), (5, 3, 2)
_SYSTEM_RATE, _GREETING_RATE, _SIGN_OFF_RATE = 0.55, 0.6, 0.3
_LOWER_RATE, _TYPO_RATE = 0.15, 0.2  # per customer turn
# Where a planted PII value goes: the customer's turns, the agent's, the system message.
_PLACES = ("user", "user", "user", "assistant", "assistant", "system", "system")


@dataclass
class Conversation:
    """One chat record and what was planted in it."""

    record: dict[str, Any]  # {"id": ..., "messages": [{"role", "content"}, ...]}
    pii: list[tuple[str, str]] = field(default_factory=list)  # (entity type, value)
    secrets: list[tuple[str, str]] = field(default_factory=list)  # (secret kind, value)
    toxic: bool = False
    fields: dict[str, list[str]] = field(default_factory=dict)  # "messages[i].content" -> values


@dataclass
class _Turn:
    role: str
    sentences: list[str]


def _find(text: str, value: str) -> bool:
    """Whether `value` occurs in `text` as a whole token, ignoring case."""
    return re.search(rf"(?<![\w.]){re.escape(value.lower())}(?!\w)", text.lower()) is not None


def _typo(rng: random.Random, sentence: str, keep: set[str]) -> str:
    """`sentence` with one word misspelt (letters swapped, dropped or doubled); words of `keep`
    (the slot values) stay as they are."""
    words = [
        m
        for m in re.finditer(r"[A-Za-z]{4,}", sentence)
        if m.group().lower() not in keep and m.group()[0].islower()
    ]
    if not words:
        return sentence
    m = rng.choice(words)
    word, i = m.group(), rng.randrange(1, len(m.group()) - 1)
    how = rng.choice(["swap", "drop", "double"])
    if how == "swap":
        word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    elif how == "drop":
        word = word[:i] + word[i + 1 :]
    else:
        word = word[:i] + word[i] + word[i:]
    return sentence[: m.start()] + word + sentence[m.end() :]


def _noisy(rng: random.Random, sentences: list[str], keep: set[str]) -> list[str]:
    """A customer's sentences as people type them: sometimes lower case, sometimes a typo."""
    if rng.random() < _TYPO_RATE:
        i = rng.randrange(len(sentences))
        sentences[i] = _typo(rng, sentences[i], keep)
    if rng.random() < _LOWER_RATE:
        sentences = [s.lower() for s in sentences]
    return sentences


def _customer_turns(
    rng: random.Random, sc: dict[str, list], exchanges: int, ask: str
) -> list[list[str]]:
    """The customer's sentences per turn (unformatted): opening first, the ask last."""
    opening, body = rng.choice(sc["open"]), rng.sample(sc["body"], 2)
    if exchanges == 1:
        return [[opening, *body[: rng.randint(0, 2)], ask]]
    if exchanges == 2:
        first = rng.randint(0, 1)
        return [[opening, *body[:first]], [*body[first:], ask]]
    return [[opening], body[: rng.randint(1, 2)], [rng.choice(t.FOLLOW_UP_ANSWERS), ask]]


def conversation(
    rng: random.Random,
    num: int,
    *,
    pii_rate: float = 0.0,
    secret_rate: float = 0.0,
    toxic_rate: float = 0.0,
) -> Conversation:
    """Build conversation `chat-{num:06d}`; with all rates 0 it carries no PII, secret or toxic
    line."""
    sc = rng.choice(t.SCENARIOS)
    slots = {key: make(rng) for key, make in values.FACTS.items()}
    keep = {w.lower() for v in slots.values() for w in re.findall(r"[A-Za-z]+", v)}
    exchanges = rng.choices(_EXCHANGES, _EXCHANGE_WEIGHTS)[0]
    ask_index = rng.randrange(len(sc["ask"]))
    company = rng.choice(t.COMPANIES)

    turns: list[_Turn] = []
    if rng.random() < _SYSTEM_RATE:
        turns.append(_Turn("system", [rng.choice(t.SYSTEM_PROMPTS).format(company=company)]))
    customer = _customer_turns(rng, sc, exchanges, sc["ask"][ask_index])
    agent = [rng.choice(t.PROBES), rng.choice(t.FOLLOW_UPS)]
    for i, sentences in enumerate(customer):
        sentences = _noisy(rng, [s.format_map(slots) for s in sentences], keep)
        if i == 0 and rng.random() < _GREETING_RATE:
            sentences.insert(0, rng.choice(t.GREETINGS))
        if i == len(customer) - 1 and rng.random() < _SIGN_OFF_RATE:
            sentences.append(rng.choice(t.SIGN_OFFS))
        turns.append(_Turn("user", sentences))
        turns.append(_Turn("assistant", [agent[i]] if i < len(customer) - 1 else []))
    customer_text = " ".join(s for turn in turns if turn.role == "user" for s in turn.sentences)
    conv = Conversation(record={})

    # Planted values, in the customer's, the agent's or the system's words. The last reply is
    # written after the other turns, so it may repeat the customer's name or email, or sign with
    # the agent's name; what is planted in it goes in once it is written.
    planted: list[tuple[_Turn, str, str, str]] = []  # (turn, kind, value, sentence)
    if rng.random() < pii_rate:
        kinds, name = values.pii_plan(rng)
        for kind in kinds:
            value = values.pii_value(rng, kind, name)
            turn, sentence = _pii_sentence(rng, turns, kind, value)
            planted.append((turn, kind, value, sentence))
            conv.pii.append(("PERSON" if kind == "PERSON_AGENT" else kind, value))
    if rng.random() < secret_rate:
        kind = rng.choice(sorted(t.SECRET_SENTENCES))
        value = values.secret_value(rng, kind)
        role = "user"
        if kind in t.ASSISTANT_SECRET_SENTENCES and rng.random() < 0.4:
            role, sentences = "assistant", t.ASSISTANT_SECRET_SENTENCES[kind]
        else:
            sentences = t.SECRET_SENTENCES[kind]
        turn = rng.choice([x for x in turns if x.role == role])
        planted.append((turn, kind, value, rng.choice(sentences).format(v=value)))
        conv.secrets.append((kind, value))
    if rng.random() < toxic_rate:
        for line in rng.sample(t.TOXIC_LINES, 2):
            turn = rng.choice([x for x in turns if x.role == "user"])
            planted.append((turn, "TOXIC", "", line))
        conv.toxic = True
    known: dict[str, str] = {}  # values named before the last reply, by kind
    last = turns[-1]
    for turn, kind, value, sentence in planted:
        if turn is not last:
            _insert(rng, turn, kind, sentence)
            if kind in t.PII_SENTENCES:
                known.setdefault(kind, value)
    greeted = any(turn is last and kind == "PERSON" for turn, kind, _, _ in planted)
    last.sentences = _reply(rng, sc, ask_index, slots, customer_text, known, greeted)
    for turn, kind, _, sentence in planted:
        if turn is last:
            _insert(rng, turn, kind, sentence)

    messages = [{"role": x.role, "content": " ".join(x.sentences)} for x in turns]
    conv.record = {"id": f"chat-{num:06d}", "messages": messages}
    for _, value in [*conv.pii, *conv.secrets]:
        for i, message in enumerate(messages):
            if value in message["content"]:
                where = conv.fields.setdefault(f"messages[{i}].content", [])
                if value not in where:
                    where.append(value)
    return conv


def _pii_sentence(
    rng: random.Random, turns: list[_Turn], kind: str, value: str
) -> tuple[_Turn, str]:
    """The turn a PII value goes into and the sentence that carries it there."""
    place = rng.choice(_PLACES)
    if place == "system" and (turns[0].role != "system" or kind not in t.SYSTEM_PII_SENTENCES):
        place = "user"
    if place == "assistant" and kind not in t.ASSISTANT_PII_SENTENCES:
        place = "user"
    if place == "system":
        return turns[0], rng.choice(t.SYSTEM_PII_SENTENCES[kind]).format(v=value)
    candidates = [x for x in turns if x.role == place]
    if place == "user":
        turn = candidates[0] if kind == "PERSON" else rng.choice(candidates)
        return turn, rng.choice(t.PII_SENTENCES[kind])[0].format(v=value)
    return rng.choice(candidates), rng.choice(t.ASSISTANT_PII_SENTENCES[kind]).format(v=value)


def _insert(rng: random.Random, turn: _Turn, kind: str, sentence: str) -> None:
    """Put a planted sentence into a turn: a name first (after a greeting: people introduce
    themselves, agents greet by name), a system fact last, anything else anywhere but first."""
    if turn.role == "system":
        turn.sentences.append(sentence)
    elif kind in ("PERSON", "PERSON_AGENT"):
        at = 1 if turn.sentences and turn.sentences[0] in t.GREETINGS else 0
        turn.sentences.insert(at, sentence)
    else:
        turn.sentences.insert(rng.randint(1, max(1, len(turn.sentences))), sentence)


def _reply(
    rng: random.Random,
    sc: dict[str, list],
    ask_index: int,
    slots: dict[str, str],
    customer_text: str,
    known: dict[str, str],
    greeted: bool,
) -> list[str]:
    """The agent's last reply: what it says follows from the customer's turns. `greeted`: it
    already thanks the customer by name (a planted PERSON), so it needs no acknowledgement."""
    usable = [
        s
        for s in sc["restate"]
        if all(_find(customer_text, slots[k]) for k in re.findall(r"{(\w+)}", s))
    ]
    sentences = []
    if greeted:
        pass
    elif "PERSON" in known and rng.random() < 0.35:
        sentences.append(rng.choice(t.ASSISTANT_PII_SENTENCES["PERSON"]).format(v=known["PERSON"]))
    elif rng.random() < 0.8:
        sentences.append(rng.choice(t.ACKS))
    if usable:
        sentences.append(rng.choice(usable).format_map(slots))
    sentences.append(rng.choice(sc["fix"][ask_index]).format_map(slots))
    if "EMAIL_ADDRESS" in known and rng.random() < 0.3:
        sentences.append(
            t.ASSISTANT_PII_SENTENCES["EMAIL_ADDRESS"][0].format(v=known["EMAIL_ADDRESS"])
        )
    if rng.random() < 0.6:
        sentences.append(rng.choice(t.CLOSINGS))
    if "PERSON_AGENT" in known and rng.random() < 0.6:
        sentences.append(rng.choice(t.SIGNATURES).format(v=known["PERSON_AGENT"]))
    return sentences
