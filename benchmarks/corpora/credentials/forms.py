"""The surface forms of the credentials corpus: each maker writes a snippet that holds a
credential (prose, keyword and colon, quoted, connection string, URL, header, CLI flag, env,
JSON/YAML, code...) and returns it with the values it planted."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable

from benchmarks.corpora.credentials.secret_values import (
    HOSTS,
    URL_SAFE_SYMBOLS,
    USERS,
    jwt,
    password,
    secret_pair,
    spaced_passphrase,
    token,
    vendor_token,
)
from samples import values

# --- Surface forms: each maker returns (snippet, planted values) --------------------------------
Form = Callable[[random.Random], tuple[str, list[str]]]


def _prose_is(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    who = rng.choice(["my", "the", "our", "the new", "the temporary", "his", "the admin"])
    tail = rng.choice(
        ["", ".", " btw", ", please reset it.", " if that helps", "!", " (case sensitive)"]
    )
    text = rng.choice(
        [
            f"{who} {kw} is {v}{tail}",
            f"{who.capitalize()} {kw} is now {v}{tail}",
            f"FYI {who} {kw} was {v} before the change{tail}",
            f"The {kw} for the {rng.choice(['admin', 'staging', 'billing'])} account is {v}{tail}",
            f"I changed {who} {kw} to {v} yesterday{tail}",
            f"{kw} for user {rng.choice(USERS)} was reset to {v}{tail}",
            f"{who} {kw} = {v}{tail}",
        ]
    )
    return text, [v]


def _keyword_colon(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    sep = rng.choice([": ", ":", " : ", ":  ", " - ", ": "])
    lead = rng.choice(["", "Here you go. ", "Details -> ", "As requested, ", "(", "FYI "])
    end = ")" if lead == "(" else rng.choice(["", " thanks", "\nThanks!", " - let me know"])
    return f"{lead}{kw}{sep}{v}{end}", [v]


def _quoted_sentence(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    if kw.lower().startswith("pass") and rng.random() < 0.35:
        v = spaced_passphrase(rng)
    q1, q2 = rng.choice([('"', '"'), ("'", "'"), ("`", "`"), ("\u201c", "\u201d")])
    text = rng.choice(
        [
            f"I set the {kw} to {q1}{v}{q2} yesterday.",
            f"the {kw} {q1}{v}{q2} stopped working after the update",
            f"We tried with {kw} {q1}{v}{q2} and still get 401.",
            f"My {kw} is {q1}{v}{q2}, can you check it?",
            f"{kw.capitalize()} {q1}{v}{q2} is rejected by the portal.",
        ]
    )
    return text, [v]


def _use_to_log_in(rng: random.Random) -> tuple[str, list[str]]:
    v, user = password(rng), rng.choice(USERS)
    text = rng.choice(
        [
            f"use {v} to log in",
            f"You can use {v} to sign in and check.",
            f"Try {v} as the password.",
            f"just log in with {user} / {v}",
            f"{v} is my password, please don't share it",
            f"login: {user} / {v}",
            f"Credentials: {user}:{v}",
            f"sign in with {user} and {v}",
            f"Please use {v} as the temporary password for {user}.",
        ]
    )
    return text, [v]


def _next_line(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    user = rng.choice(USERS)
    text = rng.choice(
        [
            f"{kw}:\n{v}",
            f"Here are the credentials:\nuser: {user}\n{kw}:\n  {v}\n",
            f"{kw.upper()}\n{v}",
            f"The {kw} is below\n{v}\nThanks",
            f"{kw} -\n{v}",
        ]
    )
    return text, [v]


def _connection_string(rng: random.Random) -> tuple[str, list[str]]:
    v, user, host = password(rng), rng.choice(USERS), rng.choice(HOSTS)
    text = rng.choice(
        [
            f"Server={host};Database=orders;User Id={user};Password={v};",
            f"Host={host};Port=5432;Username={user};Password={v};SSL Mode=Require",
            f"Data Source={host};Initial Catalog=crm;User ID={user};pwd={v}",
            f"jdbc:sqlserver://{host}:1433;databaseName=app;user={user};password={v};",
            f"Driver={{ODBC Driver 18}};Server={host};UID={user};PWD={v};Encrypt=yes",
        ]
    )
    lead = rng.choice(["Our connection string is ", "Connection string:\n", "config: ", ""])
    return lead + text, [v]


def _url_credentials(rng: random.Random) -> tuple[str, list[str]]:
    v, user, host = password(rng, URL_SAFE_SYMBOLS), rng.choice(USERS), rng.choice(HOSTS)
    scheme = rng.choice(
        ["postgres", "postgresql", "mysql", "https", "mongodb+srv", "amqp", "redis"]
    )
    url = f"{scheme}://{user}:{v}@{host}{rng.choice([':5432/app', '/repo.git', '', ':6379/0'])}"
    text = rng.choice(
        [f"DATABASE_URL is {url}", f"we connect with {url} and it times out", f"URL: {url}"]
    )
    return text, [v]


def _auth_header(rng: random.Random) -> tuple[str, list[str]]:
    tok = rng.choice([token, token, jwt])(rng)
    scheme = rng.choice(["Bearer", "bearer", "Token", "Basic"])
    if scheme == "Basic":
        tok = base64.b64encode(f"{rng.choice(USERS)}:{password(rng)}".encode()).decode()
    text = rng.choice(
        [
            f"Authorization: {scheme} {tok}",
            f'curl -H "Authorization: {scheme} {tok}" https://api.example.com/v2/invoices',
            f"the request has header authorization={scheme} {tok} and still fails",
            f"We send bearer {tok} and get 401",
        ]
    )
    return text, [tok]


def _cli_flag(rng: random.Random) -> tuple[str, list[str]]:
    v, user, host = password(rng), rng.choice(USERS), rng.choice(HOSTS)
    tok = token(rng)
    choices = [
        (f"mysql -u {user} -p{v} orders", v),
        (f"mysqldump -u{user} -p'{v}' --all-databases > dump.sql", v),
        (f"psql -h {host} -U {user} --password={v} app", v),
        (f"redis-cli -h {host} -a {v} ping", v),
        (f"curl -u {user}:{v} https://{host}/api", v),
        (f"sshpass -p '{v}' ssh {user}@{host}", v),
        (f"./deploy.sh --token {tok} --env prod", tok),
        (f"az login --service-principal -u app-id --password {v} --tenant contoso", v),
        (f"tool sync --api-key={tok}", tok),
        (f"sqlcmd -S {host} -U {user} -P {v}", v),
    ]
    cmd, secret = rng.choice(choices)
    lead = rng.choice(["I ran ", "Command: ", "$ ", "Running\n    ", "this fails: "])
    return lead + cmd, [secret]


def _env_export(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    prefix = rng.choice(["DB", "MYSQL_ROOT", "STRIPE", "APP", "AZURE_CLIENT", "SMTP", "REDIS", ""])
    suffix = (
        "PASSWORD"
        if kw.lower().startswith("pass") or kw == "pw"
        else rng.choice(["SECRET", "API_KEY", "TOKEN", "ACCESS_TOKEN", "SECRET_KEY"])
    )
    name = f"{prefix}_{suffix}" if prefix else suffix
    text = rng.choice(
        [
            f"export {name}={v}",
            f'export {name}="{v}"',
            f"set {name}={v}",
            f'$env:{name} = "{v}"',
            f"in our .env file: {name}={v}",
            f"setx {name} {v}",
            f"{name}={v} ./run.sh",
        ]
    )
    return text, [v]


def _json_yaml(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    key = rng.choice(
        ["password", "db_password", "pass"]
        if kw.lower().startswith("pass") or kw in ("pw", "pwd")
        else ["api_key", "apiKey", "token", "client_secret", "secret", "accessToken"]
    )
    user = rng.choice(USERS)
    text = rng.choice(
        [
            json.dumps({"user": user, key: v, "host": rng.choice(HOSTS)}),
            json.dumps({"auth": {"username": user, key: v}}, indent=2),
            f"database:\n  host: {rng.choice(HOSTS)}\n  user: {user}\n  {key}: {v}\n",
            f"{key}: '{v}'",
            f'settings.yaml has\n{key}: "{v}"\nport: 8443',
        ]
    )
    return text, [v]


def _vendor_token(rng: random.Random) -> tuple[str, list[str]]:
    v = vendor_token(rng)
    text = rng.choice(
        [
            f"Our CI started failing after we rotated {v} last night.",
            f"here: {v}",
            f"The webhook uses {v} and returns 403.",
            f"Pasting from the config: {v}",
            f"({v})",
            f"is {v} still valid?",
        ]
    )
    return text, [v]


def _token_near_context(rng: random.Random) -> tuple[str, list[str]]:
    v = token(rng)
    kw = rng.choice(["API token", "token", "key", "secret", "access key", "credential", "API key"])
    text = rng.choice(
        [
            f"the {kw} {v} expired this morning",
            f"{kw.capitalize()} {v} no longer works.",
            f"Here's the {kw} \u2014 {v}",
            f"I regenerated the {kw} and now it is {v} but calls still fail",
            f"we pass {v} as the {kw} and get 401",
            f"the {kw} for staging: {v}",
        ]
    )
    return text, [v]


def _private_key(rng: random.Random) -> tuple[str, list[str]]:
    v = values.secret_value(rng, "private_key")
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    v = v.replace("RSA ", kind)
    text = rng.choice([f"Our deploy key:\n{v}", f"{v}\nThat is the key on the build box.", v])
    return text, [v]


def _code_assignment(rng: random.Random) -> tuple[str, list[str]]:
    kw, v = secret_pair(rng)
    key = "password" if kw.lower().startswith("pass") or kw in ("pw", "pwd") else "api_key"
    text = rng.choice(
        [
            f'{key} = "{v}"',
            f"const {key.replace('_k', 'K')} = '{v}';",
            f'db_{key} := "{v}"',
            f'config["{key}"] = "{v}"',
            f"{key.upper()}='{v}'",
        ]
    )
    return f"The code is:\n    {text}\n", [v]


def _azure_connection(rng: random.Random) -> tuple[str, list[str]]:
    v = values.secret_value(rng, "azure_storage_connection_string")
    return rng.choice([f"connection string: {v}", f"Here it is {v}", v]), [v]


FORMS: dict[str, Form] = {
    "prose_is": _prose_is,
    "keyword_colon": _keyword_colon,
    "quoted_sentence": _quoted_sentence,
    "use_to_log_in": _use_to_log_in,
    "next_line": _next_line,
    "connection_string": _connection_string,
    "url_credentials": _url_credentials,
    "auth_header": _auth_header,
    "cli_flag": _cli_flag,
    "env_export": _env_export,
    "json_yaml": _json_yaml,
    "vendor_token": _vendor_token,
    "token_near_context": _token_near_context,
    "private_key": _private_key,
    "code_assignment": _code_assignment,
    "azure_connection_string": _azure_connection,
}
