"""The entity types the screen knows: credential types, Presidio's recognizers and our own.

Kept apart from `screening.detectors` (which loads Presidio, spaCy and transformers) and from
`screening.credentials` (which loads detect-secrets) so that config validation and the command
line start without loading any detection code. `screening.credentials` says how each type is found.
"""

from __future__ import annotations

# Credentials and secrets, found by `screening.credentials.CredentialRecognizer`.
SECRET_ENTITIES: tuple[str, ...] = (
    # Vendor token formats (detect-secrets' plugins, gitleaks' and Titus' catalogues, Azure patterns).
    "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "SLACK_TOKEN",
    "STRIPE_KEY",
    "TWILIO_KEY",
    "SENDGRID_KEY",
    "OPENAI_KEY",
    "NPM_TOKEN",
    "PYPI_TOKEN",
    "DISCORD_TOKEN",
    "TELEGRAM_TOKEN",
    "MAILCHIMP_KEY",
    "SQUARE_OAUTH_SECRET",
    "ARTIFACTORY_TOKEN",
    "IBM_CLOUD_KEY",
    "AZURE_STORAGE_KEY",
    "AZURE_CONNECTION_STRING",
    "AZURE_SAS_TOKEN",
    "PRIVATE_KEY",
    "JWT",
    "WEBHOOK_URL",  # Slack, Discord, Teams incoming-webhook URLs (the URL is the secret)
    "VENDOR_SECRET",  # any other vendor format of the catalogues (screening.credential_rules)
    # Context: what a value is follows from the words around it.
    "PASSWORD",  # after password / pw / passcode..., in prose, assignments, flags, next line
    "API_KEY",  # after token / key / secret / credential...
    "BEARER_TOKEN",  # Authorization: Bearer|Basic|Token ...
    "BASIC_AUTH_CREDENTIALS",  # the password in scheme://user:password@host
    "SECRET_KEYWORD",  # detect-secrets' KeywordDetector (code-style assignments)
    "HIGH_ENTROPY_SECRET",  # detect-secrets' Base64/Hex high-entropy strings
)

# Presidio's predefined recognizers (presidio-analyzer 2.2) plus spaCy's NER types.
PRESIDIO_ENTITIES: frozenset[str] = frozenset(
    {
        "PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS",
        "US_SSN", "US_PASSPORT", "US_DRIVER_LICENSE", "US_BANK_NUMBER", "US_ITIN", "UK_NHS",
        "LOCATION", "DATE_TIME", "NRP", "URL", "CRYPTO", "MEDICAL_LICENSE", "ORGANIZATION",
        "MAC_ADDRESS", "UUID", "AGE", "ID",
    }
)  # fmt: skip

# Personal data found by recognizers of our own (`screening.addresses`).
OWN_PII_ENTITIES: tuple[str, ...] = ("STREET_ADDRESS",)

# Every personal-data type a `screen.entities` rule may name.
PII_ENTITIES: frozenset[str] = PRESIDIO_ENTITIES | frozenset(OWN_PII_ENTITIES)
