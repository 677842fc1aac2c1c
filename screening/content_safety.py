"""Content safety: what the toxicity screen scores, locally or with Azure AI Content Safety.

The local backend (`local_toxicity`) scores the *prose* of a text, never its code: fenced code
blocks, inline code and lines that read as code (`prose`) are left out, because a language model
of offensive English takes `rm -rf`, `kill -9` or ```` ```sh ```` for abuse (a chat line
`kill yourself` or `let me ...` is prose, not a shell or JavaScript line). What is left is cut
into sentences, and each is scored two ways:

- **abusive terms** (`abusive_terms`): slurs, threats of violence, strong profanity and insults
  aimed at someone, sexual harassment, and calls to kill or dehumanise a group, from the lists
  below. A sentence holding one scores 1.0: it is abusive whatever the model says (the model
  scores `niglet` 0.03 and `I'll slice your throat` 0.3). A word with an innocent sense
  (`cracker`, `dike`, `colored`, `negro`, `trash`, `cut`, `shoot`) counts only in the forms that
  aim it at a person (`are you a dike`, `you stupid cracker`, `colored folks`, `I'll cut you`,
  not `a cracker with cheese`, `the Negro Leagues`, `I'll cut you a slice`). Disguised terms
  (`f*ck`, `b!tch`, `sh1t`, `f u c k`, `fück`, Cyrillic look-alikes) are read back in plain
  letters first (`undisguised`).
- **the abuse classifier** (`abuse_classifier`): a logistic regression over hashed character and
  word n-grams, trained offline on public labelled abuse that the benchmark's test halves do not
  hold (`screening/data/toxicity_classifier.npz`, benchmarks/external/make_toxicity_classifier.py).
  At or above its cut-off (calibrated so that at most 0.2% of everyday conversations and 0.5% of
  ordinary tweets would be dropped) a sentence scores 1.0, like a term: it catches insults no
  list holds (`you ugly ass clown`) and leaves mild ones (`Are you stupid?`) to the model.
- **the model**: alt-profanity-check's probability that the sentence is offensive. It scores
  mild words high wherever they stand (`What a stupid rule!` 0.998, `that sucks` 0.95, `I was
  sick.` 0.8), so on its own it is a reason to *flag* (keep, count, show a reviewer), not to
  drop; by default only a score of 1.0 drops (see `ToxicityConfig`).

A text scores the worst of its sentences, with why (`Toxicity`: `abusive term`, `classifier
0.73`, `model`), which the drop reason names. Measured on dialogue, chat with code and abuse written
by others in `benchmarks/toxicity.py` (docs/benchmarks.md).

Azure AI Content Safety (`content_safety_scores`) is the optional service backend: the REST API
(`POST {endpoint}/contentsafety/text:analyze`) with the key from an environment variable; the
worst category severity (0, 2, 4 or 6) becomes a score in [0, 1] so the same thresholds apply.
Throttling and server errors are retried with backoff; anything else is an answer and raised.
"""

from __future__ import annotations

import functools
import html
import os
import re
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from screening.code_text import prose
from screening.model_folder import sentence_classifier

MODEL_CEILING = 0.999  # the model alone never reaches 1.0, the score of an abusive term
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The prose sentences of a text (its code left out)."""
    return [s for s in _SENTENCE_END.split(prose(text)) if s.strip()]


# --- Abusive terms --------------------------------------------------------------------------------
# Each entry is a regular expression matched case-insensitively at word boundaries. The lists are
# short on purpose: a term here drops a record whatever else it says, so it must be abusive in
# every everyday use (the mild words of everyday talk, `stupid`, `sucks`, `hate`, `sick`, `crap`,
# `damn`, `kill` alone, are left to the model and at most flagged).

_GROUP = (  # people named by what they are, for the entries that call a group vermin
    r"black|ghetto|muslims?|jew\w*|mexicans?|latinos?|asians?|arabs?|gays?|immigrants?|"
    r"africans?|chinese|indians?|whites?|blacks?"
)
_INSULT = (  # words that make a name an insult aimed at someone
    r"stupid|dumb|dumbass|fat|ugly|fucking|fuckin|filthy|lazy|ignorant|inbred|worthless"
    r"|pathetic|disgusting|retarded|hateful"
)
_NAME_SLUR = (  # slurs with an innocent sense (a biscuit, a levee, a surname), said of a person
    r"crackers?|rednecks?|hillbill(?:y|ies)|hicks?|dikes?|dykes?|cripples?|negro(?:e?s)?"
    r"|teabaggers?|queers"
)
_PERSON_SLUR = (  # ... and what is only an insult said to someone
    _NAME_SLUR + r"|trash|hore?s?|maggots?|scum(?:bags?)?|vermin|parasites?|subhumans?"
    r"|piece\s+of\s+(?:garbage|trash|crap|filth)|waste\s+of\s+(?:oxygen|space|air|skin|sperm|life)"
)
_BEAST = r"pigs?|cows?|whales?|swine|dogs?"  # an insult after an insult: `you fat pig`
_PEOPLE = (  # a group named by what its people are
    r"(?:blacks|whites|muslims|jews|mexicans|latinos|hispanics|asians|arabs|gays|lesbians"
    r"|immigrants|africans|indians|women"
    r"|(?:black|white|muslim|jewish|mexican|latino|asian|arab|gay|african|indian|chinese)\s+"
    r"(?:people|folks?|men|women|girls|guys|chicks|kids))"
)
_SLURS = [
    r"nigg\w*",
    r"nigs?",
    r"nig(?:let|lets|has?|gas?)",
    r"nicc?as?",
    r"nicc?ah?s?",
    r"hoes?",
    r"w?h?iggers?",
    r"whitey",
    r"darkies",
    r"porch\s?monk(?:ey|ie)s?",
    r"spear\s?chuckers?",
    r"jig+a\s?boos?",
    r"gaywads?",
    r"negro(?:e?s)",
    r"sub\s?-?humans?",
    r"race\s+traitors?",
    r"queers",
    r"uncle\s+toms?(?!'s\s+cabin)",
    r"slits?\s+for\s+eyes",
    r"mongrels",
    r"(?:kill|gas|shoot|hang|lynch|exterminate|nuke|slaughter|behead|eradicate|wipe\s+out)\s+"
    r"(?:all|some|the|their|those|these)?\s*(?:\w+\s+)?(?:crackers|jews|muslims|blacks|whites"
    r"|gays|cops|babies|mexicans|immigrants|christians|arabs|asians|women|whitey)",
    r"(?:a|is|such\s+a|so|you|ur|u|ass|that|this)\s+queer(?=\s*[^\w\s]|\s*$)",
    r"queer\s+ass",
    r"(?:ass|dumb|stupid|fat|creepy|fucking|old|ugly|lame|ignorant)\s+"
    r"(?:crackers?|rednecks?|hillbill(?:y|ies)|monkeys?|apes?|hicks?)",
    rf"(?:{_GROUP})\s+(?:\w+\s+)?"
    r"(?:trash|filth|scum|savages|animals|monkeys|apes|vermin|parasites|mongrels|cockroaches)",
    r"niglets?",
    r"jig+aboos?",
    r"coons?",
    r"spics?",
    r"spicks?",
    r"wetbacks?",
    r"chinks?(?!\s+in\s+(?:the|his|her|their|its|our|my|your)\s+armou?r)",
    r"gooks?",
    r"kikes?",
    r"beaners?",
    r"towel\s?heads?",
    r"rag\s?heads?",
    r"pakis?",
    r"fag+s?",
    r"fag+ots?",
    r"fag+y",
    r"(?<!van\s)dykes?",
    r"trann(?:y|ies)",
    r"shemales?",
    r"retards?",
    r"retarded",
    r"mongoloids?",
    r"half[- ]breeds?",
    r"muzzies?",
    r"moslems?",
    r"mooslims?",
    r"camel\s?jockeys?",
    r"porch\s?monkeys?",
    r"sand\s?(?:monkeys?|niggers?)",
    r"white\s+trash",
    r"trailer\s+trash",
    r"homos",
    r"homo(?!\s+(?:sapiens|erectus|habilis))",
    r"zipperheads?",
    r"slant\s?eyes?",
    r"cotton\s+pickers?",
    r"border\s+hoppers?",
    r"rapefugees?",
    # Words that are slurs for a person but also something else (a colour, a country, Spanish
    # for black, a verb): only where they name a person.
    r"colou?red\s+(?:m[ae]n|wom[ae]n|folks?|people|persons?|girls?|boys?|guys?|chicks?|dudes?)"
    r"(?<!advancement\sof\scolored\speople)",
    r"an?\s+colou?red(?=\s*[^\w\s-]|\s*$)",
    r"(?:an?|any|some|that|this|you|ur|dumb|stupid|lazy|fucking|damn|typical|ignorant)\s+"
    r"negro(?!\s+(?:leagues?|spirituals?))",
    r"(?-i:nigers?)(?!\s+(?:river|delta|basin))",
    r"(?:an?|the|you|ur|u|those|these|some|fucking|stupid|dumb|little)\s+cripples?"
    r"(?!\s+(?:the|our|their|his|her|its|my|your|an?|this|that|it|them|him|me|us))",
    r"trailer\s+park\s+trash",
    r"(?:bunch|pack|herd)\s+of\s+(?:\w+\s+)?(?:rednecks|hillbillies|hicks|teabaggers|savages)",
    # ... said to someone: `you're a ...`, `are you a ...`, `you stupid ...`, `you ...!`, `..., X.`
    rf"(?:you|u|ya)\s*(?:'?re|\s+are|\s+r)\s+(?:(?:such|just|only|nothing\s+but)\s+)?"
    rf"(?:an?\s+)?(?:(?:{_INSULT})\s+){{0,2}}(?:{_PERSON_SLUR})",
    rf"(?:^|\bare\s+|\br\s+|,\s*)(?:you|u|ya|ur|youre)\s+(?:such\s+)?an?\s+"
    rf"(?:(?:{_INSULT})\s+){{0,2}}(?:{_PERSON_SLUR})",
    rf"(?:you|u|ya|ur)\s+(?:(?:{_INSULT})\s+){{1,2}}(?:{_PERSON_SLUR}|{_BEAST})",
    rf"(?:you|u|ya)\s+(?:{_PERSON_SLUR})(?=\s*[^\w\s']|\s*$)",
    rf"(?:{_INSULT})\s+(?:and\s+|&\s+)?(?:{_NAME_SLUR}|queer)",
    rf"(?:{_NAME_SLUR}|queer)\s+(?:and|&)\s+(?:{_INSULT}|ugly|gross|weird|nasty)",
    r"(?:,|\btho|\bthough)\s+(?:crackers?|rednecks?|hillbill(?:y|ies)|dikes?|negro(?:e?s)?"
    r"|teabaggers?|queers?)\W*$",
    # A group called vermin or unfit to live.
    r"(?:they|these\s+people|those\s+people)\s+(?:are|r)\s+(?:\w+\s+)?(?:filth|subhuman|scum)",
    rf"{_PEOPLE}\s+(?:\w+\s+){{0,2}}(?:are|r)\s+(?:just\s+|all\s+|nothing\s+but\s+)?"
    r"(?:\w+\s+)?(?:trash|filth|scum|savages|vermin|parasites|evil|subhuman|inferior|cockroaches"
    r"|animals)",
    rf"{_PEOPLE}\s+(?:should|must|need\s+to|deserve\s+to|ought\s+to)\s+(?:all\s+)?(?:be\s+)?"
    r"(?:(?!(?:not|never|no)\b)\w+\s+){0,2}(?:killed|shot|gassed|hanged|hung|lynched"
    r"|exterminated|burned|executed"
    r"|eradicated|die)",
    r"(?:have|has)\s+no\s+right\s+to\s+(?:be\s+alive|live|exist|breathe)"
    r"(?!\s+(?:in|here|there|on|at|with|near|under|without))",
]
_PROFANITY = [
    r"fuck\w*",
    r"f+u+c+k+\w*",
    r"\w*fuck\w*",
    r"fvck\w*",
    r"phuc?k\w*",
    r"a[sz]{2}holes?",
    r"fck\w*",
    r"fuk\w*",
    r"motherf\w+",
    r"cunts?",
    r"cocksuck\w*",
    r"\w+cocksuckers?",
    r"bitch\w*",
    r"biatch\w*",
    r"whores?",
    r"sluts?",
    r"sluty",
    r"slutty",
    r"assholes?",
    r"arseholes?",
    r"dickheads?",
    r"twats?",
    r"wank\w*",
    r"bastards?",
    r"shit\s?heads?",
    r"pieces?\s+of\s+shit",
    r"full\s+(?:of|o'?|a)\s+(?:shit|schitt?|shite)",
    r"eat\s+shit",
    r"bullshit",
    r"douche\s?bags?",
    r"skanks?",
    r"slags?",
    r"pricks?",
    r"scumbags?",
    r"piss\s+off",
    r"stfu",
]
_YOU = r"(?:you|u|ya|yourself|urself|your\s+self|ur|your|his|her|him|them|their)"
# A threat: I will (...) harm you, him or her, or a part of you.
_I_WILL = (
    r"(?:i'?ll|i\s+will|i'?m\s+(?:going|gonna)\s+to|i'?m\s+gonna|i\s+want\s+to|i\s+wanna"
    r"|i'?d\s+(?:like|love)\s+to|let\s+me|imma|i\s+swear\s+i'?ll)"
)
_GAP = r"(?:(?!(?:not|never|no)\b)[\w']+\s+){0,4}"  # `I will find you and kill you`
_HARM = r"kill|murder|stab|rape|strangle|slit|lynch|slaughter|behead|beat\s+up|torture|choke|gut"
_BODY = (
    r"(?:throat|face|head|neck|skull|legs?|arms?|knees?|kneecaps?|teeth|brains?|balls|family|kids"
    r"|children|wife|husband|mom|mother|mum|dad|father|sister|brother|daughter|son|baby)"
)
_THREATS = [
    # `shoot you an email`, `cut you some slack`, `burn you a copy`, `hang you out to dry`
    rf"(?:{_I_WILL}|we'?ll|we\s+will)\s+{_GAP}(?:{_HARM}|shoot|hang|burn|slice|cut|punch|hurt|end"
    r"|shank)\s+(?:you|u|ya|yourself|urself)(?!\s+(?:a|an|some|in|off|out|up|down|know|slack)\b)",
    rf"{_I_WILL}\s+{_GAP}(?:{_HARM})\s+(?:him|her|them)",
    rf"{_I_WILL}\s+{_GAP}(?:{_HARM}|shoot|hang|burn|slice|cut|punch|break|smash|bash|crush|snap"
    rf"|rip\s+off|cave\s+in)\s+(?:your|ur|his|her|their)\s+(?:\w+\s+)?{_BODY}",
    r"(?:someone|somebody|people|y'?all|they)\s+(?:should|need\s+to|ought\s+to|must|gotta"
    r"|have\s+to)\s+(?:\w+\s+)?(?:kill|shoot|stab|hang|lynch|rape|murder|gas|behead)\s+"
    r"(?:you|u|ya)(?!\s+know)",
    r"(?:hang|neck|unalive|off)\s+(?:yourself|urself|your\s+self|yourselves)",
    r"(?:go|should|pls|please|just)\s+(?:shoot|drown|stab)\s+(?:yourself|urself)"
    r"(?!\s+in\s+the\s+foot)",
    r"beat\s+the\s+(?:shit|crap|hell|fuck|living\s+daylights)\s+out\s+of\s+(?:you|u|ya)",
    r"(?:hope|wish)\s+(?:you|u)\s+(?:get|catch)\s+(?:cancer|aids|ebola|hit\s+by\s+an?\s+"
    r"(?:car|bus|truck|train))",
    r"kill\s+(?:yourself|urself|your\s+self|yo\s+self|yourselves|yaselves|urselves)",
    r"kys",
    r"(?:hope|wish)\s+(?:you|u)\s+(?:(?!(?:not|never|don't|dont|won't|wont)\b)[\w']+\s+){0,3}"
    r"(?:die|dies|died|get\s+(?:raped|killed|shot)|rot|burn)",
    r"(?:you|u)\s+(?:should|deserve\s+to|need\s+to|must|ought\s+to)\s+(?:\w+\s+)?"
    r"(?:die|be\s+(?:killed|shot|raped|hanged|hung))",
    r"(?:slit|slice|slicing|slitting|cut|cutting)\s+(?:you|u|ya|yourself|urself|your\s+self|ur"
    r"|your|his|her|him|them|their)\s+throats?",
    r"(?:hope|wish)\s+(?:(?!(?:not|never|doesn't|don't|won't|didn't|doesnt|dont|wont|didnt)\b)"
    r"[\w']+\s+){0,3}(?:kills?|murders?|rapes?|shoots?)\s+(?:you|u|ya|y'?all"
    r"|your\s+(?:\w+\s+)?(?:family|kids?|mom|mother|mum|dad|wife|husband|children|ass))",
    r"death\s+to\s+(?:all\s+)?\w+",
    r"drop\s+dead",
    r"go\s+die",
    r"die\s+in\s+a\s+fire",
]
_HARASSMENT = [
    r"blow\s?jobs?",
    r"(?-i:dicks?)",
    r"dick\s?(?:head|sucker|licker)s?",
    r"masturbat\w*",
    r"orgasms?",
    r"butt\s?holes?",
    r"anal\s+sex",
    r"sex\s+slaves?",
    r"(?:lick|eat|finger|fuck)\s+(?:my|your|ur)\s+\w+",
    r"suck\s*(?:my|me|on\s+my)?\s*(?:dick|cock|balls|tits|pussy)",
    r"suck\s+me",
    r"(?:screwed|fucked|banged|shagged)\s+(?:your|ur|yo)\s+(?:mom|mum|mother|momma|mama|sister)",
    r"hand\s?jobs?",
    r"suck\s+(?:my|me|on\s+my)\s+\w*",
    r"my\s+(?:dick|cock|penis)",
    rf"{_YOU}\s+(?:\w+\s+)?(?:pussy|pussies|tits|titties|boobs|cock|dick|penis|vagina|nipples?)",
    r"cum(?:s|ming|shots?|sluts?|dumpsters?)?",
    r"jizz\w*",
    r"send\s+(?:me\s+)?nudes?",
    r"nudes",
    r"(?:take|get)\s+(?:off\s+)?your\s+clothes",
    r"(?:have|had|having|want|give\s+me|let'?s\s+have)\s+sex\s+with\s+(?:me|you|u)",
    r"give\s+me\s+sex",
    r"sex\s+with\s+(?:me|you|u)\b",
    r"horny",
    r"dildos?",
    r"pussy",
    r"pussies",
    r"tits",
    r"titties",
    r"boobs",
    r"naked\s+(?:pics?|pictures?|photos?)",
    r"sexy\s+(?:bitch|slut|girl|boy|body)",
    r"sit\s+on\s+my\s+face",
    r"jack(?:s|ed|ing|in)?\s+(?:me\s+|you\s+|him\s+)?off",
    r"(?:see|seeing|want|get|got)\s+(?:you|u)\s+naked",
    rf"(?:{_I_WILL}|can\s+i|gonna)\s+(?:\w+\s+)?(?:touch|grab|squeeze|grope|fondle|lick|suck|feel"
    r"|spank)\s+(?:your|ur|her|them)\s+(?:\w+\s+)?(?:breasts?|boobs|tits|ass|butt|bum|thighs?"
    r"|crotch|pussy|nipples?|privates|penis|cock|dick)",
    rf"(?:{_I_WILL}|i'?d|i\s+would|can\s+i)\s+(?:\w+\s+)?(?:bang|shag|screw|hump|fuck|ride|grope"
    r"|molest)\s+(?:you|u|ya|her)(?!\s+(?:over|up|in|with|to|on)\b)",
    r"send\s+(?:me\s+)?(?:some\s+|a\s+)?(?:pics?|pictures?|photos?|selfies?|vids?|videos?)\s+of"
    r"\s+(?:your|ur)\s+(?:\w+\s+)?(?:body|boobs|tits|ass|butt|pussy|dick|cock|breasts|naked)",
]
_ALONE = [  # a whole message of only these words
    r"die",
    r"kill\s+(?:you|u)",
    r"die\s+now",
    r"just\s+die",
]
_IN_WORDS = (
    r"(?<![\w@-])(?:" + "|".join(_SLURS + _PROFANITY + _THREATS + _HARASSMENT) + r")(?![\w-])"
)
ABUSIVE = re.compile(_IN_WORDS + r"|^\W*(?:" + "|".join(_ALONE) + r")\W*$", re.IGNORECASE)
# A disguised sentence is searched for the terms alone: `DIIIIIE!` is excitement, not `die`.
_DISGUISABLE = re.compile(_IN_WORDS, re.IGNORECASE)


# The first three letters of a word each entry above needs (keep them in step), and words a
# profanity may hide inside: a sentence with none of them is not searched (the search costs
# ~0.2 ms a sentence). Checked equal to the full search on the 71,512 sentences of
# benchmarks/external.
_PREFIXES = frozenset(
    """nig nic hoe wig whi dar por spe jig gay neg sub rac tra que unc tom sli mon kil coo spi
    wet chi goo kik bea tow rag pak fag dyk she ret bre muz mos moo cam san hom zip sla cot bor
    cra red hil hic ape fil scu sav ani ver par coc fuc fuu fck fuk mot cun bit bia who slu ass
    ars dic twa wan bas shi bul dou ska pri pis stf mur sho sta rap str cho han lyn pun beh bur
    cut kys hop wis die dea dro blo suc scr ban sha mas org but ana sex lic eat fin cum jiz nud
    clo hor dil pus tit boo nak pen vag nip hun hal col cri dik tea evi inf rig ful fvc phu
    azz hur pig jac end tor gut sma cru sna rip cav nec una off sit tou gra squ gro fon fee spa rid mol sen
    mag pie was cow wha swi dog gas ext exe era nuk wip""".split()  # noqa: SIM905
)
_INFIXES = ("fuck", "cunt", "nigg", "cocksuck")
_WORD = re.compile(r"[a-z]+")


# Slurs that are also everyday words in British English and farming: a levee (`dyke`), a
# meatball (`faggot`), a cigarette (`fag`), a female dog (`bitch`), a garden tool (`hoe`). Such a
# term is read in its other sense when the sentence speaks of what that sense goes with and
# addresses no one.
_OTHER_SENSE = [
    (r"dykes?", r"beach|water|sea|river|flood\w*|built|build\w*|levee|canal|dam|walk\w*|polder"
     r"|council|coast|tide|dutch|dike"),
    (r"fag+ots?", r"ate|eat\w*|dinner|lunch|butcher\w*|meatballs?|gravy|fried|cook\w*|onions?"
     r"|pork|recipe|peas|oven|firewood|sticks"),
    (r"fags?", r"cigarettes?|smok\w*|packet|pack|lighter|ash\w*|roll\w*|tobacco|shop|store"),
    (r"bitch(?:es)?", r"dogs?|canines?|pupp\w*|litters?|breed\w*|kennel|whelp\w*|vixens?"),
    (r"hoes?", r"garden\w*|shovels?|rakes?|spades?|tools?|soil|weeds?|dig\w*|shed|plough|plow"),
]  # fmt: skip
_SENSES = [
    (re.compile(term, re.IGNORECASE), re.compile(rf"\b(?:{cue})\b", re.IGNORECASE))
    for term, cue in _OTHER_SENSE
]
_ADDRESSED = re.compile(r"\b(?:you|u|ur|ya|your|yo)\b", re.IGNORECASE)


def _other_senses(sentence: str) -> list[re.Pattern[str]]:
    """The slurs that the sentence would use in their other sense (it speaks of what that sense
    goes with and addresses no one)."""
    if _ADDRESSED.search(sentence):
        return []
    return [word for word, cue in _SENSES if cue.search(sentence)]


def _other_sense(term: str, sentence: str) -> bool:
    return any(word.fullmatch(term) for word in _other_senses(sentence))


def judged_innocent(sentence: str) -> str:
    """The sentence without the slurs the terms read in their other sense in it (`a garden
    hoe`, `a packet of fags`). The classifier reads this, so it does not drop what the terms
    kept for the word alone."""
    for word in _other_senses(sentence):
        sentence = re.sub(rf"\b{word.pattern}\b", " ", sentence, flags=re.IGNORECASE)
    return sentence


def _holds_term(sentence: str, terms: re.Pattern[str] = ABUSIVE) -> bool:
    lower = sentence.lower()
    if not any(w[:3] in _PREFIXES for w in _WORD.findall(lower)) and not any(
        i in lower for i in _INFIXES
    ):
        return False
    return any(not _other_sense(m.group(), sentence) for m in terms.finditer(sentence))


def abusive_terms(sentence: str, before: str = "") -> bool:
    """Whether the sentence holds a slur, a threat, strong profanity, sexual harassment or hate
    aimed at a group (`group_hate`; read after `before`, the sentence before it, too), as written
    or once its disguises are undone (`undisguised`: `f*ck`, `sh1t`, `f u c k`)."""
    return (
        _holds_term(sentence)
        or group_hate(sentence, before)
        or any(_holds_term(v, _DISGUISABLE) or group_hate(v, before) for v in undisguised(sentence))
    )


# --- Hate aimed at a group ------------------------------------------------------------------------
# A protected group (by race, religion, origin, sex, gender, sexuality, disability) named and, in
# the same sentence, hated, called vermin or less than human, or threatened: `I hate Muslims`,
# `Disabled people are lesser beings`, `Immigrants should all be killed`, `I'll slaughter any
# woman like you`. The group alone (`We have never had a female president`), the hostile words
# alone (`I despise long queues`) and hate negated (`I would never hurt any gay person`, `I have
# no particular contempt for women`) are not abuse. `group_hate` also reads a sentence with the
# one before it, for `Gay people think they're special. I hate them.`

_IDENTITY = (  # a word that makes a person a member of a group: `black`, `a Muslim`
    r"black|white|brown|gay|lesbian|bisexual|queer|trans|transgender|disabled|handicapped"
    r"|muslim|jewish|jew|christian|hindu|sikh|immigrant|migrant|refugee|foreign|female|asian|arab"
    r"|african|mexican|latino|latina|hispanic|indian|chinese|pakistani|gypsy|roma|romani"
)
_MEMBERS = r"people|persons?|folks?|men|man|women|woman|girls?|boys?|guys?|kids?|children|ones?"
_PLURAL = (  # a group by its plural: `Muslims`, `women`, `the disabled`
    r"blacks|gays|lesbians|bisexuals|homosexuals|transsexuals|transgenders|muslims|jews"
    r"|christians|hindus|sikhs|immigrants|migrants|refugees|foreigners|women|females|asians|arabs"
    r"|africans|mexicans|latinos|hispanics|indians|gypsies|the\s+disabled|disabled"
)
_SINGULAR = (  # one of them: `a Muslim`, `that woman`, `any immigrant`
    r"muslim|jew|immigrant|migrant|refugee|foreigner|woman|lesbian|homosexual|transsexual|arab"
    r"|mexican|asian|african"
)
_WHO = (
    r"(?:all|most|every|those|these|the|you|some|many|any|such|of|them|and|other|swarms\s+of"
    r"|hordes\s+of)\s+"
)
_GROUP_OF = (  # a group, or a member of one, with what may stand before it
    rf"(?:{_WHO}){{0,4}}(?:(?:{_IDENTITY})\s+(?:{_MEMBERS})|{_PLURAL})"
    rf"|(?:a|an|any|every|that|this|the\s+next|one|each)\s+(?:(?:{_IDENTITY})\s+(?:{_MEMBERS})"
    rf"|{_SINGULAR})"
)
_GROUP_WORD = re.compile(rf"\b(?:{_IDENTITY}|{_PLURAL}|{_SINGULAR})\b", re.IGNORECASE)
_LIKE_YOU = r"(?:\s+like\s+(?:you|them|her|him|that|this|yourself))?"
_NOT = r"(?!(?:not|never|no|n't|don'?t|didn'?t|won'?t|wouldn'?t|nothing|hardly)\b)"
_GAP2 = rf"(?:{_NOT}[\w']+\s+){{0,3}}"
_HATE_VERB = r"hate|despise|loathe|abhor|detest|can'?t\s+stand|cannot\s+stand"
_VILE = (  # what a group is called
    r"dumbest|stupidest|most\s+(?:stupid|disgusting|useless|pathetic|worthless|vile)|dumb|stupid"
    r"|repulsive|vile|despicable|disgusting|repugnant|revolting|abhorrent|worthless|subhuman"
    r"|inferior|pathetic|filthy|useless|parasitic|evil|scum|scumbags|vermin|rats|parasites"
    r"|cockroaches|animals|savages|pigs|apes|monkeys|idiots|morons|lesser\s+beings"
    r"|(?:human\s+)?(?:garbage|trash|filth|dirt|waste)|(?:shitty|lesser|inferior|worthless|vile"
    r"|disgusting)\s+(?:human\s+)?beings|an?\s+(?:cancer|plague|disease|virus|pest|infestation"
    r"|burden|danger|threat|disgrace|menace)|dishonest|liars|criminals|thieves|terrorists|rapists"
    r"|lazy|dirty"
)
_SO = (  # what may stand between `are` and what a group is called
    r"(?:just|all|so|such|really|truly|absolutely|totally|completely|simply|nothing\s+but"
    r"|no\s+better\s+than|without\s+a\s+doubt|by\s+far|the|a|an|pretty|still|always|basically"
    r"|inherently|too|only|merely|clearly|nothing\s+more\s+than|naturally|born|that|common"
    r"|such)\s+"
)
_KILL = (
    r"kill|murder|shoot|stab|slaughter|strangle|hang|execute|exterminate|eradicate|gas|lynch"
    r"|burn|torture|behead|massacre|rape|wipe\s+out|get\s+rid\s+of|snap\s+the\s+necks?\s+of"
    r"|cut\s+the\s+throats?\s+of|slit\s+the\s+throats?\s+of|end\s+the\s+lives\s+of"
)
_KILLED = (
    r"killed|murdered|shot|stabbed|slaughtered|strangled|hanged|hung|executed|exterminated"
    r"|eradicated|gassed|lynched|burned|burnt|tortured|beheaded|raped|wiped\s+out|locked\s+up"
    r"|die|suffer|rot|burn|hang"
)
_WE_WILL = (  # a speaker who means to do it, or wants it done
    r"(?:i|we)\s+(?:\w+\s+){0,2}(?:will|shall|am\s+going\s+to|are\s+going\s+to|want\s+to"
    r"|would\s+(?:love|like)\s+to|need\s+to|must|should)|(?:i|we)'(?:ll|m\s+going\s+to"
    r"|re\s+going\s+to|d\s+(?:love|like)\s+to)|(?:i'?m|we'?re)\s+gonna|(?:i|we)\s+wanna"
    r"|let'?s|(?:someone|somebody|people|they)\s+(?:should|would|could|must|needs?\s+to"
    r"|ought\s+to)|we\s+should|just"
)
_GROUP_HATE = [
    # hated: `I hate Muslims`, `I absolutely abhor all women`, `I have so much hatred for you X`
    rf"(?:i|we)\s+{_GAP2}(?:{_HATE_VERB})\s+(?:{_GROUP_OF}){_LIKE_YOU}(?!'s|\s+(?:who|that|when"
    r"|for|because)\b)",
    rf"(?:nothing\s+but|so\s+much|such|pure|only|deep|utter|total|complete)\s+(?:contempt|hatred"
    rf"|disgust|loathing)\s+(?:for|of|towards?)\s+(?:{_GROUP_OF})",
    rf"(?:disgusted|sickened|repulsed|revolted)\s+(?:by|with|at)\s+(?:{_GROUP_OF})",
    rf"(?:{_GROUP_OF})\s+(?:[\w']+\s+){{0,5}}(?:makes?|make)\s+me\s+(?:so\s+|really\s+"
    r"|feel\s+)?(?:angry|sick|furious|disgusted|mad|boil|puke|vomit)",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:[\w']+\s+){{0,5}}(?:pissing|pisses)\s+me\s+off",
    rf"(?:{_GROUP_OF})\b[^!?]{{0,80}}?\b(?:i|we)\s+{_GAP2}(?:{_HATE_VERB})\s+(?:them|every"
    r"|all|each)",
    rf"(?:{_GROUP_OF})\b[^!?]{{0,80}}?(?:nothing\s+but|so\s+much|such|pure|only|deep|utter"
    r"|total|complete)\s+(?:contempt|hatred|disgust|loathing|scorn)\s+(?:for|of|towards?)\s+"
    r"(?:them|you|your\s+kind)",
    rf"(?:utter|pure|deep|total|complete)\s+(?:contempt|hatred|disgust|loathing|scorn)\s+(?:i|we)"
    rf"\s+(?:feel|have)\s+(?:for|towards?)\s+(?:{_GROUP_OF})",
    rf"typical\s+of\s+(?:{_GROUP_OF})\s+to\s+be\s+(?:so\s+|that\s+|this\s+)?(?:{_VILE})",
    rf"(?:dumbass|idiot|moron|scumbag|asshole|bastard)\s+(?:was|is)\s+(?:{_GROUP_OF})",
    rf"(?:{_IDENTITY})\s+(?:vermin|trash|scum|filth|garbage|rats|parasites|cockroaches|savages)",
    rf"(?:swarms|hordes)\s+of\s+(?:{_GROUP_OF})",
    rf"(?:{_GROUP_OF})\s+(?:are|is)\s+(?:infesting|invading|overrunning|infecting)",
    # called vermin, less than human, stupid: `Immigrants are worthless dirt`
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:[\w']+\s+){{0,2}}(?:are|is|r|were)\s+(?:{_SO}){{0,4}}"
    rf"(?:{_VILE})(?!\s+(?:of|at|in)\b)",
    rf"(?:{_GROUP_OF})\s+(?:[\w']+\s+){{0,4}}(?:is|are)\s+an?\s+(?:danger|threat|plague|cancer"
    r"|disease|disgrace|burden|menace)\s+to\b",
    rf"(?:{_GROUP_OF})\b[^!?]{{0,80}}?\b(?:they|you|(?:most|all|many|some)\s+of\s+them)\s*"
    rf"(?:'re|\s+are)\s+(?:{_SO}){{0,4}}(?:{_VILE})(?=[^\w]*$|\s+to\s+me)",
    # threatened: `I'll slaughter any woman like you`, `Muslims should all be killed`
    rf"(?:{_WE_WILL})\s+{_GAP2}(?:{_KILL})\s+(?:{_GROUP_OF})",
    rf"(?:{_WE_WILL})\s+{_GAP2}(?:{_KILL})\s+(?:all|every|any|each)\s+(?:of\s+)?(?:them|one)",
    rf"(?:{_WE_WILL})\s+{_GAP2}(?:{_KILL})\s+(?:a|an|the|that|this|every|any)\s+(?:\w+\s+)?"
    r"(?:person|guy|man|woman|girl|boy|kid|child)\s+(?:i|we)\s+see",
    rf"(?:{_WE_WILL})\s+{_GAP2}(?:{_KILL}|snap|break|cut|slit|crush)\s+(?:that|their|your|the"
    rf"|those|these)\s+(?:{_IDENTITY})\s+(?:necks?|throats?|skulls?|heads?)",
    rf"(?:{_WE_WILL})\s+{_GAP2}end\s+(?:every|that|a|an|the|each|all)\s+(?:(?:{_IDENTITY})\s+"
    rf"(?:{_MEMBERS})|{_SINGULAR})'s\s+li(?:fe|ves)",
    rf"(?:see|watch|make)\s+(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:all\s+)?(?:suffer|die|burn|hang|rot)",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:[\w']+\s+){{0,6}}(?:should|must|need\s+to|deserve\s+to"
    rf"|ought\s+to|will)\s+(?:all\s+)?(?:be\s+)?(?:\w+\s+){{0,2}}(?:{_KILLED})(?!\s+(?:for\s+)?"
    r"(?:a|an|the|by|of)\b)",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}[^.!?]*\bthey\s+should\s+(?:all\s+)?(?:{_KILLED})",
    rf"(?:better\s+off|if\s+only|i\s+wish)\s+(?:[\w']+\s+){{0,3}}(?:{_GROUP_OF})\s+(?:were"
    rf"|was|got|get|are)\s+(?:all\s+)?(?:{_KILLED})",
    rf"(?:what\s+if|if\s+only|how\s+about\s+if)\s+(?:we|i|someone|somebody)\s+(?:just\s+)?"
    rf"(?:{_KILLED})\s+(?:{_GROUP_OF})",
    rf"(?:{_GROUP_OF})\b[^.!?]*\b(?:i|we)\s+(?:start|begin|go)\s+(?:shooting|killing|stabbing"
    r"|murdering|slaughtering|hanging|gassing|burning)\s+(?:them|you|all)",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:all\s+)?(?:had|have|got|get)\s+their\s+(?:throats?|necks?)"
    r"\s+(?:cut|slit|snapped|broken)",
    rf"(?:execution|extermination|death|genocide|eradication|a\s+bullet|the\s+gas\s+chamber)\s+"
    rf"(?:is|would\s+be)\s+the\s+(?:only|best|final)\s+(?:solution|answer|cure)\s+(?:for|to)\s+"
    rf"(?:{_GROUP_OF})",
    rf"(?:raping|killing|murdering|lynching|shooting|stabbing|beating|torturing)\s+"
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:should|must)\s+be\s+(?:legal|allowed)",
]
# ... and what says it with a negation: `Immigrants are not worthy of living`
_GROUP_HATE_NEGATED = [
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:can|could|will)\s+never\s+be\s+(?:as\s+\w+\s+as|equal"
    r"|human|trusted)",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:are|is)\s+not\s+(?:worthy|fit)\s+(?:of|to)\s+(?:living|live"
    r"|life|exist|respect)",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:do\s+not|don'?t|does\s+not|doesn'?t)\s+deserve\s+to\s+"
    r"(?:live|exist|breathe|be\s+alive)",
    rf"(?:{_IDENTITY}|your|their)\s+(?:lives|life)\s+(?:are|is|aren'?t|isn'?t)\s+(?:not\s+)?"
    r"(?:worth\s+(?:anything|nothing|shit|crap|protecting|saving|living|a\s+thing)|worthless"
    r"|meaningless)",
    rf"(?:{_IDENTITY}|your|their)\s+(?:lives|life)\s+(?:have|has)\s+no\s+(?:value|worth|meaning)",
    rf"(?:human\s+)?rights\s+should\s+(?:not|never)\s+apply\s+to\s+(?:{_GROUP_OF})",
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:[\w']+\s+){{0,2}}(?:are|is)\s+(?:{_SO}){{0,3}}not\s+"
    r"(?:(?:our|my|your|their)\s+equals?|(?:fully\s+)?human)",
    rf"no\s+(?:compassion|mercy|pity|respect)\s+(?:\w+\s+){{0,2}}for\s+(?:{_GROUP_OF})",
    r"nothing\s+(?:is\s+)?worse\s+than\s+(?:your|their)\s+kind",
    rf"(?:raping|killing|murdering|lynching|shooting|stabbing|beating|torturing)\s+"
    rf"(?:{_GROUP_OF}){_LIKE_YOU}\s+(?:should|must)\s+not\s+be\s+(?:illegal|a\s+crime|punished)",
]
GROUP_HATE = re.compile(r"(?<![\w@-])(?:" + "|".join(_GROUP_HATE) + r")(?![\w-])", re.IGNORECASE)
GROUP_HATE_NEGATED = re.compile(
    r"(?<![\w@-])(?:" + "|".join(_GROUP_HATE_NEGATED) + r")(?![\w-])", re.IGNORECASE
)
# A negation in a match, or in the three words before it, turns hate into its denial: `No black
# person ought to be executed`, `Women should never be harmed`, `I don't hate immigrants`.
_NEGATION = re.compile(
    r"\b(?:no|not|never|nobody|none|nothing|neither|nor|cannot|without|\w+n't)\b", re.IGNORECASE
)
_NOT_A_NEGATION = re.compile(  # phrases that hold a negation word but deny nothing
    r"nothing\s+(?:but|more\s+than)|no\s+better\s+than|can'?t\s+stand|cannot\s+stand"
    r"|can'?t\s+help|\b(?:isn'?t|aren'?t|wasn'?t|don'?t|doesn'?t|won'?t)\s+(?:it|they|we|you"
    r"|that|this)\b|\b(?:is|are|does|do)\s+(?:it|they|we|you|people)\s+(?:\w+\s+)?not\b",
    re.IGNORECASE,
)
_WORDS_BEFORE = re.compile(r"(?:[\w']+\W+){0,3}$")
_CLAUSE = re.compile(r".*\b(?:that|if|when|because)\b", re.IGNORECASE | re.DOTALL)
_STOP = re.compile(r"\b(?:stop|stopped|quit)\b", re.IGNORECASE)


def _negated(text: str, match: re.Match[str]) -> bool:
    """Whether a negation denies the match: in it, or in the three words before it (not past a
    `that`/`if` that starts its clause: `Is it not obvious that I hate X` denies nothing)."""
    found = _WORDS_BEFORE.search(text[: match.start()])
    before = _CLAUSE.sub(" ", found.group()) if found else ""
    span = _NOT_A_NEGATION.sub(" ", before + match.group())
    return _NEGATION.search(span) is not None or _STOP.search(before) is not None


def group_hate(sentence: str, before: str = "") -> bool:
    """Whether the sentence (or it read after `before`, the sentence before it) hates, demeans or
    threatens a protected group or one of its members."""
    for text in (sentence, f"{before} {sentence}" if before else ""):
        if not text or not _GROUP_WORD.search(text):
            continue
        if GROUP_HATE_NEGATED.search(text) or any(
            not _negated(text, m) for m in GROUP_HATE.finditer(text)
        ):
            return True
    return False


# --- Disguised terms ------------------------------------------------------------------------------
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
_RUN = re.compile(r"([a-zA-Z])\1{2,}")
# What a masked word may stand for (`f**k`, `a**hole`, `sh*t`, `n****r`): a mask never hides a
# mild word, so each is one of these.
_MASKABLE = """fuck fucks fucked fucker fuckers fucking fuckin motherfucker motherfuckers
    motherfucking shit shits shitty shithead bullshit bitch bitches cunt cunts nigger niggers
    nigga niggas asshole assholes pussy dick dicks dickhead cock cocksucker whore whores slut sluts
    faggot faggots fag fags bastard bastards retard retards twat twats wanker prick pricks
    """.split()  # noqa: SIM905


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
    if _RUN.search(text):
        variants += [_RUN.sub(r"\1", text), _RUN.sub(r"\1\1", text)]
    return [v for v in dict.fromkeys(variants) if v != sentence]


# --- The learned classifier -----------------------------------------------------------------------
# A logistic regression over hashed character and word n-grams (nothing stored but the weights:
# `screening/data/toxicity_classifier.npz`, rebuilt offline by
# benchmarks/external/make_toxicity_classifier.py from public labelled abuse that the benchmark's
# test halves do not hold). It scores a sentence the terms do not hold; at or above the cut-off
# stored with it (calibrated on held-out folds of its training data, never on a test half) the
# sentence scores 1.0 and the record is dropped, naming the classifier and its score.

CLASSIFIER = Path(__file__).resolve().parent / "data" / "toxicity_classifier.npz"
_HANDLE = re.compile(r"(?<!\w)@\w+")
_LINK = re.compile(r"https?://\S+|www\.\S+")
_SPACES = re.compile(r"\s+")
_RETWEET = re.compile(r"(?<!\w)rt(?!\w)\s*:?")
CLASSIFIER_FEATURES = 2**18  # hashed buckets per analyzer (character 2-5-grams, word 1-2-grams)


def classifier_text(sentence: str) -> str:
    """The sentence as the classifier reads it: lower case, without `@handles`, links and `RT`
    marks (where a text was posted, not what it says), a letter written three or more times
    written twice, spaces collapsed."""
    text = _LINK.sub(" ", _HANDLE.sub(" ", html.unescape(sentence))).lower()
    return _SPACES.sub(" ", _RUN.sub(r"\1\1", _RETWEET.sub(" ", text))).strip()


@functools.cache
def _vectorizers() -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import HashingVectorizer

    common = {"n_features": CLASSIFIER_FEATURES, "alternate_sign": False, "lowercase": False}
    chars = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 5), **common)
    words = HashingVectorizer(
        analyzer="word", ngram_range=(1, 2), token_pattern=r"[a-z0-9_']+|[!?]", **common
    )
    return chars, words


def classifier_features(sentences: Sequence[str]) -> Any:
    """The sparse features of each sentence: character and word n-grams side by side."""
    from scipy.sparse import hstack

    texts = [classifier_text(s) for s in sentences]
    chars, words = _vectorizers()
    return hstack([chars.transform(texts), words.transform(texts)]).tocsr()


class AbuseClassifier(NamedTuple):
    """The shipped weights: P(abusive) = sigmoid(features . weights + bias); `drop_at` the
    cut-off a sentence is dropped at."""

    weights: Any  # float32 vector, 2 * CLASSIFIER_FEATURES
    bias: float
    drop_at: float

    def probabilities(self, sentences: Sequence[str]) -> list[float]:
        if not sentences:
            return []
        import numpy as np

        logits = classifier_features(sentences) @ self.weights + self.bias
        return (1.0 / (1.0 + np.exp(-logits))).tolist()


@functools.cache
def abuse_classifier() -> AbuseClassifier:
    """The classifier shipped in the package (read once; nothing is downloaded)."""
    import numpy as np

    with np.load(CLASSIFIER) as data:
        weights = data["weights"].astype(np.float32)
        if weights.shape != (2 * CLASSIFIER_FEATURES,):
            raise ValueError(f"{CLASSIFIER.name}: {weights.shape[0]} weights, not the features")
        return AbuseClassifier(weights, float(data["bias"]), float(data["drop_at"]))


def term_scores(texts: Sequence[str]) -> list[float]:
    """1.0 for each text with an abusive term in a prose sentence, else 0.0."""
    return [float(any(abusive_terms(s, before) for s, before in _with_before(t))) for t in texts]


def _with_before(text: str) -> list[tuple[str, str]]:
    """Each prose sentence of `text` with the one before it ("" for the first)."""
    units = sentences(text)
    return [(s, units[i - 1] if i else "") for i, s in enumerate(units)]


class Toxicity(NamedTuple):
    """A text's toxicity score and why: `abusive term`, `classifier 0.97` (its probability),
    `model` (alt-profanity-check), `<folder> 0.97` (the classifier of `toxicity.model_dir`), the
    service's name, or "" for a text with no prose."""

    score: float
    why: str


ABUSIVE_TERM = Toxicity(1.0, "abusive term")


def local_toxicity(
    texts: Sequence[str],
    terms: bool = True,
    classifier: bool = True,
    model_dir: str | None = None,
    model_threshold: float = 1.0,
) -> list[Toxicity]:
    """Toxicity of the local backend: the worst prose sentence of each text, 1.0 for a sentence
    with an abusive term (when `terms`) or that the classifier scores at or above its cut-off
    (when `classifier`) or that the text classifier saved in `model_dir`
    (`screening.model_folder`) scores at or above `model_threshold`, else the highest of the
    models' probabilities (below 1.0)."""
    if not texts:
        return []
    from profanity_check import predict_prob

    units: list[str] = []
    owners: list[int] = []
    worst = [Toxicity(0.0, "")] * len(texts)
    for i, text in enumerate(texts):
        for sentence, before in _with_before(text):
            if terms and abusive_terms(sentence, before):
                worst[i] = ABUSIVE_TERM
            elif worst[i].score < 1.0:
                units.append(sentence)
                owners.append(i)
    if not units:
        return worst
    model = predict_prob(units)
    learned = abuse_classifier() if classifier else None
    learned_p = (
        learned.probabilities([judged_innocent(u) for u in units])
        if learned
        else [0.0] * len(units)
    )
    own = sentence_classifier(model_dir).scores(units) if model_dir else [0.0] * len(units)
    own_name = Path(model_dir).name if model_dir else ""
    for owner, p, q, r in zip(owners, model, learned_p, own, strict=True):
        if learned and q >= learned.drop_at:
            found = Toxicity(1.0, f"classifier {q:.2f}")
        elif model_dir and r >= model_threshold:
            found = Toxicity(1.0, f"{own_name} {r:.2f}")
        elif r > p:
            found = Toxicity(min(r, MODEL_CEILING), own_name)
        else:
            found = Toxicity(min(float(p), MODEL_CEILING), "model")
        if found.score > worst[owner].score:
            worst[owner] = found
    return worst


# --- Azure AI Content Safety ----------------------------------------------------------------------
API_VERSION = "2024-09-01"
CATEGORIES = ("Hate", "SelfHarm", "Sexual", "Violence")
MAX_SEVERITY = 6
MAX_TEXT = 10_000  # the service's limit per request
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class ContentSafetyError(RuntimeError):
    """The service refused a request; the message says what to check (never the text)."""


def content_safety_scores(
    texts: Sequence[str],
    endpoint: str,
    key_env: str,
    *,
    retries: int = 4,
    backoff_seconds: float = 1.0,
    timeout_seconds: float = 30.0,
) -> list[float]:
    """Toxicity scores in [0, 1]: the worst category severity of each text divided by 6."""
    key = os.environ.get(key_env)
    if not key:
        raise ContentSafetyError(
            f"screen.toxicity.backend=azure-content-safety needs the key in ${key_env}"
        )
    url = f"{endpoint.rstrip('/')}/contentsafety/text:analyze"
    headers = {"Ocp-Apim-Subscription-Key": key, "Content-Type": "application/json"}
    scores = []
    with httpx.Client(timeout=timeout_seconds) as client:
        for text in texts:
            body = {
                "text": text[:MAX_TEXT],
                "categories": list(CATEGORIES),
                "outputType": "FourSeverityLevels",
            }
            analysis = _post(client, url, headers, body, retries, backoff_seconds)
            worst = max((c.get("severity") or 0 for c in analysis["categoriesAnalysis"]), default=0)
            scores.append(worst / MAX_SEVERITY)
    return scores


def _post(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    body: dict[str, object],
    retries: int,
    backoff_seconds: float,
) -> dict:
    for attempt in range(retries + 1):
        try:
            response = client.post(
                url, params={"api-version": API_VERSION}, headers=headers, json=body
            )
        except httpx.TransportError as exc:
            if attempt == retries:
                raise ContentSafetyError(f"cannot reach {url}: {type(exc).__name__}") from None
        else:
            if response.status_code == 200:
                return response.json()
            if response.status_code not in _RETRY_STATUS or attempt == retries:
                raise ContentSafetyError(
                    f"Content Safety answered {response.status_code} at {url}: "
                    f"{_error_code(response)} (check the endpoint, the key and the region)"
                )
        time.sleep(backoff_seconds * 2**attempt)
    raise AssertionError("unreachable")


def _error_code(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", {}).get("code", "unknown error"))
    except ValueError:
        return "unknown error"
