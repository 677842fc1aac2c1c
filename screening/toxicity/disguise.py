"""Disguised terms read back in plain letters: `undisguised`."""

from __future__ import annotations

import re
import unicodedata

from screening.shipped import word_lists

_WORDS = word_lists("disguise_words.json")  # word lists (screening/data/disguise_words.json)

# People hide a term from a filter: `f*ck`, `b!tch`, `sh1t`, `a$$hole`, `f u c k`, `fuuuuck`,
# `fück`, a Cyrillic es (U+0441) for the c of `fuck`, a zero-width space inside a word.
# `undisguised` writes the sentence back in plain letters; only a sentence that shows one of these
# marks is rewritten.

_DISGUISE = re.compile(  # ASCII marks of a disguise (besides letters of other scripts)
    r"([a-z])(?:[0-9$!|*#@%][a-z0-9*]|[*#%]|\1\1)|(?<!\w)[$@][a-z]"
    r"|(?<!\w)[a-z][ .\-_*][a-z][ .\-_*][a-z](?!\w)",
    re.IGNORECASE,
)
_INVISIBLE = re.compile(r"[\u00ad\u200b-\u200f\u2060\ufeff]")
_LOOKALIKE = str.maketrans(  # Cyrillic and Armenian letters drawn like Latin ones
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u0261\u0410\u0415\u041e\u0420\u0421\u0425\u0406\u0408\u0405\u041a\u041c\u0422\u0412\u041d\u043a",
    "aeopcyxijsdgAEOPCXIJSKMTBHk",
)
_MIXED = re.compile(r"\w*[a-zA-Z]\w*")
_SPACED = re.compile(r"(?<!\w)(?:[a-z][ .\-_*]){2,}[a-z](?!\w)", re.IGNORECASE)
_LEET = str.maketrans("013457$!|", "oieastsii")
_SYMBOLIC = re.compile(r"[\w$!|*#@%]+")
_MASK_RUN = re.compile(r"[*#%@]+")
LETTER_RUN = re.compile(r"([a-zA-Z])\1{2,}")
# What a masked word may stand for (`f**k`, `a**hole`, `sh*t`, `n****r`): a mask never hides a
# mild word, so each is one of these.
_MASKABLE = list(_WORDS["_MASKABLE"])


def _unmask(core: str) -> str:
    """`f**k` -> `fuck`: a word with a run of `*#%@` inside or at its end, read as the one word
    of `_MASKABLE` it fits (a run of n marks inside stands for 1 to max(n, 3) letters, at the
    end for n); the word as it was when none fits."""
    parts = _MASK_RUN.split(core)
    runs = [len(r) for r in _MASK_RUN.findall(core)]
    if len(parts) < 2 or not parts[0].isalpha() or sum(map(len, parts)) + max(runs) < 4:
        return core
    pattern = re.escape(parts[0].lower())
    for run, part in zip(runs, parts[1:], strict=True):
        pattern += f"[a-z]{{1,{max(run, 3)}}}" if part else f"[a-z]{{{run}}}"
        pattern += re.escape(part.lower())
    fits = re.compile(pattern)
    return next((w for w in _MASKABLE if fits.fullmatch(w)), core)


def _plain(match: re.Match[str]) -> str:
    token = match.group()
    core = token.rstrip("!|")
    if core.isalpha() or core[:1] in "@#" or not any(c.isalpha() for c in core):
        return token  # a word, a handle, a hashtag or a number
    return _unmask(core.translate(_LEET)) + token[len(core) :]


def undisguised(sentence: str) -> list[str]:
    """The sentence in plain letters, if it shows a disguise: invisible characters dropped,
    accents and look-alike letters of other scripts (in words with Latin letters) read as Latin,
    spaced letters joined, digits and symbols inside words read as letters, masked words
    filled; and, where a letter is written three or more times, with it once and twice. Empty
    for a sentence with no disguise."""
    if sentence.isascii() and not _DISGUISE.search(sentence):
        return []
    text = _INVISIBLE.sub("", sentence)
    if not text.isascii():
        text = _MIXED.sub(lambda m: m.group().translate(_LOOKALIKE), text)
        text = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
    text = _SPACED.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group()), text)
    text = _SYMBOLIC.sub(_plain, text)
    variants = [text]
    if LETTER_RUN.search(text):
        variants += [LETTER_RUN.sub(r"\1", text), LETTER_RUN.sub(r"\1\1", text)]
    return [v for v in dict.fromkeys(variants) if v != sentence]
