"""The entity types the screen knows: secret patterns and Presidio's recognizers.

Kept apart from `tasks.detectors` (which loads Presidio, spaCy and transformers) so that config
validation and the command line start without loading any model code.
"""

from __future__ import annotations

# Credentials and secrets: (entity, pattern, group holding the secret, score).
SECRET_PATTERNS: tuple[tuple[str, str, int, float], ...] = (
    ("AWS_ACCESS_KEY", r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b", 1, 1.0),
    ("AWS_SECRET_KEY", r"(?i)aws_?secret_?access_?key\W{0,3}([A-Za-z0-9/+=]{40})", 1, 1.0),
    ("GITHUB_TOKEN", r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b", 1, 1.0),
    ("SLACK_TOKEN", r"\b(xox[abposr]-[A-Za-z0-9-]{10,})\b", 1, 1.0),
    (
        "AZURE_CONNECTION_STRING",
        r"((?:DefaultEndpointsProtocol=[^;\s]+;)?AccountName=[^;\s]+;AccountKey=[A-Za-z0-9+/=]{20,}"
        r"(?:;[A-Za-z]+=[^;\s]+)*)",
        1,
        1.0,
    ),
    (
        "AZURE_SAS_TOKEN",
        r"(?:[?&]|\b)(sv=\d{4}-\d{2}-\d{2}&[^\s\"']*sig=[A-Za-z0-9%+/=]{20,})",
        1,
        1.0,
    ),
    (
        "PRIVATE_KEY",
        r"(-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z]+ )?PRIVATE KEY-----)?)",
        1,
        1.0,
    ),
    ("JWT", r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})", 1, 1.0),
    (
        "PASSWORD",
        r"(?i)\b(?:password|passwd|pwd|passphrase)\b\s*(?:is|[:=])\s*[\"']?([^\s\"',;]{6,})",
        1,
        0.9,
    ),
    (
        "API_KEY",
        r"(?i)\b(?:api[_-]?key|secret[_-]?key|access[_-]?token|client[_-]?secret)\b\s*[:=]\s*"
        r"[\"']?([A-Za-z0-9_\-./+=]{16,})",
        1,
        0.9,
    ),
)
SECRET_ENTITIES: tuple[str, ...] = tuple(p[0] for p in SECRET_PATTERNS)

# Presidio's predefined recognizers (presidio-analyzer 2.2) plus spaCy's NER types.
PRESIDIO_ENTITIES: frozenset[str] = frozenset(
    {
        "PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS",
        "US_SSN", "US_PASSPORT", "US_DRIVER_LICENSE", "US_BANK_NUMBER", "US_ITIN", "UK_NHS",
        "LOCATION", "DATE_TIME", "NRP", "URL", "CRYPTO", "MEDICAL_LICENSE", "ORGANIZATION",
        "MAC_ADDRESS", "UUID", "AGE", "ID",
    }
)  # fmt: skip
