"""Build addresses_phones_cards_dev.jsonl from public sources (see SOURCES.md). Run once:

    python benchmarks/corpora/make_addresses_phones_cards.py \
        --usaddress PATH/TO/datamade/usaddress --address-formatting PATH/TO/address-formatting

(the two paths are git checkouts or bare mirrors; the other sources are installed packages).
Each line: {"entity", "value", "text", "source"}; `text` holds `value` once, inside a short
carrier sentence of ours (the values are the sources' own).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.corpora.readers.opencage import formatted_cases

OUT = Path(__file__).with_name("addresses_phones_cards_dev.jsonl")
CARRIERS = {
    "STREET_ADDRESS": [
        "Please ship it to {v}.",
        "My address is {v}",
        "{v}",
        "Office: {v} (2nd door)",
    ],
    "PHONE_NUMBER": ["{v}", "reach me at {v} after 5"],
    "CREDIT_CARD": ["Card: {v}", "I paid with {v} yesterday.", "{v}"],
}
ADYEN_TEST_CARDS = {  # Adyen/adyen-ios, its tests' CardNumbers.swift (MIT)
    "mastercard": ["2223000048410010", "2223520443560010", "2222410740360010", "5100081112223332",
                   "5103221911199245", "5577000055770004", "5555444433331111", "5424000000000015"],
    "visa": ["4111111111111111", "4988438843884305", "4166676667666746", "4646464646464644",
             "4444333322221111", "4400000000000008", "4977949494949497"],
    "jcb": ["3569990010095841"], "cartebancaire": ["4035501000000008", "4360000001000005"],
    "amex": ["370000000000002"], "diners": ["36006666333344", "30000000000004"],
    "discover": ["6011601160116611", "6445644564456445"], "bancontact": ["6703444444444449"],
    "hipercard": ["6062828888666688"], "elo": ["5066991111111118"],
    "dankort": ["5019555544445555"],
    "unionpay": ["6250946000000016", "6250947000000014", "6243030000000001"],
    "uatp": ["135410014004955"],
}  # fmt: skip
FAKER_LOCALES = ("en_US", "en_GB", "en_CA", "de_DE", "de_AT", "de_CH", "fr_FR", "nl_NL", "es_ES",
                 "it_IT", "pt_PT", "pl_PL", "sv_SE", "da_DK")  # fmt: skip


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"HEAD:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def usaddress_rows(repo: Path) -> list[dict]:
    """Labelled US addresses with a house number and a street type, or a P.O. box."""
    rows = []
    for path in ("measure_performance/test_data/labeled.xml",):
        root = ET.fromstring(git_show(repo, path))
        for node in root.iter("AddressString"):
            tags = {child.tag for child in node}
            value = "".join(node.itertext()).strip().rstrip(",")
            street = "AddressNumber" in tags and tags & {"StreetNamePostType", "StreetNamePreType"}
            box = "USPSBoxType" in tags and re.search(r"P\.?\s?O|Post", value)
            if street or box:
                rows.append({"value": value, "source": f"datamade/usaddress {path}"})
    return rows


def address_formatting_rows(repo: Path) -> list[dict]:
    """OpenCage's expected formatted addresses that have a house number, country line dropped,
    on their lines and joined by commas."""
    rows = []
    for country in ("us", "gb", "ca", "de", "fr", "nl", "es", "it", "at", "ch", "be", "pt",
                    "pl", "se", "dk", "ie"):  # fmt: skip
        path = f"testcases/countries/{country}.yaml"
        for case in formatted_cases(git_show(repo, path)):
            lines, parts = case.lines, case.components
            first = next(iter(case.house_lines()), 0)
            # the address itself: from the house-number line to the postcode or city line
            keys = [str(parts[k]) for k in ("postcode", "city", "town") if k in parts]
            last = max((i for i, x in enumerate(lines) if any(k in x for k in keys)), default=-1)
            lines = lines[first : max(last, first) + 1]
            for joined in ("\n".join(lines), ", ".join(lines)):
                rows.append({"value": joined, "source": f"OpenCageData/address-formatting {path}"})
    return rows


def faker_address_rows(rng: random.Random) -> list[dict]:
    from faker import Faker

    rows = []
    for locale in FAKER_LOCALES:
        fake = Faker(locale)
        fake.seed_instance(rng.getrandbits(32))
        for _ in range(12):
            rows.append({"value": fake.address(), "source": f"faker {locale} address()"})
    return rows


def phone_rows() -> list[dict]:
    """libphonenumber's example numbers of every region: national form after a phone word,
    international form with no phone word."""
    import phonenumbers as pn

    rows = []
    kinds = (pn.PhoneNumberType.MOBILE, pn.PhoneNumberType.FIXED_LINE)
    for region in sorted(pn.SUPPORTED_REGIONS):
        for kind in kinds:
            number = pn.example_number_for_type(region, kind)
            if number is None:
                continue
            national = pn.format_number(number, pn.PhoneNumberFormat.NATIONAL)
            international = pn.format_number(number, pn.PhoneNumberFormat.INTERNATIONAL)
            source = f"phonenumbers {pn.__version__} example_number_for_type({region}, {kind})"
            rows.append({"value": national, "source": source, "text": f"Phone: {national}"})
            rows.append({"value": international, "source": source})
    return rows


def card_rows(rng: random.Random) -> list[dict]:
    from faker import Faker

    rows = [
        {"value": v, "source": f"Adyen/adyen-ios test cards ({network})"}
        for network, values in ADYEN_TEST_CARDS.items()
        for v in values
    ]
    fake = Faker()
    fake.seed_instance(rng.getrandbits(32))
    for kind in fake.provider("faker.providers.credit_card").credit_card_types:
        for _ in range(6):
            rows.append({"value": fake.credit_card_number(kind), "source": f"faker {kind}"})
    for row in rows:  # grouped by fours half of the time, as people write them
        if rng.random() < 0.5:
            sep = rng.choice([" ", "-"])
            row["value"] = sep.join(re.findall(r".{1,4}", row["value"]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--usaddress", type=Path, required=True)
    parser.add_argument("--address-formatting", type=Path, required=True)
    args = parser.parse_args()
    rng = random.Random(23)
    out = []
    groups = {
        "STREET_ADDRESS": usaddress_rows(args.usaddress)
        + address_formatting_rows(args.address_formatting)
        + faker_address_rows(rng),
        "PHONE_NUMBER": phone_rows(),
        "CREDIT_CARD": card_rows(rng),
    }
    for entity, rows in groups.items():
        for row in rows:
            text = row.pop("text", None) or rng.choice(CARRIERS[entity]).format(v=row["value"])
            out.append({"entity": entity, **row, "text": text})
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))
    print(f"{len(out)} examples → {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
