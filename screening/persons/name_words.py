"""Words the person-name recognizer (`screening.persons.names`) treats specially: data, not code.

All entries are lower case; lookups casefold the text. Multi-word product names deny each of
their words (`Power BI` denies `power` and `bi`).
"""

# ruff: noqa: RUF001 (Cyrillic, Greek and Turkish letters on purpose: other languages' words)

from __future__ import annotations

# Products, brands, services and tools that are also first or last names somewhere (or that
# spaCy takes for a person): never a person on their own, whatever their casing or context.
PRODUCT_NAMES = """
Azure, Teams, Excel, Outlook, Jira, Slack, Zoom, Alexa, Siri, Cortana, Dell, Mac, MacBook, Ruby,
Jenkins, Kafka, Hudson, Sage, Oracle, Ubuntu, Windows, Chrome, Firefox, Safari, SharePoint,
OneDrive, Power BI, Salesforce, Zendesk, Okta, Docker, Kubernetes, Redis, Django, Flask, Pandas,
Python, Java, Perl, Rust, Scala, Elixir, Dart, Swift, Kotlin, Go, Haskell, Erlang, Clojure, Groovy, Maven, Gradle, Ansible, Terraform, Vagrant, Packer, Consul,
Nomad, Vault, Grafana, Kibana, Logstash, Elastic, Elasticsearch, Prometheus, Nagios, Splunk,
Datadog, PagerDuty, Sentry, Bamboo, Confluence, Trello, Asana, Monday, Notion, Miro, Figma,
Dropbox, Box, Webex, Skype, Lync, Yammer, Viva, Copilot, Bing, Edge, Opera, Vivaldi, Brave,
Android, iOS, iPhone, iPad, Pixel, Galaxy, Surface, Lenovo, ThinkPad, Asus, Acer, Compaq, HP,
Fujitsu, Toshiba, Siemens, Cisco, Meraki, Juniper, Aruba, Fortinet, Palo Alto, Citrix, VMware,
Hyper-V, Proxmox, Debian, Fedora, CentOS, Rocky, Arch, Gentoo, Mint, Linux, Unix,
Solaris, Tableau, Looker, Qlik, Alteryx, Snowflake, Databricks, Spark, Hadoop, Hive,
Presto, Trino, Airflow, Dagster, Prefect, Celery, Gunicorn, Nginx, Apache, Tomcat, Jetty,
Kong, Envoy, Istio, Linkerd, Helm, Argo, Flux, Harbor, Nexus, Artifactory, Sonar, SonarQube,
Circle, CircleCI, Buddy, Octopus, Jetbrains, PyCharm, Rider, Eclipse, NetBeans, Xcode,
Atom, Sublime, Vim, Emacs, Nano, Postman, Insomnia, Swagger, Heroku, Netlify, Vercel, Render,
Fly, Twilio, SendGrid, Mailchimp, Stripe, Square, PayPal, Venmo, Klarna, Adyen, Braintree,
Shopify, Magento, WooCommerce, WordPress, Drupal, Joomla, Ghost, Jekyll, Gatsby, Next,
Nuxt, Angular, React, Vue, Svelte, Ember, Backbone, Node, Deno, Bun, Express, Rails, Laravel,
Symfony, Spring, Hibernate, Quarkus, Micronaut, Vert, Dapr, Camunda, Mule, MuleSoft, Boomi,
Workday, BambooHR, Gusto, Rippling, Zenefits, Namely, Paychex, ADP, Ceridian, Dayforce, Kronos,
UKG, SAP, Ariba, Concur, Coupa, NetSuite, QuickBooks, Xero, FreshBooks, Wave, Zoho, HubSpot,
Marketo, Pardot, Intercom, Drift, Freshdesk, Freshservice, ServiceNow, Remedy, Ivanti, Kaseya,
Datto, ConnectWise, Autotask, Sophos, Norton, McAfee, Avast, Kaspersky, Bitdefender, Malwarebytes,
CrowdStrike, Falcon, SentinelOne, Carbon Black, Defender, Intune, Entra, Autopilot, Bitlocker,
Duo, PingFederate, Auth0, Keycloak, LastPass, Bitwarden, Dashlane, KeePass,
Sonos, Roku, Fitbit, Garmin, Kindle, Echo, Nest, Ring, Cortex, Llama,
Mistral, Grok, Watson, Mercury, Jupiter, Mars,
Tesla, Porsche, Ferrari, Lamborghini, Jaguar, Chevrolet, Chevy, Dodge,
Honda, Toyota, Nissan, Mazda, Subaru, Kia, Hyundai, Volvo, Audi, Skoda, Seat, Fiat, Renault,
Peugeot, Citroen, Opel, Vauxhall, Mini, Rover, Rolls, Ikea, Lidl, Aldi,
Tesco, Walmart, Target, Costco, Nordstrom, Sephora, Chanel, Dior, Gucci, Prada,
Armani, Versace, Hermès, Zara, Mango, Primark, Nike, Adidas, Puma, Reebok, Converse, Vans,
Amazon, Prime, Kroger, Fargo, Barclays, Lloyds, Santander, Citi, Schwab, Fidelity,
Vanguard, Visa, Mastercard, Amex, Maestro, Discover, Revolut, Monzo, Starling, Ocado,
Uber, Lyft, Bolt, Deliveroo, Doordash, Grubhub, Airbnb, Expedia, Booking, Kayak, Trivago,
Spotify, Deezer, Tidal, Pandora, Netflix, Hulu, Disney, Peacock, Paramount, Starz, Showtime,
Twitch, Discord, Telegram, Signal, WhatsApp, Viber, Line, WeChat, Snapchat, Pinterest, Reddit,
Tumblr, Medium, Substack, Quora, Yelp, Tinder, Bumble, Hinge, Grindr, Duolingo, Babbel,
Coursera, Udemy, Udacity, Canvas, Blackboard, Moodle, Kahoot, Quizlet, Chegg, Grammarly,
Canva, Adobe, Acrobat, Photoshop, Lightroom, Illustrator, InDesign, Premiere, Audition,
Dreamweaver, Muse, Sketch, Zeplin, InVision, Framer, Webflow, Wix, Squarespace, Weebly,
Godaddy, Bluehost, Hostinger, Namecheap, Cloudflare, Akamai, Fastly, Linode, Vultr, Hetzner,
DigitalOcean, Ionos, Rackspace, Google, Gmail, Meet, Hangouts, Chromebook, Nvidia, Intel, AMD,
Ryzen, Xeon, Qualcomm, Snapdragon, Broadcom, Logitech, Razer, Corsair, Samsung, Sony, Philips,
Panasonic, Sharp, Canon, Nikon, Epson, Brother, Ricoh, Kyocera, Xerox, Lexmark, Konica, Minolta,
Zebra, Honeywell, Bosch, Miele, Dyson, Kenwood, Bose, Jabra, Plantronics, Poly,
Sennheiser, Shure, Yamaha, Fender, Gibson, Ibanez, Casio, Seiko, Citizen, Rolex, Omega,
Tissot, Swatch, Wiley, Elsevier, Springer, Nature, Reuters,
Bloomberg, Forbes, Gartner, Forrester, Deloitte, Accenture, Capgemini, Infosys, Wipro, Cognizant,
Tata, Mahindra, Reliance, Siemens, Schneider, Emerson, Rockwell, Fanuc, Kuka, Marriott,
Hyatt, Sheraton, Westin, Radisson, Wyndham, Ritz, Savoy, Boeing, Airbus, Embraer,
Bombardier, Cessna, Lufthansa, Emirates, Qantas, Delta, United, Alaska, Frontier, Spirit,
Allegiant, Ryanair, Easyjet, Wizz, Norwegian, Finnair, Iberia, Alitalia, Aegean, Turkish,
Pegasus, Aeroflot, Avianca, Azul, Gol, Latam, Copa, Sabre, Amadeus, Galileo, Worldspan,
Dynamics, Navision, Exchange, Skype, Access, Visio, Project, Publisher, OneNote, Planner,
Forms, Sway, Stream, Bookings, Lists, Loop, Whiteboard, Clipchamp, Paint, Notepad, WordPad,
Cortana, Kinect, Xbox, HoloLens, Hyper, Nano, Minecraft, Roblox, Fortnite, Zelda,
Sonic, Pikachu, Halo, Destiny, Diablo, Overwatch, Warcraft
"""

# Common words that are also first or last names in some locale, beyond what the stop-word,
# verb, adjective and adverb lists already hold (months and days, everyday nouns, ticket words).
COMMON_WORDS = """
january, february, march, april, may, june, july, august, september, october, november,
december, jan, feb, mar, apr, jun, jul, aug, sep, sept, oct, nov, dec, monday, tuesday,
wednesday, thursday, friday, saturday, sunday, mon, tue, wed, thu, fri, sat, sun, today,
tomorrow, yesterday, morning, evening, night, week, weekend, month, year, day, hour, minute,
will, may, mark, bill, grant, hope, chase, rose, summer, page, sky, june, dawn, faith, joy,
grace, glory, honor, honour, justice, patience, prudence, charity, mercy, trinity, destiny,
harmony, melody, liberty, unity, serenity, amber, crystal, pearl, ruby, jade, ivy, holly,
hazel, olive, violet, lily, daisy, iris, heather, fern, willow, sage, basil, rosemary, jasmine,
ginger, honey, candy, brandy, sherry, cherry, berry, apple, peach, autumn, winter, spring,
storm, rain, river, ocean, forest, stone, rock, clay, brook, dale, glen, heath, lane, field,
ford, wood, woods, hill, hills, park, parks, bush, marsh, moor, bank, banks, well, wells,
street, house, hall, church, castle, king, queen, prince, princess, duke, earl, baron, knight,
bishop, abbot, pope, major, general, marshal, sergeant, cardinal, dean, judge, sheriff, mayor,
chancellor, guy, man, boy, girl, lady, job, art, cash, chance, chip, penny, ray, sandy, hunter,
hunt, fox, wolf, bear, hawk, crow, swan, drake, finch, robin, jay, wren, lark,
dove, crane, bird, fish, bass, pike, salmon, herring, colt, lamb, bull, buck, hart, stag,
black, white, brown, green, gray, grey, blue, red, gold, golden, silver, steel, iron, copper,
rich, young, old, long, short, strong, small, little, good, best, sharp, swift, bright, free,
earnest, noble, royal, sunny, dusty, rusty, misty, happy, lucky, merry, jolly, rob, don, art,
kit, ash, bud, dell, gale, norm, will, wise, love, luck, star, moon, sun, cloud, snow, frost,
admin, support, team, user, users, server, service, client, customer, account, manager, agent,
engineer, developer, staff, director, office, desk, help, helpdesk, ops, devops, sales,
finance, billing, legal, security, marketing, product, platform, cloud, data, test, tester,
dear, hi, hello, hey, thanks, thank, cheers, regards, best, sincerely, ok, okay, yes, no, please,
sorry, attached, update, urgent, issue, ticket, request, error, problem, note, notes, cc, bcc,
im, ive, ill, id, u, ur, ya, yall, re, fw, fwd, haha, hahaha, hah, hehe, huh, lol, lmao, omg, wow,
yay, nah, naah, blah, okey, imma, gonna, wanna, lotta, soo, thoo, subject, from, to, sent, via, per, ask, asked, call, email, mail, phone, mobile,
login, logon, password, reset, invoice, order, refund, export, import, report, file, files,
folder, drive, disk, memory, network, printer, laptop, monitor, screen, keyboard, mouse, cable,
router, modem, battery, charger, headset, camera, license, plan, trial, premium, pro, plus,
basic, standard, enterprise, business, home, personal, family, student, free, new, old, beta,
alpha, gamma, delta, sigma, omega, nova, vista, terra, luna, sol, aurora, aria, echo, atlas,
orion, titan, phoenix, zen, neo, ace, chief, boss, hero, angel, saint, bishop, dallas, houston,
denver, boston, london, paris, berlin, sydney, india, china, france, italy, asia, africa,
america, europe, israel, jersey, york, devon, washington, cuba, peru, ireland, holland, england,
scotland, wales
"""

# Headings of a CV, a letter or a form that spaCy takes for a person on a line of their own
# (`Curriculum Vitae`): a span of only these words is none.
HEADINGS = """
curriculum, vitae, resume, résumé, cv, cover, letter, personal, details, contact, information,
profile, summary, objective, work, experience, employment, history, education, qualifications,
skills, languages, references, interests, hobbies, achievements, certifications, publications
"""

# First names that are also verbs or adjectives but in tickets are mostly names.
NAME_FIRST = """
jack, nick, pat, bob, sue, jimmy, frank, max, gene, cliff, wade, ray, dean, harry, carol, peter,
lance, pierce, earnest, sandy, rusty, neil, sally, bobby, billy, johnny, tommy, eddie, randy
"""

# Titles, greetings and sign-offs: what a name follows (lower case, space-separated).
TITLES = (
    "mr mrs ms miss mx dr prof professor sir madam dame lord herr frau fr sr sra srta mme mlle "
    "señor señora signor signora sig dott ing mag"
)
# Ranks and offices written short before a name, with their dot only ("Capt. Hook", "Sen. Warren"):
# without it most are words or codes (`col`, `gen`, `rep`, `det`).
OFFICES = "capt col gen sgt lt cpl maj adm cmdr gov sen rep insp det supt"
# What a title addresses that is no name ("Mr. President", "Madam Speaker").
ADDRESSED = (
    "president speaker chairman chairwoman chair secretary mayor governor senator ambassador"
)
GREETINGS = "hi hello hey heya hiya dear morning afternoon evening greetings yo howdy hallo hola"
# Greetings of other languages a support inbox reads ("Hei Maija,", "Buenos días Carlos", "Привет,
# Анна"): a name follows them, and alone they are none (spaCy and the reader take `Hei`,
# `Saludos`, `Terveisin` for names).
GREETINGS_ABROAD = (
    "bonjour, bonsoir, salut, coucou, ciao, salve, buongiorno, buonasera, hej, hejsan, hei, moi, "
    "terve, moikka, hoi, hallå, olá, oi, buenos días, buenos dias, buenas tardes, buenas noches, "
    "buen día, bom dia, boa tarde, boa noite, guten tag, guten morgen, god morgen, goedemorgen, "
    "dzień dobry, dobrý den, cześć, witam, ahoj, szia, sziasztok, merhaba, selam, moin, servus, "
    "grüezi, γεια σας, γεια, καλημέρα, привет, здравствуйте, добрый день, привіт, вітаю"
)
SIGN_OFFS = (
    "thanks, thank you, thanks so much, thank you so much, thanks again, thanks in advance, "
    "many thanks, thanks a lot, thx, ty, cheers, regards, best, best regards, kind regards, "
    "warm regards, warmest regards, best wishes, all the best, sincerely, yours sincerely, "
    "yours truly, yours, cordially, respectfully, br, rgds, ta, talk soon, with thanks, "
    "talk to you later, talk to you soon, ttyl, see you soon, see you later, take care"
)
# Sign-offs of other languages (comma-separated): a name follows them on their line or the next.
SIGN_OFFS_ABROAD = (
    "saludos, un saludo, saludos cordiales, atentamente, un abrazo, abrazos, cordialement, "
    "bien cordialement, bien à vous, amicalement, salutations, sincères salutations, bisous, "
    "mit freundlichen grüßen, mit freundlichen grüssen, mit freundlichen gruessen, "
    "freundliche grüße, viele grüße, viele grüsse, viele gruesse, liebe grüße, liebe gruesse, "
    "beste grüße, grüße, gruß, mfg, cordiali saluti, distinti saluti, saluti, un saluto, "
    "atenciosamente, abraços, cumprimentos, groeten, met vriendelijke groet, met vriendelijke groeten, vriendelijke groet, "
    "hartelijke groet, mvg, med vänliga hälsningar, vänliga hälsningar, hälsningar, "
    "med venlig hilsen, venlig hilsen, med vennlig hilsen, vennlig hilsen, hilsen, mvh, "
    "terveisin, ystävällisin terveisin, pozdrawiam, z poważaniem, pozdrowienia, s pozdravem, "
    "üdvözlettel, tisztelettel, cu stimă, saygılarımla, с уважением, всего доброго, з повагою, "
    "με εκτίμηση, φιλικά, gracias, muchas gracias, merci, merci beaucoup, danke, vielen dank, "
    "grazie, grazie mille, obrigado, obrigada, bedankt, dank je, tack, takk, tak, kiitos, "
    "dziękuję, děkuji, köszönöm, mulțumesc, teşekkürler, спасибо, дякую, ευχαριστώ"
)
# A lone first name (or a lower-case one) right after one of these is taken as a name.
CONTEXT_WORDS = (
    "ask asked asking from by cc bcc to with ping pinged tell told contact contacted call called "
    "email emailed message messaged thank thanks per attn attention assignee assigned requester "
    "reporter owner approver manager colleague coworker co-worker boss user customer agent "
    "engineer said says wrote spoke talked meet met cc: and or"
)
# Field labels a name follows at the start of a line ("Requester: ..."; "cc: ..."; "Contact
# person: ..."), English and others' name fields (comma-separated).
LABELS = (
    "from, to, cc, bcc, attn, attendees, participants, approvers, approver, requester, reporter, "
    "assignee, owner, contact, name, customer, agent, author, reviewer, reviewers, signed, "
    "submitted, contact person, contact name, full name, first name, last name, surname, "
    "given name, family name, customer name, patient, patient name, employee, employee name, "
    "applicant, candidate, signed by, submitted by, prepared by, approved by, "
    "requested by, reported by, witness, guardian, emergency contact, next of kin, "
    "account holder, cardholder, card holder, beneficiary, tenant, passenger, caller, "
    "interviewer, interviewee, nombre, apellido, apellidos, nom, prénom, vorname, nachname, "
    "nome, cognome, naam, voornaam, achternaam, namn, förnamn, efternamn, navn, fornavn, "
    "etternavn, nimi, etunimi, sukunimi, imię, nazwisko, jméno, příjmení, имя, фамилия, "
    "ім'я, прізвище, όνομα, επώνυμο, adı, soyadı, név, nume, prenume"
)
# Lower-case particles inside a name (Jan de Jong, Ludwig van Beethoven, Ahmad bin Ali).
PARTICLES = (
    "van von de der den del della di da das do dos du la le bin binti ibn al el ten ter mac st y e"
)


def words(block: str) -> frozenset[str]:
    """The casefolded words of a comma- or space-separated block (multi-word entries split)."""
    return frozenset(w.casefold() for w in block.replace(",", " ").split() if w)


# Other languages' greetings and sign-offs of one word (`hei`, `saludos`, `terveisin`): alone
# they are no name. Those of several words (`buenos días`, `bom dia`) are no name only together:
# `Dias`, `BoA` and `God` alone are.
_SALUTATIONS = [
    e.strip().casefold() for e in f"{GREETINGS_ABROAD},{SIGN_OFFS_ABROAD}".split(",") if e.strip()
]
SALUTATIONS = frozenset(e for e in _SALUTATIONS if " " not in e)
SALUTATION_PHRASES = tuple(e for e in _SALUTATIONS if " " in e)
