"""Abusive terms: slurs, threats, strong profanity and insults aimed at someone, sexual
harassment (the lists below), read as written and once their disguises are undone
(`screening.toxicity.disguise`), and hate aimed at a group (`screening.toxicity.group_hate`).
A sentence holding one scores 1.0 (`screening.toxicity.score`) whatever a model says.

Expletives (`fuck`, `shit`) and insult words (`asshole`, `bastard`, `prick`) count only where
they are aimed at someone (`_AIMED`, `_swears_at_someone`); sexual insults (`cunt`, `whore`,
`bitch`) count wherever they stand. On CRD3's table talk among friends (never read to tune the
terms before; its dev half read for this) 22.2% of records were dropped, 5.2% after, with every
toxic corpus's test half dropped as before (docs/benchmarks.md, Screen: toxicity).
"""

from __future__ import annotations

import re

from screening.shipped import word_lists
from screening.toxicity.disguise import undisguised
from screening.toxicity.group_hate import group_hate, names_group

_WORDS = word_lists("abusive_terms.json")  # word lists (screening/data/abusive_terms.json)

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
    r"nigg(?!ard)\w*",  # not `niggard`, `niggardly` (a miser, miserly)
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
    r"(?<!maine )coons?(?!\s*(?:cats?|hounds?|dogs?)\b)",  # not a Maine Coon, a coon dog
    r"spick?s?(?!\s*(?:and|&|-and-)\s*span\b)",  # not `spick and span`, clean and tidy
    r"wetbacks?",
    r"chinks?(?!\s+in\s+(?:the|his|her|their|its|our|my|your)\s+armou?r)",
    r"gooks?",
    r"kikes?",
    r"beaners?",
    r"towel\s?heads?",
    r"rag\s?heads?",
    r"pakis?",
    # not the British cigarette: `out for a fag`, `a fag break`, `fag ends`
    r"(?<!for a )(?<!smoke a )(?<!light a )(?<!have a )(?<!roll a )(?<!rolled a )"
    r"fag+s?(?!\s+(?:break|breaks|packets?|ends?|butts?)\b)",
    r"fag+ots?",
    r"fag+y",
    r"(?<!van\s)dykes?",
    r"trann(?:y|ies)(?!\s+(?:fluid|oil|cooler|filter|pan|shop|rebuild|swap)\b)",  # a gearbox's
    r"shemales?",
    # not the verb of engineering and physics (`retard the ignition timing`, `retards growth`,
    # a `retarded potential`)
    r"retards?(?!\s+(?:the|its|their|growth|progress|development|ignition|combustion|corrosion"
    r"|germination|spark|timing|flames?)\b)",
    r"retarded(?!\s+(?:growth|ignition|timing|spark|development|potentials?|time|flow"
    r"|acceleration)\b)",
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
_PROFANITY = list(_WORDS["_PROFANITY"])  # sexual insults: abuse wherever they stand
# Strong words that friends swear with (`oh fuck`, `fucking cool`, `Bitches gonna die!`, `that
# motherfucker` of a monster in a game) are abuse where they are aimed at someone: said to
# `you`, of `he`/`she`, with an insult, as a call (`, bitch!`), or alone. Elsewhere they are left
# to the classifier and the model, which read them without the expletives (`judged_innocent`)
# and flag them at most.
_INSULT_NOUN = "|".join(_WORDS["_INSULT_NOUNS"])
_EXPLETIVE = "|".join(_WORDS["_EXPLETIVES"])
_DUMB = (  # what `you fucking ...` calls someone
    r"morons?|idiots?|imbeciles?|losers?|clowns?|pigs?|dogs?|freaks?|creeps?|jerks?|retards?"
    r"|\w+(?:holes?|heads?|faces?|wits?|tards?|bags?|suckers?)"
)
_FUCKING = r"(?:fucking|fuckin|fkin|fking|fkn|effing|motherfucking)"  # as a word of insult
_BEFORE_INSULT = (  # what may stand before an insult word: `such a total`, `a lying`
    r"(?:(?:such|just|only|nothing\s+but|an?|one|the|big|little|real|total|complete|absolute"
    rf"|lying|dirty|stinking|{_INSULT})\s+)"
)
_AIMED = [
    # at you: `you bastard`, `you're a prick`, `ur such a fucking asshole`
    rf"(?:you|u|ya|ur|youre)(?:'?re|\s+are|\s+r)?\s+{_BEFORE_INSULT}{{0,3}}(?:{_INSULT_NOUN})",
    # of someone or of a group: `he's an asshole`, `most X are absolute bastards`
    rf"(?:he|she|they|(?:your|ur|yo|his|her|their)\s+\w+|(?:all|most|many|these|those)\s+"
    rf"(?:\w+\s+)?\w+)(?:'s|'re|\s+is|\s+are|\s+r|\s+was|\s+were)(?:\s+all)?\s+"
    rf"{_BEFORE_INSULT}{{0,3}}(?:{_INSULT_NOUN})",
    rf"to\s+be\s+{_BEFORE_INSULT}{{1,3}}(?:{_INSULT_NOUN})",  # `in their nature to be a prick`
    # with an insult: `stupid bastard`, `complete assholes`, `fucking knob gobbling douchebag`
    rf"(?:{_INSULT}|motherfucking|dirty|lying|stinking|total|complete|absolute|utter|massive"
    rf"|annoying)\s+(?:[\w-]+\s+){{0,2}}(?:{_INSULT_NOUN})",
    # `fucking moron`, `fucking incompetent idiots`
    rf"{_FUCKING}\s+(?:\w+\s+)?(?:{_DUMB}|gay|retarded)",
    rf"(?:all|these|those|bunch\s+of)\s+(?:\w+\s+)?(?:{_INSULT_NOUN})",  # `those bastards`
    # a call: `get out, asshole!`, `Bastard, give it back`
    rf"(?<=,)\s*(?:{_INSULT_NOUN})(?=\W*$)",
    rf"^\W*(?:{_INSULT_NOUN})(?=\s*,)",
    # expletives said to someone, of someone or a group, or as a proposition
    r"(?:fuck|fck|fuk|fvck|phuc?k|f+u+c+k+)(?:ing|in)?\s+(?:you|u|ya|yu|yourself|urself"
    r"|yourselves|themselves|himself|herself|off|your|ur|yo|him|her|them"
    r"|(?:this|that)\s+(?:guy|girl|bastard|asshole|prick))",
    r"(?:fuck|fck|fuk)\s+(?-i:[A-Z])\w+",  # `Fuck Islam`, `Fuck <name>`
    r"(?:fuck|fck|fuk)\s*(?:all|every)\s+(?:\w+\s+)?(?:people|persons|men|women|\w+s)\b",
    r"(?:want|like|wanna|let'?s|lets|to)\s+(?:to\s+)?fuck(?:\s+(?:me|you|u|her|him))?(?=\W|$)",
    r"(?:you|u)\s+(?:\w+\s+)?fuck\s+me",
    r"(?:give|get)\s+(?:me|us)\s+a\s+fuck",
    r"(?:good|great|quick|nice|hard)\s+fuck(?=\W|$)",
    r"(?:are|is|be|'re|'s)\s+(?:\w+\s+)?(?:fucked|fukced|fcked|fuked)(?:\s+up)?\s+in\s+the\s+head",
    r"shut\s+(?:the\s+)?(?:fuck|fck|fuk|f\w*k)\s+up",
    r"stfu",
    r"gtfo",
    r"eat\s+shit",
    r"piss\s+off",
    # `what is it with you fucking X`
    rf"(?:you|u|ya)\s+{_FUCKING}\s+(?!guys\b)(?:\w+\s+)?(?:people|men|women|\w+s)\b",
    r"(?:you|u|ya|he|she|they)(?:'?re|\s+are|\s+r|'s|\s+is)\s+(?:so\s+)?full\s+(?:of|o'?|a)\s+"
    r"(?:shit|schitt?|shite)",
    r"camel\s?fuck\w*",
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
    # not the advice against it (`do not kill yourself`, `never kill yourself over a job`)
    r"(?<!\bnot )(?<!n't )(?<!\bdont )(?<!never )"
    r"kill\s+(?:yourself|urself|your\s+self|yo\s+self|yourselves|yaselves|urselves)",
    r"why\s+(?:not|don'?t\s+(?:you|u))\s+(?:just\s+|go\s+)?kill\s+(?:yourself|urself)",
    r"kys",
    r"(?:hope|wish)\s+(?:you|u)\s+(?:(?!(?:not|never|don't|dont|won't|wont)\b)[\w']+\s+){0,3}"
    r"(?:die|dies|died|get\s+(?:raped|killed|shot)|rot|burn)",
    r"(?:you|u)\s+(?:should|deserve\s+to|need\s+to|must|ought\s+to)\s+(?:\w+\s+)?"
    r"(?:die(?!\s+(?:your|ur|my|her|his|their|the)\s+(?:\w+\s+)?hair)"  # `die your hair`: dye
    r"|be\s+(?:killed|shot|raped|hanged|hung))",
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
    # not the Latin of a degree (`summa cum laude`) nor a `kitchen-cum-diner`
    r"(?<!summa )(?<!magna )(?<!-)cum(?!\s+(?:laude|grano)\b)(?:s|ming|shots?|sluts?|dumpsters?)?"
    r"(?!-\w)",
    r"jizz\w*",
    r"send\s+(?:me\s+)?nudes?",
    r"nudes",
    r"(?:take|get)\s+(?:off\s+)?your\s+clothes",
    r"(?:have|had|having|want|give\s+me|let'?s\s+have)\s+sex\s+with\s+(?:me|you|u)",
    r"give\s+me\s+sex",
    r"sex\s+with\s+(?:me|you|u)\b",
    r"horny",
    r"dildos?",
    r"pussy(?!\s*(?:willows?|cats?|foot))",  # not the plant nor the cat
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
    rf"{_BEFORE_INSULT}{{0,2}}(?:{_INSULT_NOUN})",  # `Bitch!`, `stupid bastard.`
    r"die",
    r"fuck\s+me",  # said to someone, a proposition (`fuck me, that's huge` is not alone)
    r"kill\s+(?:you|u)",
    r"die\s+now",
    r"just\s+die",
]


def _in_words(entries: list[str]) -> str:
    return r"(?<![\w@-])(?:" + "|".join(entries) + r")(?![\w-])"


_IN_WORDS = _in_words(_SLURS + _PROFANITY + _AIMED + _THREATS + _HARASSMENT)
ABUSIVE = re.compile(_IN_WORDS + r"|^\W*(?:" + "|".join(_ALONE) + r")\W*$", re.IGNORECASE)
# A disguised sentence is searched for the terms alone: `DIIIIIE!` is excitement, not `die`.
_DISGUISABLE = re.compile(_IN_WORDS, re.IGNORECASE)
# Narrative (`threats=False`): the slurs and the profanity only; characters of a story threaten,
# fight and court one another (`we will kill you too`, `go to bed with her`).
_NARRATIVE = re.compile(_in_words(_SLURS + _PROFANITY + _AIMED), re.IGNORECASE)
_SWEARING = re.compile(_in_words([_EXPLETIVE, _INSULT_NOUN]), re.IGNORECASE)
_CALLED_NAMES = re.compile(
    _in_words([rf"(?:you|u|ya)\s+(?:all\s+|guys\s+|people\s+)?(?:\w+\s+)?(?:{_DUMB})"]),
    re.IGNORECASE,
)


# The first three letters of a word each entry above needs (keep them in step), and words a
# profanity may hide inside: a sentence with none of them is not searched (the search costs
# ~0.2 ms a sentence). Checked equal to the full search on the 71,512 sentences of
# benchmarks/corpora.
_PREFIXES = frozenset(_WORDS["_PREFIXES"])
_INFIXES = ("fuck", "fvck", "fuker", "fvker", "cunt", "nigg", "cocksuck")
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
    hoe`, `a packet of fags`) and without expletives and insult words (`oh fuck`, `Bitches
    gonna die!`: where they were aimed at someone, the terms have dropped the sentence already).
    The classifier reads this, so it does not drop what the terms kept for the word alone."""
    for word in _other_senses(sentence):
        sentence = re.sub(rf"\b{word.pattern}\b", " ", sentence, flags=re.IGNORECASE)
    return _SWEARING.sub(" ", sentence)


def _may_hold_term(sentence: str) -> bool:
    """The three-letter prefilter: False where no term can match."""
    lower = sentence.lower()
    return any(w[:3] in _PREFIXES for w in _WORD.findall(lower)) or any(
        i in lower for i in _INFIXES
    )


def _holds_term(sentence: str, terms: re.Pattern[str] = ABUSIVE) -> bool:
    """A term of `terms` in the sentence, not in its other sense, or swearing at someone
    (`_swears_at_someone`); the prefilter first."""
    if not _may_hold_term(sentence):
        return False
    return _swears_at_someone(sentence) or any(
        not _other_sense(m.group(), sentence) for m in terms.finditer(sentence)
    )


def abusive_terms(sentence: str, before: str = "", threats: bool = True) -> bool:
    """Whether the sentence holds a slur, a threat, strong profanity, sexual harassment or hate
    aimed at a group (`group_hate`; read after `before`, the sentence before it, too), as written
    or once its disguises are undone (`undisguised`: `f*ck`, `sh1t`, `f u c k`). Without
    `threats` (narrative), only slurs, profanity and hate aimed at a group count."""
    whole, disguisable = (ABUSIVE, _DISGUISABLE) if threats else (_NARRATIVE, _NARRATIVE)
    return (
        _holds_term(sentence, whole)
        or group_hate(sentence, before)
        or any(_holds_term(v, disguisable) or group_hate(v, before) for v in undisguised(sentence))
    )


def _swears_at_someone(sentence: str) -> bool:
    """An expletive or an insult word in a sentence that names a protected group (`X should get
    the fuck out`, `if the idea comes from a X, it must be bullshit`) or calls the listener names
    (`this shit is broken again, you idiots`)."""
    if _SWEARING.search(sentence) is None:
        return False
    return _CALLED_NAMES.search(sentence) is not None or names_group(sentence)
