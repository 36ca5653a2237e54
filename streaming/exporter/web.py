"""The exporter's HTTP endpoint: plain HTTP, or with a web config (`web_config.py`) HTTPS only, with
client certificates, a rate limit, basic auth and response headers as Prometheus's exporter-toolkit
applies them.

Every connection is handled in its own daemon thread, the TLS handshake included, so a slow or hostile
client never holds up the others or keeps the process alive. A plain HTTP request to the TLS port gets
the answer Go's servers give (400, "Client sent an HTTP request to an HTTPS server."), which tells
whoever set up the scrape to use `scheme: https`, and no metrics.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bcrypt

from streaming.exporter.web_config import RateLimit, WebConfig, WebConfigError, load_web_config

log = logging.getLogger("rebalance.exporter")

REALM = "rebalance exporter"
HANDSHAKE_TIMEOUT_S = 10.0  # a client that opens a connection and sends nothing is dropped after this
PLAIN_HTTP_REPLY = (b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
                    b"Client sent an HTTP request to an HTTPS server.\n")
BCRYPT_MAX_PASSWORD = 72  # bcrypt reads no further; Go's bcrypt ignores the rest, Python's refuses it
VERIFIED_CACHE = 100  # credentials that matched, remembered so a scrape costs one bcrypt check per restart

App = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def serve(host: str, port: int, app: App, web: WebConfig | None) -> int:
    """Serve `app` in a daemon thread (over TLS with auth when `web` is given); returns the port bound."""
    if web is None:
        server = make_server(host, port, app, _Server, handler_class=_QuietHandler)
    else:
        live = LiveWebConfig(web)
        server = make_server(host, port, secured(app, live), _TLSServer, handler_class=_QuietHandler)
        server.live = live
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    return int(server.server_port)


@dataclass(frozen=True)
class Guard:
    """What one web config asks of each request, with the state that enforces it."""

    web: WebConfig
    auth: BasicAuth | None
    limiter: TokenBucket | None

    @classmethod
    def of(cls, web: WebConfig, clock: Callable[[], float]) -> Guard:
        return cls(web, BasicAuth(web.users) if web.users else None,
                   TokenBucket(web.rate_limit, clock) if web.rate_limit is not None else None)


class LiveWebConfig:
    """The web config as its files are now. The toolkit reads its file on every request and the
    certificates on every connection, so a renewed certificate or a changed password applies without a
    restart; here each connection compares the files' modification times and sizes with the last read
    and reads them again when they differ. A change that does not load (a certificate written before its
    key, a typo) is logged once and the previous configuration goes on serving, rather than every scrape
    failing until the files are right again."""

    def __init__(self, web: WebConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.guard = Guard.of(web, clock)
        self.stamp = _stamp(web.files)
        self.lock = threading.Lock()

    def current(self) -> Guard:
        stamp = _stamp(self.guard.web.files)
        if stamp == self.stamp:
            return self.guard
        with self.lock:
            if stamp != self.stamp:
                self.stamp = stamp
                path = self.guard.web.files[0]
                try:
                    self.guard = Guard.of(load_web_config(path), self.clock)
                    log.info("web config %s read again", path)
                except WebConfigError as exc:
                    log.warning("web config %s changed but does not load (%s); serving with the previous one",
                                path, exc)
            return self.guard


def _stamp(files: tuple[Path, ...]) -> tuple[tuple[int, int] | None, ...]:
    """(modification time, size) of each file, None where it cannot be read."""
    out: list[tuple[int, int] | None] = []
    for f in files:
        try:
            st = f.stat()
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def secured(app: App, live: LiveWebConfig) -> App:
    """`app` behind the web config's rate limit and basic auth, with its headers on every response past
    the rate limit (401s included), in the toolkit's order."""
    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        guard = live.current()
        extra = list(guard.web.headers.items())

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            return start_response(status, headers + extra, exc_info)

        limiter, auth = guard.limiter, guard.auth
        if limiter is not None and not limiter.allow():
            body = b"Too Many Requests\n"
            start_response("429 Too Many Requests", [("Content-Type", "text/plain; charset=utf-8"),
                                                     ("Content-Length", str(len(body)))])
            return [body]
        if auth is not None and not auth.allows(environ.get("HTTP_AUTHORIZATION")):
            body = b"Unauthorized\n"
            start("401 Unauthorized", [("WWW-Authenticate", f'Basic realm="{REALM}"'),
                                       ("Content-Type", "text/plain; charset=utf-8"),
                                       ("Content-Length", str(len(body)))])
            return [body]
        return app(environ, start)

    return wrapped


class TokenBucket:
    """Go's `rate.Limiter.Allow` as the toolkit uses it: a token every `interval_s`, at most `burst` kept,
    the bucket full at start; a request takes a token or is refused."""

    def __init__(self, limit: RateLimit, clock: Callable[[], float]) -> None:
        self.interval_s, self.burst, self.clock = limit.interval_s, limit.burst, clock
        self.tokens, self.last = float(limit.burst), clock()
        self.lock = threading.Lock()

    def allow(self) -> bool:
        with self.lock:
            now = self.clock()
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) / self.interval_s)
            self.last = now
            if self.tokens < 1:
                return False
            self.tokens -= 1
            return True


class BasicAuth:
    """Credentials checked against bcrypt hashes. An unknown user's password is checked against a
    configured hash all the same, so the answer takes as long as for a known user and timing does not
    tell which users exist. One check runs at a time (bcrypt is meant to be slow: parallel guesses would
    take every core); credentials that matched are remembered by digest, as the toolkit caches them."""

    def __init__(self, users: Mapping[str, bytes]) -> None:
        self.users = dict(users)
        self.decoy = self.users[min(self.users)]
        self.lock = threading.Lock()
        self.verified: set[bytes] = set()

    def allows(self, authorization: str | None) -> bool:
        credentials = _basic_credentials(authorization)
        if credentials is None:
            return False
        user, password = credentials
        hashed = self.users.get(user)
        digest = hashlib.sha256(b"\0".join((user.encode(errors="surrogateescape"), hashed or b"", password))
                                ).digest()
        if hashed is not None and digest in self.verified:
            return True
        with self.lock:
            matches = bcrypt.checkpw(password[:BCRYPT_MAX_PASSWORD], hashed or self.decoy)
        if not (matches and hashed is not None):
            return False
        if len(self.verified) >= VERIFIED_CACHE:
            self.verified.clear()
        self.verified.add(digest)
        return True


def _basic_credentials(authorization: str | None) -> tuple[str, bytes] | None:
    """(user, password) of an `Authorization: Basic ...` header, as Go's `Request.BasicAuth` reads it."""
    if not authorization or authorization[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(authorization[6:], validate=True)
    except ValueError:
        return None
    user, sep, password = decoded.partition(b":")
    if not sep:
        return None
    return user.decode("utf-8", errors="surrogateescape"), password


def _san_values(cert: dict[str, Any]) -> set[str]:
    """A verified certificate's DNS names, e-mail addresses, IP addresses (in Go's notation) and URIs."""
    out = set()
    for kind, value in cert.get("subjectAltName", ()):
        if kind == "IP Address":
            out.add(str(ipaddress.ip_address(value.strip())))
        elif kind in ("DNS", "email", "URI"):
            out.add(value)
    return out


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a hung scrape never keeps the process alive


class _TLSServer(_Server):
    """Connections are TLS: handshake (and the client certificate's SAN check) in the connection's thread."""

    live: LiveWebConfig

    def finish_request(self, request: Any, client_address: Any) -> None:
        web = self.live.current().web
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            first = request.recv(1, socket.MSG_PEEK)
            if first != b"\x16":  # not a TLS handshake record
                if first.isalpha():  # an HTTP method: plain HTTP to the TLS port
                    request.recv(65536)
                    request.sendall(PLAIN_HTTP_REPLY)
                return
            conn = web.tls.wrap_socket(request, server_side=True)
        except OSError:  # a failed handshake (ssl.SSLError) or a vanished client
            return
        try:
            sans = web.allowed_sans
            if sans is not None and not _san_values(conn.getpeercert() or {}) & sans:
                return
            super().finish_request(conn, client_address)
        except OSError:  # the client went away or broke the TLS stream mid-request: nothing to answer
            return
        finally:
            conn.close()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # one line per scrape would drown the log
        pass
