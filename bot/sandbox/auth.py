"""Who is calling: app JWTs and installation access tokens, checked as GitHub checks them.

GitHub docs: "Generating a JSON Web Token (JWT) for a GitHub App" (RS256, ``iss``
the app ID, ``exp`` at most 10 minutes after ``iat``) and "Authenticating as a
GitHub App installation" (``Authorization: Bearer <token>`` or ``token <token>``).
Error messages are the ones GitHub answers with, status 401.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization

from bot.sandbox.errors import ApiError
from bot.sandbox.state import SandboxState

#: GitHub refuses app JWTs whose lifetime (``exp - iat``) is longer than this, in seconds.
JWT_MAX_LIFETIME = 600
#: How far ``iat`` may lie in the future (clock drift) before GitHub refuses it, in seconds.
JWT_IAT_DRIFT = 60

BAD_CREDENTIALS = "Bad credentials"
JWT_UNDECODABLE = "A JSON web token could not be decoded"
JWT_EXP_INVALID = (
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which "
    "the assertion expires"
)
JWT_EXP_TOO_FAR = "'Expiration time' claim ('exp') is too far in the future"
JWT_IAT_INVALID = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
JWT_IAT_FUTURE = "'Issued at' claim ('iat') must be an Integer representing a time in the past"
JWT_ISSUER_UNKNOWN = "Integration not found"


@dataclass(frozen=True)
class Caller:
    """The identity behind a request.

    ``kind`` is ``"app"`` (a valid JWT), ``"installation"`` (a valid token) or
    ``"anonymous"``. ``error`` holds the 401 message when credentials were given
    but refused. ``bucket`` names the rate limit the request counts against.
    """

    kind: str
    installation_id: int | None = None
    error: str | None = None

    @property
    def bucket(self) -> str:
        """The key of the rate limit this caller uses (see :meth:`SandboxState.bucket`)."""
        if self.kind == "installation":
            return f"installation:{self.installation_id}"
        return "app" if self.kind == "app" else "anonymous"


def public_key_pem(private_key_pem: bytes | str) -> bytes:
    """Derive the PEM public key from the app's PEM private key.

    Raises :class:`ValueError` when the text is not a PEM private key.
    """
    data = private_key_pem.encode() if isinstance(private_key_pem, str) else private_key_pem
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a PEM private key without password: {exc}") from exc
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Authenticator:
    """Checks the ``Authorization`` header of each request against one app and the issued tokens."""

    def __init__(self, state: SandboxState, private_key_pem: bytes | str):
        self.state = state
        self._public_key = public_key_pem(private_key_pem)

    def verify_jwt(self, token: str) -> dict[str, Any]:
        """Return the claims of a valid app JWT; raise :class:`ApiError` 401 with GitHub's message.

        Valid means: RS256 signed by the app's key, ``iss`` equal to the app ID
        (as number or string), ``iat`` not more than 60 s ahead of the sandbox's
        clock, ``exp`` in the future, at most 600 s after ``iat`` and at most 600 s
        (plus the same 60 s of drift) after the sandbox's clock. A sandbox started with
        a ``clock`` apart from the app's therefore refuses its JWTs as GitHub refuses
        those of a server whose clock is off, and its ``Date`` headers tell its time.
        """
        try:
            claims = jwt.decode(
                token,
                self._public_key,
                algorithms=["RS256"],
                options={"verify_exp": False, "verify_iat": False, "verify_nbf": False, "verify_iss": False},
            )
        except jwt.PyJWTError as exc:
            raise ApiError(401, JWT_UNDECODABLE) from exc
        now = self.state.now()
        iat, exp = claims.get("iat"), claims.get("exp")
        if not _is_number(iat):
            raise ApiError(401, JWT_IAT_INVALID)
        if iat > now + JWT_IAT_DRIFT:
            raise ApiError(401, JWT_IAT_FUTURE)
        if not _is_number(exp) or exp <= now:
            raise ApiError(401, JWT_EXP_INVALID)
        if exp - iat > JWT_MAX_LIFETIME or exp > now + JWT_MAX_LIFETIME + JWT_IAT_DRIFT:
            raise ApiError(401, JWT_EXP_TOO_FAR)
        if str(claims.get("iss")) != str(self.state.app_id):
            raise ApiError(401, JWT_ISSUER_UNKNOWN)
        return claims

    def identify(self, authorization: str | None) -> Caller:
        """Turn an ``Authorization`` header into a :class:`Caller` (never raises)."""
        if not authorization:
            return Caller("anonymous")
        scheme, _, credential = authorization.strip().partition(" ")
        credential = credential.strip()
        if scheme.lower() not in ("bearer", "token") or not credential:
            return Caller("anonymous", error=BAD_CREDENTIALS)
        if credential.count(".") == 2:
            try:
                self.verify_jwt(credential)
            except ApiError as exc:
                return Caller("anonymous", error=exc.message)
            return Caller("app")
        token = self.state.valid_token(credential)
        if token is None:
            return Caller("anonymous", error=BAD_CREDENTIALS)
        return Caller("installation", installation_id=token.installation_id)


def require(caller: Caller, needed: str | None) -> None:
    """Raise :class:`ApiError` 401 unless ``caller`` may use a route needing ``needed``.

    ``needed`` is ``"app"`` (a JWT), ``"installation"`` (a token) or ``None`` (anyone).
    """
    if needed is None:
        return
    if caller.kind == needed:
        return
    if needed == "app":
        raise ApiError(401, caller.error if caller.error and caller.error != BAD_CREDENTIALS else JWT_UNDECODABLE)
    raise ApiError(401, BAD_CREDENTIALS)
