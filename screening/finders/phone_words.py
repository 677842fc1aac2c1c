"""What the words around a digit run say of it (`screening.finders.phones` asks): a phone
word before it (`phone_context`: `Phone:`, `tel.`, `WhatsApp`, `Telefon`...), a reference word
nearer (`order`, `invoice`, `ISSN`: no phone), or the text calling it a contact detail
(`said_to_be_contact`): when to call written right after it (`..., Mon-Fri`, `... works until
Friday`, `du lundi au vendredi`), or its line alone in a signature after a letter's closing
(`Best regards,`)."""

from __future__ import annotations

import re

from screening.persons.name_words import SIGN_OFFS_ABROAD

# Words before a phone number, in the languages of the screen's users (lower case).
PHONE_WORDS = (
    "phone", "telephone", "tel", "tel.", "mobile", "mob", "cell", "cellphone", "call", "ring",
    "text me", "sms", "whatsapp", "signal", "viber", "telegram", "fax", "landline", "hotline",
    "reach me", "dial", "contact", "kontakt", "contacto", "contatto",
    "telefon", "telefonnummer", "handy", "handynummer", "mobil", "mobilnummer", "rufnummer",
    "anrufen",  # de, da, no, sv
    "téléphone", "tél", "portable", "numéro", "appelez", "appeler",  # fr
    "teléfono", "telefono", "móvil", "movil", "celular", "llamar", "llame", "número",  # es, pt
    "cellulare", "chiamare", "numero",  # it
    "telefoon", "mobiel", "nummer", "bellen",  # nl
    "telefone", "telemóvel", "ligar",  # pt
    "puhelin", "numer", "komórka", "telefonu", "телефон", "тел", "номер", "τηλ",  # fi, pl, ru, el
    "電話", "携帯", "电话", "手机", "전화", "फ़ोन", "هاتف",  # ja, zh, ko, hi, ar
)  # fmt: skip
# A phone word is a word of its own, or with an English ending (`calls`, `phoned`): not the
# start of `telemetry`, `cellular` or `phonenumbers`.
_PHONE_WORD = re.compile(
    r"(?<![^\W\d_])(?:" + "|".join(re.escape(w) for w in PHONE_WORDS) + r")"
    r"(?:s|es|d|ed|ing)?(?![a-zA-Z])",
    re.IGNORECASE,
)
_CONTEXT = 40
# Words that make a nearer digit run a reference, not a phone ("The order number is #2640684"):
# a run in national form after one (and no phone word nearer) is no phone at all.
_REFERENCE_WORD = re.compile(
    r"(?<![^\W\d_])(?:order|invoice|ticket|tracking|reference|ref|case|booking|account|"
    r"serial|sku|id|version|build|release|model|part|item|product|batch|lot|policy|claim|card|"
    r"member|customer|patient|employee|student|licen[cs]e|registration|passport|tax|vat|iban|"
    r"routing|transaction|confirmation|shipment|parcel|isbn|imei|issue|timestamp|epoch|unix|"
    r"pin|otp|total|amount|sum|price|cost|balance|count|population|size|score|qty|quantity|"
    r"salary|revenue|budget|weight|height|length|distance|area|volume|zip|postcode|postal|"
    r"code|year|date|time|duration|seed|port|offset|limit|issn|doi|std|pp|rfc|iso|number\s+of)\b",
    re.IGNORECASE,
)
# `number` as a phone word (weak: only with no reference word in the window, not `number of`).
_NUMBER_WORD = re.compile(
    r"(?<![^\W\d_])(?:number\b(?!\s+of\b)|no\.|nr\b\.?|num\b\.?)", re.IGNORECASE
)
# What may stand between a phone word and the number it introduces (`Phone: `, `tel. no. `).
_ADJACENT = re.compile(r"(?:[^\w]|_|\b(?:number|no|nr|num|is)\b)*", re.IGNORECASE)


def phone_context(text: str, start: int, digits: int) -> tuple[bool, bool, bool]:
    """(near, adjacent, reference): a phone word shortly before the digit run, with no
    reference word (order, invoice, ticket...) nearer to it, and the run not written as a
    reference (`#2640684`); adjacent: only punctuation, `number`, `no.` or `is` between the two;
    reference: a reference word nearer (or the `#`)."""
    before = text[max(0, start - _CONTEXT) : start]
    if before.rstrip().endswith("#"):
        return False, False, True
    phone = [m.end() for m in _PHONE_WORD.finditer(before)]
    reference = [m.end() for m in _REFERENCE_WORD.finditer(before)]
    if not reference and digits >= 7:
        phone = sorted(phone + [m.end() for m in _NUMBER_WORD.finditer(before)])
    if reference and (not phone or phone[-1] < reference[-1]):
        return False, False, True
    if not phone:
        return False, False, False
    return True, bool(_ADJACENT.fullmatch(before, phone[-1])), False


# When a number can be reached, written right after it: a weekday, weekdays, hours (`..., Mon-Fri`,
# `... works until Friday`, `... (9am-5pm)`). A few words may come between, none that counts
# something (`1500000 visitors by Monday` is no phone).
_AVAILABLE_WORDS = (
    "works|work|is|are|best|fine|good|only|available|open|reachable|answered|staffed|from|"
    "between|until|till|til|after|before|during"
)
# Weekdays in English, German, French, Spanish, Italian, Dutch and Portuguese, whole; their
# abbreviations capitalised, in a range (`Mo-Fr`, `Lun-Ven`, `Ma-Vr`, `Seg-Sex`).
_WEEKDAYS = (
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|week(?:days?|ends?|nights?)|"
    r"montags?|dienstags?|mittwochs?|donnerstags?|freitags?|samstags?|sonntags?|werktags|"
    r"lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|en semaine|"
    r"lunes|martes|miércoles|jueves|viernes|sábados?|domingos?|"
    r"lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica|"
    r"maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag|werkdagen|"
    r"segunda(?:-feira)?|terça(?:-feira)?|sexta(?:-feira)?|dias úteis"
)
_DAY_RANGE = (
    r"(?:Mo|Mon|Lun|Lu|Ma|Seg|Di|Tu|Tue)[ \t]*[-\u2013][ \t]*"
    r"(?:Fr|Fri|Ven|Vie|Vr|Sex|Sa|Sat|Su|Sun)\.?"
)
# ... and from one day to another (`du lundi au vendredi`, `von Montag bis Freitag`)
_FROM_DAY_TO_DAY = (
    r"(?:du|de|dal|von|vom|van|from)[ \t]+(?:" + _WEEKDAYS + r")[ \t]+"
    r"(?:au|a|à|al|bis|tot|to)[ \t]+(?:" + _WEEKDAYS + r")"
)
_AVAILABLE_AFTER = re.compile(
    r"[ \t]*[,;:(\-\u2013]?[ \t]*(?:(?i:" + _FROM_DAY_TO_DAY + r")"
    r"|(?:(?i:" + _AVAILABLE_WORDS + r")[ \t]+){0,3}"
    r"(?:(?i:" + _WEEKDAYS + r"|(?:mornings?|afternoons?|evenings?)|"
    r"(?:business|office|opening|working) hours|any ?time|\d{1,2}(?::\d\d)?[ \t]*[ap]\.?m\b\.?)"
    r"|" + _DAY_RANGE + r"|(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b|24/7))(?![^\W\d_])"
)
# A closing line of a letter or an e-mail: the lines after it are a signature. Other languages'
# closings are the person rules' (`screening.persons.name_words.SIGN_OFFS_ABROAD`).
_CLOSING = re.compile(
    r"(?i:(?:(?:best|kind|warm|warmest|many|with)[ \t]+)?(?:regards|wishes|thanks)|thank you|"
    r"thx|cheers|sincerely(?: yours)?|yours(?: truly| sincerely| faithfully)?|best|"
    r"respectfully|"
    + "|".join(re.escape(x.strip()) for x in SIGN_OFFS_ABROAD.split(",") if x.strip())
    + r")[ \t]*[,.!]?|--[ \t]*"
)


def _in_signature(text: str, start: int, end: int) -> bool:
    """Alone on its line, one to three lines after a letter's closing (`Best regards,`)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if text[line_start:start].strip() or text[end : None if line_end == -1 else line_end].strip():
        return False
    lines = text[:line_start].split("\n")[:-1][-3:]
    return any(_CLOSING.fullmatch(line.strip()) for line in lines)


def said_to_be_contact(text: str, start: int, end: int) -> bool:
    """The text around the run at `start:end` says it is a contact detail: when to call written
    right after it (`_AVAILABLE_AFTER`), or it stands alone in a signature (`_in_signature`)."""
    return bool(_AVAILABLE_AFTER.match(text, end)) or _in_signature(text, start, end)
