"""Microsoft Entra ID tokens of reviewers: who a token says its bearer is, once PyJWT has checked
it was issued by the configured tenant (issuer), for tunegate (audience), signed by one of the
tenant's keys, and is not expired.

The tenant's keys come from the reviewers file's `jwks_file` (a copy of the key set, also what
tests use) or from its `jwks_uri` through PyJWT's `PyJWKClient` (fetched when a token is
checked, cached by the client). A reviewer gets a token with e.g.
`az account get-access-token --scope api://tunegate/.default --query accessToken -o tsv`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jwt

from platforms.reviewers import EntraTenant

_ALGORITHMS = ["RS256"]
_LEEWAY_SECONDS = 60  # clock skew between Entra ID and this machine


class TokenRefused(ValueError):
    """A token that proves nothing; the message says why."""


@dataclass(frozen=True)
class EntraClaims:
    """What a valid token says of its bearer."""

    object_id: str  # `oid`: the person, stable across renames
    username: str  # `upn`, else `preferred_username`
    tenant: str
    expires: int


def unverified_username(token: str) -> str:
    """The name a token claims (`upn` / `preferred_username`), not checked: for a command to
    name its reviewer before the run checks the token."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise TokenRefused(f"not a JWT: {exc}") from None
    return str(claims.get("upn") or claims.get("preferred_username") or "")


def verify_token(token: str, tenant: EntraTenant) -> EntraClaims:
    """The claims of `token` once it is checked against `tenant`; `TokenRefused` saying why not."""
    try:
        key = _signing_key(token, tenant)
        claims = jwt.decode(
            token,
            key,
            algorithms=_ALGORITHMS,
            audience=tenant.audience,
            issuer=tenant.issuer,
            leeway=_LEEWAY_SECONDS,
            options={"require": ["exp", "iss", "aud", "oid", "tid"]},
        )
    except jwt.ExpiredSignatureError:
        raise TokenRefused("the Entra ID token has expired: get a new one") from None
    except jwt.InvalidAudienceError:
        raise TokenRefused(
            f"the Entra ID token is not for {tenant.audience} (its audience): get one with "
            f"--scope {tenant.audience}/.default"
        ) from None
    except jwt.InvalidIssuerError:
        raise TokenRefused(f"the Entra ID token was not issued by {tenant.issuer}") from None
    except jwt.PyJWTError as exc:
        raise TokenRefused(f"the Entra ID token does not verify: {exc}") from None
    if claims["tid"] != tenant.tenant:
        raise TokenRefused(f"the Entra ID token is of tenant {claims['tid']}, not {tenant.tenant}")
    return EntraClaims(
        object_id=str(claims["oid"]),
        username=str(claims.get("upn") or claims.get("preferred_username") or ""),
        tenant=str(claims["tid"]),
        expires=int(claims["exp"]),
    )


def _signing_key(token: str, tenant: EntraTenant) -> jwt.PyJWK:
    """The tenant key the token names (`kid`)."""
    if tenant.jwks_file is None:
        assert tenant.jwks_uri is not None  # the reviewers file gives one of the two
        return jwt.PyJWKClient(tenant.jwks_uri).get_signing_key_from_jwt(token)
    kid = jwt.get_unverified_header(token).get("kid")
    keys = jwt.PyJWKSet.from_json(Path(tenant.jwks_file).read_text(encoding="utf-8"))
    for key in keys.keys:
        if key.key_id == kid:
            return key
    raise TokenRefused(f"the Entra ID token's key {kid!r} is not in {tenant.jwks_file}")
