"""AWS Signature Version 4, verified as AWS services do (the SQS endpoint's authentication).

Two forms: the ``Authorization: AWS4-HMAC-SHA256 Credential=.., SignedHeaders=..,
Signature=..`` header (with ``X-Amz-Date`` or ``Date``), and the presigned URL (``X-Amz-*``
query parameters, ``X-Amz-Expires`` at most 7 days). The canonical request is rebuilt from
the request as received: the path normalised and URI-encoded once more (non-S3 services sign
the encoded path), the query decoded and re-encoded (RFC 3986) and sorted, the signed headers
lower-cased, whitespace-collapsed and sorted, the payload hashed (or the client's
``X-Amz-Content-SHA256``, which must then match the body).

Stricter than SigV4 itself, so that a captured request cannot be turned into another one
(#40 finding 10): a header-signed request must sign its payload (``UNSIGNED-PAYLOAD`` is
refused: botocore sends it only for operations modelled with an unsigned body, and SQS has
none, so boto3 and the AWS SDKs always sign SQS payloads); ``host`` must be signed, and so must
``x-amz-target`` (it names the action) and ``content-type`` (it decides how the body is
read) when the request carries them (every AWS SDK signs every header it sends but a few
such as ``user-agent``); the credential scope must name this server's region
(``CASSIEQ_SQS_REGION``) and the ``sqs`` service.

Errors as real SQS answers them: no credentials -> MissingAuthenticationToken (403); a
malformed header or query, or a header that must be signed and is not -> IncompleteSignature
(400); a wrong signature, an access key id that names no key (the same code and words: keys
and accounts cannot be probed), a wrong scope, an unsigned payload, a request time more than
15 minutes from ours -> SignatureDoesNotMatch (403, "Signature expired: ..." as AWS words
the skew); a presigned URL past its expiry -> RequestExpired (400, SQS's Common Errors).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import quote, unquote

from cassieq.api.sqs import errors

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "sqs"
TERMINATOR = "aws4_request"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
# Signed with when the access key id names no key: that case costs what a real check does.
_STAND_IN = "cassieq-no-such-key"
# Headers that change what a request does: signed whenever the request carries them.
_MUST_SIGN_WHEN_SENT = ("x-amz-target", "content-type")
MAX_SKEW = timedelta(minutes=15)
MAX_EXPIRES_S = 7 * 24 * 3600
_AMZ_FORMAT = "%Y%m%dT%H%M%SZ"
_BASIC_FORMAT = re.compile(r"[0-9]{8}T[0-9]{6}Z")
_QUERY_AUTH = (
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
)


@dataclass(frozen=True)
class SignedRequest:
    """A request as received: the raw (still percent-encoded) path and query, the headers
    with lower-case names in their order (a name may repeat), the body."""

    method: str
    raw_path: str
    raw_query: str
    headers: Sequence[tuple[str, str]]
    body: bytes

    def header_values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]

    def header(self, name: str) -> str | None:
        values = self.header_values(name)
        return ",".join(values) if values else None


@dataclass(frozen=True)
class Secret:
    account: str
    key_name: str
    secret: str


# Access key id -> the secrets it may stand for (in order), empty when it names no key.
SecretLookup = Callable[[str], Awaitable[Sequence[Secret]]]


@dataclass(frozen=True)
class Verified:
    account: str
    key_name: str
    region: str
    access_key_id: str


@dataclass(frozen=True)
class _Parsed:
    access_key_id: str
    scope_date: str
    region: str
    service: str
    terminator: str
    signed_headers: list[str]
    signature: str
    amz_date: str
    presigned: bool
    expires_s: int | None


def has_credentials(req: SignedRequest) -> bool:
    return req.header("authorization") is not None or any(
        k == "X-Amz-Signature" or k == "X-Amz-Credential" for k, _ in query_pairs(req.raw_query)
    )


async def verify(
    req: SignedRequest, lookup: SecretLookup, now: datetime, *, region: str
) -> Verified:
    """The account and key that signed ``req`` for ``region`` (the server's); an SqsError
    otherwise."""
    parsed = _parse(req)
    _check_scope(parsed, region)
    _check_signed_headers(req, parsed)
    signed_at = _parse_amz_date(parsed.amz_date)
    _check_time(parsed, signed_at, now)
    canonical = canonical_request(req, parsed.signed_headers, _payload_hash(req, parsed))
    candidates = await lookup(parsed.access_key_id)
    scope = f"{parsed.scope_date}/{parsed.region}/{parsed.service}/{parsed.terminator}"
    to_sign = string_to_sign(parsed.amz_date, scope, canonical)
    given = parsed.signature.encode("utf-8", "replace")
    # An access key id that names no key costs one signature too, and is answered as a wrong
    # signature (#40): neither the code nor the time tells which accounts and keys exist.
    for secret in candidates or [Secret("", "", _STAND_IN)]:
        expected = signature(secret.secret, parsed.scope_date, parsed.region, to_sign)
        # Constant time: a byte-by-byte timing must not reveal a signature's prefix.
        if hmac.compare_digest(expected.encode("ascii"), given) and candidates:
            return Verified(secret.account, secret.key_name, parsed.region, parsed.access_key_id)
    raise errors.signature_does_not_match()


# --- the signature, as AWS computes it -------------------------------------------------------


def signing_key(secret: str, date: str, region: str, service: str = SERVICE) -> bytes:
    return _signing_key(secret, date, region, service)


# A key's signing key changes once a day: four HMACs per request spared (a third of SigV4's
# time in the bench's SQS turn, #38). Bounded; held like the account cache holds the keys.
@functools.lru_cache(maxsize=1024)
def _signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    k = _hmac(("AWS4" + secret).encode("utf-8"), date)
    k = _hmac(k, region)
    k = _hmac(k, service)
    return _hmac(k, TERMINATOR)


def signature(secret: str, date: str, region: str, to_sign: str) -> str:
    return hmac.new(
        signing_key(secret, date, region), to_sign.encode("utf-8"), "sha256"
    ).hexdigest()


def string_to_sign(amz_date: str, scope: str, canonical: str) -> str:
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return "\n".join((ALGORITHM, amz_date, scope, digest))


def canonical_request(req: SignedRequest, signed_headers: list[str], payload_hash: str) -> str:
    lines = []
    for name in signed_headers:
        values = req.header_values(name)
        if not values:
            # A signed header the request does not carry cannot have been signed as sent.
            raise errors.signature_does_not_match()
        lines.append(f"{name}:{','.join(' '.join(v.split()) for v in values)}")
    return "\n".join(
        (
            req.method.upper(),
            canonical_uri(req.raw_path),
            canonical_query(
                req.raw_query, presigned="X-Amz-Signature" in dict(query_pairs(req.raw_query))
            ),
            "\n".join(lines) + "\n",
            ";".join(signed_headers),
            payload_hash,
        )
    )


def canonical_uri(raw_path: str) -> str:
    # Non-S3 services sign the path as the client encoded it, encoded once more, with dot
    # segments and empty segments removed (botocore's normalize_url_path).
    return quote(_remove_dot_segments(raw_path), safe="/~")


def canonical_query(raw_query: str, *, presigned: bool) -> str:
    pairs = []
    for key, value in query_pairs(raw_query):
        if presigned and key == "X-Amz-Signature":
            continue
        pairs.append((_encode(key), _encode(value)))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def query_pairs(raw_query: str) -> list[tuple[str, str]]:
    """The query's (name, value) pairs, percent-decoded ('+' stays '+': RFC 3986, as SigV4).

    Bytes that are not UTF-8 are kept (surrogate escapes) and encoded back as they came, so
    the signature covers the bytes sent: with U+FFFD in their place, two different queries
    had one canonical form, and a valid request with such a byte could not be verified (the
    parameters are then refused as not UTF-8, by name)."""
    pairs = []
    for piece in raw_query.split("&"):
        if not piece:
            continue
        key, _, value = piece.partition("=")
        pairs.append((_decode(key), _decode(value)))
    return pairs


def _decode(text: str) -> str:
    return unquote(text, errors="surrogateescape")


def _encode(text: str) -> str:
    return quote(text, safe="-_.~", errors="surrogateescape")


def _remove_dot_segments(path: str) -> str:
    if not path:
        return "/"
    out: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out:
                out.pop()
        else:
            out.append(segment)
    first = "/" if path.startswith("/") else ""
    last = "/" if out and path.endswith("/") else ""
    return first + "/".join(out) + last


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), "sha256").digest()


# --- parsing ----------------------------------------------------------------------------------


def _parse(req: SignedRequest) -> _Parsed:
    header = req.header("authorization")
    query = dict(query_pairs(req.raw_query))
    in_query = "X-Amz-Algorithm" in query or "X-Amz-Signature" in query
    if header is not None and in_query:
        raise errors.invalid_parameter_combination("Only one auth mechanism allowed.")
    if header is not None:
        return _parse_header(req, header)
    if in_query:
        return _parse_query(query)
    raise errors.missing_authentication_token()


def _parse_header(req: SignedRequest, header: str) -> _Parsed:
    algorithm, _, rest = header.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise errors.incomplete_signature(
            f"Unsupported authorization type {algorithm[:40]!r}: only {ALGORITHM} is accepted."
        )
    fields: dict[str, str] = {}
    for part in rest.split(","):
        key, eq, value = part.strip().partition("=")
        if eq:
            fields[key] = value
    for required in ("Credential", "SignedHeaders", "Signature"):
        if required not in fields:
            raise errors.incomplete_signature(
                f"Authorization header requires '{required}' parameter."
            )
    amz_date = req.header("x-amz-date")
    if amz_date is None:
        amz_date = _date_header(req.header("date"))
    return _parsed(
        fields["Credential"], fields["SignedHeaders"], fields["Signature"], amz_date, None
    )


def _parse_query(query: dict[str, str]) -> _Parsed:
    for required in (*_QUERY_AUTH, "X-Amz-Expires"):
        if required not in query:
            raise errors.incomplete_signature(
                f"AWS query-string parameters must include '{required}'."
            )
    if query["X-Amz-Algorithm"] != ALGORITHM:
        raise errors.incomplete_signature(f"X-Amz-Algorithm must be {ALGORITHM}.")
    raw = query["X-Amz-Expires"]
    if not raw.isdigit() or len(raw) > 9:
        raise errors.incomplete_signature("X-Amz-Expires must be a non-negative integer.")
    expires = int(raw)
    if expires > MAX_EXPIRES_S:
        raise errors.incomplete_signature(
            f"X-Amz-Expires must be less than a week (in seconds) that is {MAX_EXPIRES_S}."
        )
    return _parsed(
        query["X-Amz-Credential"],
        query["X-Amz-SignedHeaders"],
        query["X-Amz-Signature"],
        query["X-Amz-Date"],
        expires,
    )


def _parsed(
    credential: str, signed_headers: str, sig: str, amz_date: str | None, expires: int | None
) -> _Parsed:
    parts = credential.split("/")
    if len(parts) != 5 or not all(parts):
        raise errors.incomplete_signature(
            "Credential must have the form <access key id>/<date>/<region>/<service>/aws4_request."
        )
    if amz_date is None:
        raise errors.incomplete_signature(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
        )
    names = signed_headers.split(";")
    if any(not n or n != n.strip().lower() for n in names):
        raise errors.incomplete_signature(
            "SignedHeaders must be lower-case names separated by ';'."
        )
    if "host" not in names:
        raise errors.incomplete_signature(
            "'Host' must be a 'SignedHeader' in the AWS Authorization."
        )
    return _Parsed(
        access_key_id=parts[0],
        scope_date=parts[1],
        region=parts[2],
        service=parts[3],
        terminator=parts[4],
        signed_headers=names,
        signature=sig,
        amz_date=amz_date,
        presigned=expires is not None,
        expires_s=expires,
    )


def _date_header(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        raise errors.incomplete_signature("Date must be an RFC 1123 date.") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime(_AMZ_FORMAT)


def _parse_amz_date(value: str) -> datetime:
    if _BASIC_FORMAT.fullmatch(value):
        # The form every SDK sends, read without strptime (its regex and locale machinery
        # were 0.4% of the server's time in the bench's SQS turn, #38); a date it accepts
        # is one strptime accepts, and an impossible one (month 13) is refused the same way.
        try:
            return datetime(
                int(value[0:4]),
                int(value[4:6]),
                int(value[6:8]),
                int(value[9:11]),
                int(value[11:13]),
                int(value[13:15]),
                tzinfo=UTC,
            )
        except ValueError:
            pass  # strptime below says why, in the words it always used
    try:
        when = datetime.strptime(value, _AMZ_FORMAT)
    except ValueError:
        raise errors.incomplete_signature(
            f"Date must be in ISO-8601 'basic format' (YYYYMMDD'T'HHMMSS'Z'): {value[:40]!r}."
        ) from None
    return when.replace(tzinfo=UTC)


def _check_scope(p: _Parsed, region: str) -> None:
    if p.terminator != TERMINATOR:
        raise errors.signature_does_not_match_because(
            f"Credential should be scoped with a valid terminator: '{TERMINATOR}', not "
            f"'{p.terminator[:40]}'."
        )
    if p.service != SERVICE:
        raise errors.signature_does_not_match_because(
            f"Credential should be scoped to correct service: '{SERVICE}'."
        )
    if p.region != region:
        # A signature is for one region, as at AWS: one made for another endpoint's region
        # is not valid here (the SDK's region_name must be this server's).
        raise errors.signature_does_not_match_because(
            f"Credential should be scoped to a valid region, not '{p.region[:40]}': this "
            f"endpoint's region is '{region}' (the server's CASSIEQ_SQS_REGION)."
        )
    if not p.amz_date.startswith(p.scope_date) or len(p.scope_date) != 8:
        raise errors.signature_does_not_match_because(
            f"Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
            f"from HTTP: '{p.scope_date[:40]}' != '{p.amz_date[:8]}'."
        )


def _check_signed_headers(req: SignedRequest, p: _Parsed) -> None:
    """``x-amz-target`` names the action and ``content-type`` decides how the body is read:
    left unsigned, a captured request's action could be swapped. A presigned URL's empty
    body is not read, so its ``content-type`` (which some HTTP clients add) changes nothing."""
    for name in _MUST_SIGN_WHEN_SENT:
        if name in p.signed_headers or not req.header_values(name):
            continue
        if name == "content-type" and p.presigned and not req.body:
            continue
        raise errors.incomplete_signature(
            f"'{name}' is in the request, so it must be one of the signed headers "
            f"(it decides what the request does); signed: {';'.join(p.signed_headers)[:200]}."
        )


def _check_time(p: _Parsed, signed_at: datetime, now: datetime) -> None:
    def fmt(t: datetime) -> str:
        return t.strftime(_AMZ_FORMAT)

    if signed_at > now + MAX_SKEW:
        raise errors.signature_does_not_match_because(
            f"Signature not yet current: {fmt(signed_at)} is still later than "
            f"{fmt(now + MAX_SKEW)} ({fmt(now)} + 15 min.)"
        )
    if p.expires_s is None:
        if signed_at < now - MAX_SKEW:
            raise errors.signature_does_not_match_because(
                f"Signature expired: {fmt(signed_at)} is now earlier than "
                f"{fmt(now - MAX_SKEW)} ({fmt(now)} - 15 min.)"
            )
        return
    until = signed_at + timedelta(seconds=p.expires_s)
    if now > until:
        # SQS's Common Errors name this one: RequestExpired (400), "... after the request
        # expiration date (such as for pre-signed URLs)".
        raise errors.request_expired(
            f"Request has expired: {fmt(until)} is now earlier than {fmt(now)} "
            f"({fmt(signed_at)} + {p.expires_s} sec.)"
        )


def _payload_hash(req: SignedRequest, p: _Parsed) -> str:
    actual = hashlib.sha256(req.body).hexdigest()
    claimed = req.header("x-amz-content-sha256")
    if p.presigned or claimed is None:
        return actual
    if claimed == UNSIGNED_PAYLOAD:
        # AWS allows it over https for services that model an unsigned body (S3); SQS has no
        # such operation, so no SDK sends it here. Accepted, a captured request would work
        # with any body for 15 minutes.
        raise errors.signature_does_not_match_because(
            "The payload must be signed: 'x-amz-content-sha256: UNSIGNED-PAYLOAD' is not "
            "accepted by this endpoint; send the body's SHA-256 there, or no such header."
        )
    if not hmac.compare_digest(claimed.lower().encode("utf-8", "replace"), actual.encode()):
        raise errors.signature_does_not_match_because(
            "The provided 'x-amz-content-sha256' header does not match what was computed."
        )
    return claimed
