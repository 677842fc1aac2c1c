"""Hate aimed at a group: `group_hate`, a sentence that hates, demeans or threatens a protected
group or one of its members."""

from __future__ import annotations

import re

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


_GROUP_NAMED = re.compile(rf"(?<![\w@-])(?:{_GROUP_OF})(?![\w-])", re.IGNORECASE)


def names_group(sentence: str) -> bool:
    """Whether the sentence names a protected group or one of its members (`Muslims`, `trans
    people`, `a woman`); a colour or an adjective alone is not a group (`the black car`)."""
    return _GROUP_WORD.search(sentence) is not None and _GROUP_NAMED.search(sentence) is not None


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
