"""`--web-config FILE`: the web configuration file of Prometheus's exporter-toolkit (node_exporter's
`--web.config.file`), read and checked before the exporter listens, and again when it changes (`web.py`).

The same keys and meanings as the toolkit's `docs/web-configuration.md`, so a platform team's existing file
works unchanged: `tls_server_config` (certificate and key as files or inline PEM, client CA, client
authentication policy, allowed client SANs, TLS versions, cipher suites), `http_server_config` (`http2`,
the toolkit's response headers), `rate_limit` and `basic_auth_users` (user -> bcrypt hash). Relative paths
are relative to the file's directory, as in the toolkit. What Python's `ssl` module cannot do the toolkit's
way is refused by name rather than approximated: `curve_preferences` (a preference list: Python sets one
curve), `client_auth_type` RequestClientCert and RequireAnyClientCert (Python verifies every client
certificate it asks for). Two stricter rules than the toolkit's: the file must configure TLS (basic auth
over plain HTTP would hand the password to anyone on the path), and every hash must be bcrypt when the file
is read, not at the first request.
"""

from __future__ import annotations

import re
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
               "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
UNSUPPORTED_CLIENT_AUTH = ("RequestClientCert", "RequireAnyClientCert", "RequireClientCert")
TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1, "TLS12": ssl.TLSVersion.TLSv1_2,
                "TLS13": ssl.TLSVersion.TLSv1_3}
# the toolkit's configurable response headers -> their allowed values (empty: any value)
HEADERS: dict[str, tuple[str, ...]] = {"Strict-Transport-Security": (), "X-Content-Type-Options": ("nosniff",),
                                       "X-Frame-Options": ("deny", "sameorigin"), "X-XSS-Protection": (),
                                       "Content-Security-Policy": ()}
TLS_KEYS = ("cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type", "client_ca_file",
            "client_allowed_sans", "min_version", "max_version", "cipher_suites", "prefer_server_cipher_suites",
            "curve_preferences")
HTTP_KEYS = ("http2", "headers")
TOP_KEYS = ("tls_server_config", "http_server_config", "basic_auth_users", "rate_limit")
# Go's names of the cipher suites `tls.CipherSuites()` lists -> OpenSSL's; None: a TLS 1.3 suite, which
# neither Go nor OpenSSL lets `cipher_suites` choose (it applies to TLS 1.2 and lower)
CIPHER_SUITES: dict[str, str | None] = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA", "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256", "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_AES_128_GCM_SHA256": None, "TLS_AES_256_GCM_SHA384": None, "TLS_CHACHA20_POLY1305_SHA256": None,
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
RATE_LIMIT_KEYS = ("interval", "burst")
GO_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
GO_DURATION = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
BCRYPT_HASH = re.compile(r"\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}")


class WebConfigError(ValueError):
    """What is wrong with the file, in one line naming the key or the file."""


@dataclass(frozen=True)
class WebConfig:
    """A checked web configuration: the TLS context the server wraps connections in, and what each request
    must carry."""

    tls: ssl.SSLContext
    client_auth: str  # the toolkit's name of the policy in `tls`
    allowed_sans: frozenset[str] | None  # a verified client certificate must name one of these, when set
    users: Mapping[str, bytes] = field(repr=False)  # user -> bcrypt hash; empty: no basic auth
    headers: Mapping[str, str] = field(default_factory=dict)  # added to every response
    rate_limit: RateLimit | None = None  # requests beyond it get 429
    files: tuple[Path, ...] = ()  # the file itself, then the certificate, key and CA files it names


@dataclass(frozen=True)
class RateLimit:
    """The toolkit's token bucket (Go's `rate.Limiter`): one request per `interval_s` on average, `burst` at
    once; the bucket starts full."""

    interval_s: float
    burst: int


def load_web_config(path: str | Path) -> WebConfig:
    """The file at `path`, checked and its certificates and keys loaded; `WebConfigError` otherwise."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise WebConfigError("is a directory") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WebConfigError(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        doc = yaml.load(text, _StrictLoader) or {}  # the safe loader, refusing duplicate keys
    except yaml.YAMLError as exc:
        raise WebConfigError(f"not YAML: {_yaml_problem(exc)}") from None
    top = _mapping(doc, "", TOP_KEYS)
    tls = _mapping(top.get("tls_server_config"), "tls_server_config", TLS_KEYS)
    http = _mapping(top.get("http_server_config"), "http_server_config", HTTP_KEYS)
    context, client_auth, sans = _tls_context(tls, p.parent)
    _boolean(http, "http_server_config.http2")  # we speak HTTP/1.1, which every HTTP/2 client also speaks
    files = (p, *(p.parent / tls[k] for k in ("cert_file", "key_file", "client_ca_file") if tls.get(k)))
    return WebConfig(context, client_auth, sans, _users(top.get("basic_auth_users")), _headers(http.get("headers")),
                     _rate_limit(top.get("rate_limit")), files)


def _tls_context(tls: dict[str, Any], directory: Path) -> tuple[ssl.SSLContext, str, frozenset[str] | None]:
    if tls.get("curve_preferences"):
        raise WebConfigError("tls_server_config.curve_preferences: not supported by this exporter (OpenSSL's "
                             "default curves are used)")
    cert = _pem(tls, "cert", directory)
    key = _pem(tls, "key", directory)
    if cert is None or key is None:
        raise WebConfigError("tls_server_config: cert_file and key_file are required (with a web config, "
                             "/metrics is served over TLS only)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = _version(tls, "min_version", "TLS12")
    context.maximum_version = _version(tls, "max_version", "TLS13")
    if context.minimum_version > context.maximum_version:
        raise WebConfigError("tls_server_config: min_version is above max_version")
    if not _boolean(tls, "tls_server_config.prefer_server_cipher_suites", default=True):
        context.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    _cipher_suites(context, tls.get("cipher_suites"))
    _load_key_pair(context, cert, key)

    policy = _string(tls, "client_auth_type") or "NoClientCert"
    if policy in UNSUPPORTED_CLIENT_AUTH:
        raise WebConfigError(f"tls_server_config.client_auth_type: {policy} is not supported (Python's TLS "
                             "verifies every client certificate it asks for); use RequireAndVerifyClientCert")
    if policy not in CLIENT_AUTH:
        raise WebConfigError(f"tls_server_config.client_auth_type: expected one of {', '.join(CLIENT_AUTH)}, "
                             f"got {policy!r}")
    context.verify_mode = CLIENT_AUTH[policy]
    ca = _pem(tls, "client_ca", directory)
    if ca is not None and policy == "NoClientCert":
        raise WebConfigError("tls_server_config.client_auth_type: a client CA is set but the policy is "
                             "NoClientCert; use RequireAndVerifyClientCert")
    if ca is not None:
        try:
            context.load_verify_locations(cadata=ca.text)
        except (ssl.SSLError, ValueError):
            raise WebConfigError(f"{ca.origin}: no PEM certificate in it") from None
    elif policy != "NoClientCert":
        context.load_default_certs(ssl.Purpose.CLIENT_AUTH)  # as Go: the system's roots without a client CA
    sans = tls.get("client_allowed_sans")
    if sans is None:
        return context, policy, None
    if not isinstance(sans, list) or not all(isinstance(s, str) for s in sans):
        raise WebConfigError("tls_server_config.client_allowed_sans: expected a list of strings")
    if policy != "RequireAndVerifyClientCert":
        raise WebConfigError("tls_server_config.client_allowed_sans: needs client_auth_type "
                             "RequireAndVerifyClientCert (without a certificate there is no SAN to match)")
    return context, policy, frozenset(sans)


@dataclass(frozen=True)
class _Pem:
    text: str
    origin: str  # the key, or the key and the file, for messages
    path: Path | None = None  # None: given inline


def _pem(tls: dict[str, Any], name: str, directory: Path) -> _Pem | None:
    """`name` (inline PEM) or `name_file` (a path, relative to the config's directory), not both."""
    inline, file = _string(tls, name), _string(tls, f"{name}_file")
    if inline and file:
        raise WebConfigError(f"tls_server_config: set one of {name} and {name}_file, not both")
    if inline:
        return _Pem(inline, f"tls_server_config.{name}")
    if not file:
        return None
    path = directory / file
    try:
        return _Pem(path.read_text(encoding="utf-8"), f"tls_server_config.{name}_file {path}", path)
    except IsADirectoryError:
        raise WebConfigError(f"tls_server_config.{name}_file {path}: is a directory") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WebConfigError(f"tls_server_config.{name}_file {path}: cannot read: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None


def _load_key_pair(context: ssl.SSLContext, cert: _Pem, key: _Pem) -> None:
    """`load_cert_chain` reads files only: inline PEM goes through a private temporary directory."""
    def no_passphrase() -> str:
        raise WebConfigError(f"{key.origin}: the key is encrypted; give an unencrypted key")

    with tempfile.TemporaryDirectory(prefix="rebalance-tls-") as tmp:
        paths = []
        for pem, name in ((cert, "cert.pem"), (key, "key.pem")):
            if pem.path is None:
                (Path(tmp) / name).write_text(pem.text)
            paths.append(pem.path or Path(tmp) / name)
        try:
            context.load_cert_chain(paths[0], paths[1], password=no_passphrase)
        except ssl.SSLError as exc:
            problem = ("the key does not belong to the certificate" if exc.reason == "KEY_VALUES_MISMATCH"
                       else "not a PEM certificate and its private key" + (f" ({exc.reason})" if exc.reason else ""))
            raise WebConfigError(f"{cert.origin}, {key.origin}: {problem}") from None


def _cipher_suites(context: ssl.SSLContext, names: Any) -> None:
    """`cipher_suites` (Go's names, in preference order) as OpenSSL's list for TLS 1.2 and lower; none of
    those in it leaves only TLS 1.3, as in Go."""
    if not names:
        return
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise WebConfigError("tls_server_config.cipher_suites: expected a list of Go cipher suite names")
    unknown = [n for n in names if n not in CIPHER_SUITES]
    if unknown:
        raise WebConfigError(f"tls_server_config.cipher_suites: unknown cipher {unknown[0]} (the names of Go's "
                             "tls.CipherSuites())")
    openssl = [suite for n in names if (suite := CIPHER_SUITES[n]) is not None]
    if not openssl:
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        if context.maximum_version < ssl.TLSVersion.TLSv1_3:
            raise WebConfigError("tls_server_config.cipher_suites: only TLS 1.3 suites, but max_version is below "
                                 "TLS13")
        return
    try:
        context.set_ciphers(":".join(openssl))
    except ssl.SSLError:
        raise WebConfigError("tls_server_config.cipher_suites: none of them is available in this OpenSSL") from None


def _rate_limit(section: Any) -> RateLimit | None:
    """`rate_limit`: `interval` a Go duration ("1s", "250ms"; an integer is nanoseconds, as Go reads it),
    0 or absent for no limit; `burst` the requests allowed at once."""
    limit = _mapping(section, "rate_limit", RATE_LIMIT_KEYS)
    interval, burst = limit.get("interval", 0), limit.get("burst", 0)
    if isinstance(interval, bool) or not isinstance(interval, (int, str)):
        raise WebConfigError("rate_limit.interval: expected a duration such as 1s or 250ms")
    seconds = interval * 1e-9 if isinstance(interval, int) else _go_duration(interval)
    if seconds is None or seconds < 0:
        raise WebConfigError(f"rate_limit.interval: expected a duration such as 1s or 250ms, got {interval!r}")
    if isinstance(burst, bool) or not isinstance(burst, int) or burst < 0:
        raise WebConfigError(f"rate_limit.burst: expected a whole number of requests, got {burst!r}")
    return RateLimit(seconds, burst) if seconds > 0 else None


def _go_duration(text: str) -> float | None:
    """Seconds of a Go duration string ("1h30m", "1.5s", "0"), None if it is not one."""
    if text in ("0", "+0", "-0"):
        return 0.0
    sign = -1.0 if text.startswith("-") else 1.0
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or GO_DURATION.sub("", body):
        return None
    return sign * sum(float(n) * GO_DURATION_UNITS[u] for n, u in GO_DURATION.findall(body))


def _users(section: Any) -> dict[str, bytes]:
    users = _mapping(section, "basic_auth_users", None)
    out = {}
    for user, hashed in users.items():
        if not isinstance(user, str):
            raise WebConfigError(f"basic_auth_users: a user name must be a string, got {user!r}")
        if not isinstance(hashed, str) or not BCRYPT_HASH.fullmatch(hashed):
            raise WebConfigError(f"basic_auth_users.{user}: not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31; "
                                 "make one with htpasswd -nBC 10 \"\" or python -c 'import bcrypt; ...')")
        out[user] = hashed.encode()
    return out


def _headers(section: Any) -> dict[str, str]:
    headers = _mapping(section, "http_server_config.headers", tuple(HEADERS))
    out = {}
    for name, value in headers.items():
        if not isinstance(value, str):
            raise WebConfigError(f"http_server_config.headers.{name}: expected a string")
        if HEADERS[name] and value not in HEADERS[name]:
            raise WebConfigError(f"http_server_config.headers.{name}: expected one of {', '.join(HEADERS[name])}, "
                                 f"got {value!r}")
        if value:  # blank: unset, as in the toolkit
            out[name] = value
    return out


def _mapping(value: Any, where: str, keys: tuple[str, ...] | None) -> dict[str, Any]:
    """A YAML mapping (null: empty) whose keys are all among `keys` (None: any string keys)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WebConfigError(f"{where or 'the file'}: expected a mapping")
    for key in value:
        if keys is not None and key not in keys:
            raise WebConfigError(f"unknown key {where + '.' if where else ''}{key}")
    return value


def _string(section: dict[str, Any], key: str) -> str:
    value = section.get(key)
    if value is not None and not isinstance(value, str):
        raise WebConfigError(f"tls_server_config.{key}: expected a string")
    return value or ""


def _boolean(section: dict[str, Any], where: str, default: bool = True) -> bool:
    value = section.get(where.rpartition(".")[2], default)
    if not isinstance(value, bool):
        raise WebConfigError(f"{where}: expected true or false")
    return value


def _version(tls: dict[str, Any], key: str, default: str) -> ssl.TLSVersion:
    name = _string(tls, key) or default
    if name not in TLS_VERSIONS:
        raise WebConfigError(f"tls_server_config.{key}: expected one of {', '.join(TLS_VERSIONS)}, got {name!r}")
    return TLS_VERSIONS[name]


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"line {mark.line + 1}: {problem}" if mark is not None else problem


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice, as the toolkit's strict parser does."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)
