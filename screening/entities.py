"""The entity types the screen knows: credential types, Presidio's recognizers and our own.

Kept apart from `screening.detectors` (which loads Presidio, spaCy and transformers) and from
the finders (`screening.finders.credentials` loads detect-secrets) so that config validation and
the command line start without loading any detection code: the table of finders
(`screening.finder_table`) names its finders without importing them.
"""

from __future__ import annotations

from screening.finder_table import FINDERS

# Credentials and secrets (the table's credential finder).
SECRET_ENTITIES: tuple[str, ...] = tuple(e for f in FINDERS if f.secret for e in f.entities)

# Presidio's predefined recognizers (presidio-analyzer 2.2) plus spaCy's NER types.
PRESIDIO_ENTITIES: frozenset[str] = frozenset(
    {
        "PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS",
        "US_SSN", "US_PASSPORT", "US_DRIVER_LICENSE", "US_BANK_NUMBER", "US_ITIN", "UK_NHS",
        "LOCATION", "DATE_TIME", "NRP", "URL", "CRYPTO", "MEDICAL_LICENSE", "ORGANIZATION",
        "MAC_ADDRESS", "UUID", "AGE", "ID",
    }
)  # fmt: skip

# Personal data found by recognizers of our own that Presidio has no recognizer for.
OWN_PII_ENTITIES: tuple[str, ...] = tuple(
    e for f in FINDERS if not f.secret for e in f.entities if e not in PRESIDIO_ENTITIES
)

# Every personal-data type a `screen.entities` rule may name.
PII_ENTITIES: frozenset[str] = PRESIDIO_ENTITIES | frozenset(OWN_PII_ENTITIES)
