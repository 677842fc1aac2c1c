"""The grammar of street addresses: street types, units, states and provinces, postcodes,
tails and the street forms of each country style, as regular expressions (word lists in
`screening/data/address_words.json`), and the record of a street found (`Found`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from screening.shipped import word_lists

WORDS = word_lists("address_words.json")  # word lists (screening/data/address_words.json)

ENTITY = "STREET_ADDRESS"
WITH_TAIL, STREET, AMBIGUOUS = 0.85, 0.7, 0.4


def cases(words: list[str] | tuple[str, ...]) -> str:
    """An alternation of each word as written, in lower case and in upper case."""
    variants = {v for w in words for v in (w, w.lower(), w.upper(), w[:1].upper() + w[1:])}
    return "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))


# Street types that make an address on their own after a house number and a name.
CORE_TYPES = list(WORDS["CORE_TYPES"])
EXTRA_TYPES = tuple(WORDS["EXTRA_TYPES"])
ROUTE_TYPES = (
    "Highway|HIGHWAY|Hwy|HWY|Route|ROUTE|Rte|RTE|Road|ROAD|Rd|RD|FM|RM|PR|CR|SR|Business|BUSINESS|"
    "Interstate|I-|US|U\\.S\\.|State Road|State Route|County Road|COUNTY ROAD|CO RD|Co Rd|Farm Road|"
    "hwy|highway|rte|route|county road|state route|state road|Spur|SPUR|Loop|LOOP|Business Loop|"
    "U S|us|business|spur|fm|sr|cr|rd"
)
US_STATES = list(WORDS["US_STATES"])
CA_PROVINCES = list(WORDS["CA_PROVINCES"])
UNIT_WORDS = list(WORDS["UNIT_WORDS"])
# Unit designators that stand without a number (USPS Publication 28, C2).
# Full words only in capitals ("FRONT"): "Flat Front" is prose.
BARE_UNITS = list(WORDS["BARE_UNITS"])
ORDINAL = r"\d{1,3}(?:st|nd|rd|th|ST|ND|RD|TH|St|Nd|Rd|Th)"

DIRECTION = (
    r"(?:[NS]\.[EW]\.|N|S|E|W|NE|NW|SE|SW|North|South|East|West|NORTH|SOUTH|EAST|WEST|So|"
    r"Northeast|Northwest|Southeast|Southwest)\.?"
)
DIRECTION_ANY = rf"(?:{DIRECTION}|(?:n|s|e|w|ne|nw|se|sw|north|south|east|west)\.?)"
WORD_NUMBERS = "One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve"
# a capitalised word (O'Neil, St., Saint-Denis, Łaziska, Środa)
CAP = r"[A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f][\w'\u2019.\-]*"
# "rosa l parks", "joseph e. lowry": an initial too
NAME_WORD = rf"(?:{CAP}|{ORDINAL}|[a-z][a-z'\-]*|[a-z]\.(?=[ \t]))"
_CITY = rf"{CAP}(?:[ \-]{CAP}){{0,3}}"
# A British town or county: "Isle of Man", "Newcastle upon Tyne", "Stratford-upon-Avon".
CITY_UK = rf"{CAP}(?:[ \-](?:(?:of|upon|on|under|le|in)[ \-])?{CAP}){{0,3}}"
# A European city: "Waidhofen an der Ybbs", "Póvoa de Santa Iria", "'s-Heer Abtskerke".
_CITY_EU = (
    rf"(?:'s-)?{CAP}(?:[ \-](?:(?:an der|an|am|im|bei|de|del|la|le|les|sur|sous|aan|den|op|"
    rf"di|do|da|dos)[ ])?{CAP}){{0,4}}"
)
# The postcode of a European address line: 10115, 1015 CJ, 7108WL, 59-700, 411 34, 1000-001.
EU_POSTCODE = (
    r"(?:[A-Z]{1,2}-)?(?:\d{2}-\d{3}|\d{3}[ ]\d{2}|\d{4}-\d{3}|\d{4}[ ]?[A-Z]{2}(?![a-z])|\d{4,6})"
)
EU_TAIL = rf"(?:{EU_POSTCODE}(?:\s*\n\s*|,?\s+){_CITY_EU}|(?P<city>{_CITY_EU})(?=[ \t]*(?:$|\n)))"
UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
CA_POSTCODE = r"[A-Z]\d[A-Z]\s?\d[A-Z]\d"
SEP = r"(?:\s*,\s*(?:\n\s*)?|\s*\n\s*|\s+)"  # between parts: a comma, a line break or spaces
US_STATE_NAMES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|"
    "Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|"
    "Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|"
    "New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|"
    "Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|"
    "West Virginia|Wisconsin|Wyoming|District of Columbia|Puerto Rico"
)
_STATE = rf"(?:{'|'.join(US_STATES)}|{US_STATE_NAMES}|{US_STATE_NAMES.upper()})"
_CITY_ANY = r"[^\W\d_][\w'.\-]*(?:[ ][^\W\d_][\w'.\-]*){0,3}"
_COUNTRY = (
    r"(?:,?\s*(?:\n\s*)?(?:United States(?: of America)?|USA|U\.S\.A\.|Canada|United Kingdom|UK|"
    r"England|Scotland|Wales|Deutschland|Germany|France|Nederland|Netherlands|España|Spain|"
    r"Italia|Italy|Portugal|Polska|Poland|Sverige|Sweden|Danmark|Denmark|Belgi(?:um|ë|que)|"
    r"Österreich|Austria|Schweiz|Suisse|Switzerland|Ireland)\b)?"
)
_ZIP = r"\d{5}(?:[-\u2013\u2014]?\d{4})?(?!\d)"
_STATE_ABBR = "|".join(US_STATES)
_PROVINCE = "|".join(CA_PROVINCES)
# Canadian provinces and territories by name, in English and French, and `B.C.`
CA_PROVINCE_NAMES = (
    "Ontario|Qu[eé]bec|Nova Scotia|Nouvelle-[EÉ]cosse|New Brunswick|Nouveau-Brunswick|Manitoba|"
    "British Columbia|Colombie-Britannique|Prince Edward Island|[IÎ]le-du-Prince-[EÉ]douard|"
    "Saskatchewan|Alberta|Newfoundland and Labrador|Newfoundland|Terre-Neuve-et-Labrador|Yukon|"
    "Northwest Territories|Territoires [Dd]u Nord-Ouest|Nunavut|B\\.C\\."
)
# A Canadian city and province: `Montréal (Québec) H2S 3L5 Canada`, `Gatineau (Québec) Canada
# J9A 1L8`, `Winnipeg (Manitoba)`, `Barrie, Ontario L4N 8G1`, `Toronto, Ontario, Canada`.
_CA_COUNTRY = r"(?:[ \t]*,?[ \t]*(?:Canada|CANADA)(?![\w\-]))?"
_CA_TAIL = (
    rf"(?:(?:{_CITY_ANY}[ \t]*,?[ \t]*)?\((?:{CA_PROVINCE_NAMES})\){_CA_COUNTRY}"
    rf"(?:[ \t]*,?[ \t]*{CA_POSTCODE}(?![\w\-]){_CA_COUNTRY})?"
    rf"|{_CITY_ANY}(?:\s*,\s*|\s+)(?:{CA_PROVINCE_NAMES})(?![\w\-])(?:,?\s+{CA_POSTCODE})?)"
)
# US states in lower case that are no English word ("in", "me", "or", "ok", "hi" are)
_LOWER_STATES = "ak|az|ar|ca|ct|dc|fl|ga|ia|il|ks|ky|md|mi|mn|ms|mt|nc|nd|nh|nj|nm|nv|ny|ri|sc|sd|tn|tx|ut|va|vt|wa|wi|wv|wy"
# Australian states and territories: "Brookvale NSW 2100", "Melbourne, VIC 3004"
_AU_STATES = "NSW|VIC|Vic|QLD|Qld|SA|WA|TAS|Tas|NT|ACT"
TAIL_US_CA_UK = (
    rf"{SEP}(?P<tail>(?:{_CA_TAIL}|{_CITY_ANY}(?:\s*,\s*|\s*\n\s*|\s+)"
    rf"(?:(?:{_STATE}|{'|'.join(s.lower() for s in US_STATES)})\.?,?\s+{_ZIP}"
    rf"|(?:{_PROVINCE}),?\s+{CA_POSTCODE}"
    rf"|(?:{_AU_STATES})\.?,?\s+\d{{4}}"
    rf"|{UK_POSTCODE}|{CA_POSTCODE}|{_ZIP})"
    rf"|{_CITY},\s*(?:{_STATE_ABBR}|{_PROVINCE}|{US_STATE_NAMES}|{US_STATE_NAMES.upper()})"
    # in lower case, a city, a comma and a state ending the line: "los angeles, ca"
    rf"|{_CITY_ANY},[ \t]*(?:{_LOWER_STATES})(?=[ \t]*(?:$|\n))"
    rf"|{_CITY}[ \t]+(?:{_STATE_ABBR}|{_PROVINCE}|{US_STATE_NAMES}|{US_STATE_NAMES.upper()})"
    rf"(?=[ \t]*(?:$|\n|[.;]))"
    rf"|(?:{_STATE_ABBR})\s+{_ZIP}|{UK_POSTCODE}"
    rf"|{_CITY}(?:,\s*|\s*\n\s*)[A-Z]{{1,2}}\d[A-Z\d]?(?=[ \t]*(?:$|\n))"
    # a city alone: only at the end of its line (checked: on the street's own line)
    rf"|(?P<city>{_CITY})(?=[ \t]*(?:$|\n)))(?:\b|(?<=\))){_COUNTRY})"
)
ADDRESS_WORDS = re.compile(
    r"(?:address|addr|live[sd]? (?:at|on)|living at|located at|reside[sd]? at|ship(?:ped)? to|"
    r"deliver(?:ed)? to|send (?:it )?to|mail(?:ed)? to|office (?:is )?at|moved to|based at|"
    r"residence|street|domicile|adresse|direcci[oó]n|indirizzo|endere[cç]o|anschrift|adres)"
    r"\W{0,3}(?:is\s+|at\s+|:\s*)?$",
    re.IGNORECASE,
)
# Street words no one writes in lower case after a number but for a street ("1919 west taylor
# street", "271 spring st nw"); "road", "drive", "way", "court", "walk" are everyday words too.
PLAIN_TYPES = frozenset(WORDS["PLAIN_TYPES"])
# Words after a number that make it a count or a measure, not a house number.
QUANTITIES = frozenset(WORDS["QUANTITIES"])
# The last words of HTTP status lines (RFC 9110): "502 Bad Gateway" is no street.
_HTTP_REASONS = frozenset(WORDS["_HTTP_REASONS"])
STOP = frozenset(WORDS["STOP"])

# Street name first: German, Dutch, Nordic, Polish compounds and two-word forms.
# The compounds also written after their number ("1 Hämeenkatu", "12 Lindenstraße").
COMPOUND = (
    "straße|strasse|weg|gasse|platz|allee|straat|gracht|laan|vej|gatan|vägen|gata|veien|katu|"
    "kuja|utca|ulica"
)
_EU_SUFFIXES = (
    "straße|strasse|str\\.|weg|gasse|platz|allee|damm|ufer|chaussee|steig|pfad|graben|"
    "straat|gracht|laan|plein|kade|singel|dijk|dreef|boulevard|vej|gade|gatan|vägen|gata|veien|"
    "veg|katu|utca|ulica|stigen|gränd|torget|stræde|strade|allé|plads|torv|kuja|polku"
)
_EU_TYPES_WORD = (
    "Straße|Strasse|Str\\.|Weg|Gasse|Platz|Allee|Damm|Ufer|Chaussee|Ring|Markt|Steig|Straat|"
    "Laan|Plein|Kade|Gracht|Allé|Vej|Gade|Plads|Torv|Stræde|Gata|Gatan|Vägen"
)
NAME_FIRST = re.compile(
    rf"(?<![\w\-])(?P<street>(?:(?:Am|An der|Auf dem|Im|In der|Unter den)[ ])?"
    rf"(?:(?:{CAP}[ ]){{0,2}}{CAP}(?:{_EU_SUFFIXES}|(?P<risky>ring|pad|steeg))|"
    rf"(?:{CAP}[ \-]){{1,2}}(?:{_EU_TYPES_WORD})|"
    # Hungarian street words, in lower case: "Kazinczy utca 14", "kazinczy utca, 14"
    rf"(?:{CAP}[ ]|[a-z\u00e0-\u017f]+[ ]){{1,2}}(?:utca|útja|út|tér|körút|köz|fasor|sétány)|"
    rf"(?:ul\.|al\.|pl\.|ulica|aleja|plac|os\.|osiedle)\s{CAP}(?:\s{CAP})?|"
    # Norwegian, Swedish, Danish street words written apart: "Maria Dehlis vei 15"
    rf"(?:{CAP}[ ]){{1,2}}(?:vei|veien|vegen|veg|gate|gata|gaten|plass|torg|allé|stien|bakken|"
    rf"vägen|väg|gatan|gränd|vej|gade|plads))"
    r",?[ \t]+\d{1,4}(?:[ ]?[a-zA-Z](?!\w))?(?:[ ]?[-/][ ]?\d{1,4}[a-zA-Z]?)?\b"
    # a floor and side after the number: Danish "4 t.v.", "2. sal", Swedish "1 trappa upp"
    r"(?:,?[ \t]+(?:(?:\d{1,2}\.?|st\.?|kl\.?)[ \t]*(?:t\.?[ ]?v\.?|th\.?|tv|mf\.?|sal\.?)"
    r"|\d{1,2}[ \t]+(?:trappor|trappa|tr\.)(?:[ \t]+(?:upp|ned))?)(?![\w]))?)"
    rf"(?:{SEP}(?P<tail>{EU_TAIL}))?",
)

# A street without a street word ("Witthau 3", "Adama Asnyka 1", Mexican "LÓPEZ MATEOS, 106,
# 21840, MEXICALI"), kept only with the postcode
# and city after it that end the line: 5 digits (not a year-like 4), Polish 00-000, Nordic 4.
NAME_NUMBER_POSTCODE = re.compile(
    # a Czech or Slovak house number: its register and street numbers ("Panenská 666/20")
    rf"(?<![\w\-])(?P<street>{CAP}(?:[ ]{CAP}){{0,2}},?[ \t]+\d{{1,4}}[a-zA-Z]?(?:[/\-]\d{{1,4}}[a-zA-Z]?)?)"
    # postcodes: 5 digits, Polish 00-000, Nordic 4, Czech, Slovak, Swedish, Greek 000 00
    rf"(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*)(?P<tail>(?:\d{{5}}|\d{{2}}-\d{{3}}|\d{{3}}[ ]\d{{2}}|(?!19|20)\d{{4}}),?[ \t]+"
    rf"{_CITY_EU})(?=[ \t]*(?:$|\n|,))"
)

# House number, street type, name: French (and Belgian, Swiss, Canadian French).
_FR_TYPES = cases(
    [
        "rue",
        "avenue",
        "av.",
        "bd",
        "boul.",
        "boul",
        "boulevard",
        "place",
        "pl.",
        "chemin",
        "allée",
        "allee",
        "impasse",
        "quai",
        "route",
        "rte",
        "cours",
        "square",
        "passage",
        "voie",
        "faubourg",
        "fg",
        "rond-point",
        "promenade",
        "sentier",
        "ruelle",
        "esplanade",
        "villa",
        "cité",
        "lieu-dit",
        "hameau",
    ]
)
_FR_PARTICLE = "(?:de|du|des|la|le|les|l'|d'|l\u2019|d\u2019|aux|au|sur|en|et)"
# A unit after a French street (`bureau 1105`, `app. 4`) and a Canadian post-office box (`C.P.
# 500`, `Case postale 710`).
_FR_UNIT = (
    r"(?:,?[ \t]+(?:[Bb]ureau|BUREAU|[Aa]pp\.|[Aa]ppartement|[Ll]ocal|[Ss]uite|[Pp]orte)[ \t]+"
    r"\d{1,5}[A-Za-z]?(?![\w\-]))?(?:,?[ \t]+(?:C\.P\.|CP|[Cc]ase [Pp]ostale)[ \t]+\d{1,6}(?![\w\-]))?"
)
NUMBER_FIRST_FR = re.compile(
    rf"(?<![\w\-])(?P<street>\d{{1,4}}(?:\s?(?:bis|ter|quater|[A-Da-d]))?,?\s+"
    # an ordinal before the type: `18e rue`, `1re Avenue`
    rf"(?:\d{{1,3}}(?:e|re|er|ème)\s+)?(?:{_FR_TYPES})\s+"
    rf"(?:{_FR_PARTICLE}\s?)*{CAP}(?:[ \-](?:{_FR_PARTICLE}\s?)*(?!C\.P\.|Bureau\b){CAP}){{0,4}}"
    rf"{_FR_UNIT})"
    rf"(?:{SEP}(?P<tail>(?:F-)?\d{{5}}\s+{_CITY}(?:\s+(?:Cedex|CEDEX)(?:\s+\d{{1,2}})?)?"
    rf"|{_CA_TAIL}(?:(?<=\))|(?<=\w))))?",
)

# Street type, name, number: Spanish, Catalan, Italian, Portuguese, Brazilian.
_ROMANCE_TYPES = (
    "Calle|C/|Avenida|Avda\\.?|Paseo|Pº|Plaza|Pza\\.|Carrera|Camino|Carretera|Ronda|Travesía|"
    "Glorieta|Carrer|Passeig|Rambla|Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|"
    "Contrada|Lungomare|Borgo|Rua|Rúa|Praça|Travessa|Alameda|Estrada|Rodovia|Av\\.|Avinguda|"
    "Rue|Avenue|Boulevard|Chaussée|Chemin|Quai|Place|Square|Dreef|Steenweg|Callejón|Cañada|"
    "Cuesta|Pasadizo|Acceso|C\\.|Incrocio|R\\.|Av|Vial|Urbanización|Pasaje|Calleja|Travesia|"
    "Pç\\.|Pça\\.?|Tv\\.|Trav\\.|Lg\\.|"
    # Romanian
    "Calea|Bulevardul|Bdul\\.?|B-dul|Splaiul|Șoseaua|Soseaua|Aleea|Piața|Piata|Intrarea|Str\\."
)
# The same in lower case, where the name may be too: "rua godinho de faria 1200"
_ROMANCE_TYPES_LOWER = "rua|calle|avenida|carrer|avinguda|calea|strada"
ROMANCE_PARTICLE = r"(?:de|del|de la|de las|de los|la|el|los|las|di|della|delle|dei|degli|del|da|do|dos|das|d'|dell'|y|e|a|à|ao|às)"
# an elided particle before the name: "Carrer d'Aragó", "Via dell'Anima"
_ROMANCE_ELIDED = r"(?:d|l|dell|D|L)['\u2019]"
TYPE_FIRST = re.compile(
    rf"(?<![\w\-])(?P<street>(?:(?:{_ROMANCE_TYPES})\s+(?:{ROMANCE_PARTICLE}\s+|{_ROMANCE_ELIDED})?"
    rf"{CAP}(?:\s+(?:{ROMANCE_PARTICLE}\s+|{_ROMANCE_ELIDED})?{CAP}){{0,4}}"
    rf"|(?:{_ROMANCE_TYPES_LOWER})\s+(?:{ROMANCE_PARTICLE}\s+)?[a-z\u00e0-\u00ff]+"
    rf"(?:\s+(?:{ROMANCE_PARTICLE}\s+)?[a-z\u00e0-\u00ff]+){{0,3}})"
    r",?\s+(?:(?:n\.?\s?º?\s?|nº\s?|n\.\s?|núm\.\s?)?\d{1,4}[A-Za-z]?|[Ss]/[Nn])"
    r"(?:(?:,?\s+|\s*-\s*)\d{1,2}\s?º\s?[A-Za-zª]?|[ ](?:Apt\.|Piso|Puerta|Appartamento|Piano|Interno|"
    r"Scala|Andar|Esc\.|Bajo)[ ]?\w{1,4})?)(?!\w)"
    rf"(?:{SEP}(?P<tail>(?:\d{{5}}-\d{{3}},?\s+{_CITY_EU}|{EU_TAIL})(?:\s+\([A-Z]{{2}}\))?|"
    rf"{_CITY},\s*\d{{5}}))?",
)

# A rural route or highway contract and its box (USPS Publication 28, 2.4 and 2.5): "RR 2 Box
# 152", "R.F.D. 3, Box 5", "HC 68 Box 23A", "HCR 45 Box 653", "Star Route Box 12", "Route 1 Box 7".
_RURAL_ROUTE = (
    r"(?:(?:R\.?R\.?|R\.?F\.?D\.?|H\.?C\.?R?\.?|"
    r"(?i:Rural Route|Rural Delivery|Highway Contract(?: Route| Rte)?|Star Route|Star Rte|Route|Rte\.?))[ \t]*#?[ \t]*(?:\d{1,4}[A-Za-z]{0,2}[ \t]*,?[ \t]*)?"
    # in lower case, or a farm road's box, only with the route's number: "rr # 1 box 103 a"
    r"|(?:rr|rt|RT|rfd|hcr?|FM|fm)[ \t]*#?[ \t]*\d{1,4}[A-Za-z]{0,2}[ \t]*,?[ \t]*)"
    r"(?i:Box|Bx)\.?[ \t]*#?[ \t]*\d{1,6}[A-Za-z]{0,2}(?:[ ][A-Za-z](?![\w\-]))?"
)
PO_BOX = re.compile(
    # a billing box's department, mail code or bin before it: "msc 410837 po box 415000"
    r"(?<![\w\-])(?P<street>(?:(?i:dept|department|file|lock ?box|drawer|msc|bin|mail code|box)"
    r"\.?[ \t]*#?[ \t]*\d{1,12},?\s+(?=(?i:p|box|post|lock|lbx)))?"
    r"(?:(?:(?i:P\.?\s?O\.?\s?(?:Box|Bx)|Post Office Box|Lock ?box|lbx)|POB|Postfach|Postbus|"
    r"Apartado(?: de Correos)?|Apdo\.?|Casella Postale|Caixa Postal|B\.P\.|BP|Boîte Postale|"
    r"GPO Box|Locked Bag)\s*#?\s*\d{1,6}(?:-\d{1,6})?|"
    # a box alone, only with a city, state and ZIP after it: "Box # 63, Cordova, AK 99574"
    r"(?P<risky>Box|BOX)[ \t]*#?[ \t]*\d{1,6}(?=[ \t]*,)|"
    # a rural route's box with its number left out, before a comma: "RR 422 Box, Douglassville"
    r"(?:RR|R\.R\.|HCR?|rr|hcr?)[ \t]*#?[ \t]*\d{1,4}[ \t]+(?:Box|BOX|box)(?=[ \t]*,)|"
    rf"{_RURAL_ROUTE})"
    r"(?:,?\s+(?i:bin|dept|department|drawer|mail code|msc|ms|box)\.?[ \t]*#?[ \t]*\d{1,8}(?:-\d{1,4})?)?"
    rf"(?:\s+(?:{ROUTE_TYPES}|hwy|rte|route|highway)\.?[ \t]*\d{{1,5}})?)\b"
    rf"(?:{TAIL_US_CA_UK}|{SEP}(?P<eutail>\d{{4,5}}\s+{_CITY})\b)?",
)
# Colombian and other Andean grid addresses: street type and number, `#`, the cross street and
# the house's distance along it: "Cra 18#63-64 B", "Calle 26 No. 68C-61", "Av. 7 # 12-30".
GRID_LATAM = re.compile(
    r"(?<![\w\-])(?P<street>(?:Calle|CALLE|Cl|CL|Carrera|CARRERA|Cra|CRA|Kr|KR|Cr|CR|Diagonal|Dg|"
    r"Transversal|Tv|Avenida|Av|AV|Ak|AK|Ac|AC)\.?[ \t]*\d{1,3}[ \t]?[A-Z]?(?:[ \t]?Bis)?[ \t]*"
    r"(?:#|No\.?|N°|Nº|n\.?º)[ \t]*\d{1,3}[ \t]?[A-Z]?[ \t]*-[ \t]*\d{1,3}(?:[ \t]+[A-Z](?!\w))?)"
)
MILITARY = re.compile(
    r"(?<![\w\-])(?P<street>(?:(?:USNS|USNV|USS|USCGC)\s+[A-Z][\w'\-]+|"
    r"(?:PSC|Unit|CMR)\s+\d{1,5},?\s+Box\s+\d{1,5}))"
    r"(?:\s*,\s*|\s*\n\s*|\s+)(?P<tail>(?:APO|FPO|DPO)\s+A[AEP]\s+\d{5}(?:-\d{4})?)\b"
)


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    score: float


YEAR = re.compile(r"(?:1[89]|20)\d\d")


def capitalised(word: str) -> bool:
    """`Augusta`, `MAIN`; not `of`, `NW`."""
    return (word[:1].isupper() and not word.isupper()) or (word.isupper() and len(word) > 3)


def http_status(street: str) -> bool:
    """An HTTP status line ("502 Bad Gateway", "404 Not Found"), not a street."""
    return bool(re.match(r"[1-5]\d\d\D", street)) and street.split()[-1] in _HTTP_REASONS
