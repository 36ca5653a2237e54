"""`rebalance exporter --web-config FILE` as a process, asked by hostile clients: no credentials, a wrong
password, an unknown user, plain HTTP to the TLS port, and (mutual TLS) no client certificate, one from
another CA, one whose SAN is not allowed. The exporter's topics do not exist: its health series are what
these tests scrape."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest
from web_tls import PASSWORD, USER, Pki, bcrypt_hash, issue, make_pki, write_web_config

from bench.exporter import ExporterProcess

pytestmark = pytest.mark.kafka

HEALTH = b"rebalance_exporter_broker_up"


def get(url: str, context: ssl.SSLContext | None = None, user: str | None = None, password: str = "",
        authorization: str | None = None) -> tuple[int, Message, bytes]:
    """(status, headers, body) of GET `url`."""
    request = urllib.request.Request(url)
    if user is not None:
        authorization = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    if authorization is not None:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    issue(pki.dir, "intruder", "DNS:intruder", pki.dir)  # from the same CA, a SAN the mutual-TLS exporter refuses
    return pki


def exporter(bootstrap: str, tmp: Path, name: str, config: Path) -> Iterator[ExporterProcess]:
    topics = ("--diffs-topic", f"{name}-diffs-absent", "--conformance-topic", f"{name}-conformance-absent")
    process = ExporterProcess(bootstrap, tmp / f"{name}.log", *topics, "--web-config", str(config))
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def basic_auth(kafka_bootstrap: str, pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExporterProcess]:
    """TLS and basic auth, with a response header from http_server_config."""
    tmp = tmp_path_factory.mktemp("basic")
    config = write_web_config(tmp / "web.yml", pki, users={USER: bcrypt_hash(PASSWORD), "other": bcrypt_hash("x")})
    config.write_text(config.read_text()[:-2] + ', "http_server_config": {"headers": {"X-Frame-Options": "deny"}}}')
    yield from exporter(kafka_bootstrap, tmp, "basic", config)


@pytest.fixture(scope="module")
def mutual(kafka_bootstrap: str, pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExporterProcess]:
    """TLS with client certificates signed by the CA and naming an allowed SAN; no basic auth."""
    tmp = tmp_path_factory.mktemp("mutual")
    config = write_web_config(tmp / "web.yml", pki, mutual=True, client_allowed_sans=["prometheus"])
    yield from exporter(kafka_bootstrap, tmp, "mutual", config)


def test_the_right_credentials_over_tls_get_the_metrics(basic_auth, pki):
    assert basic_auth.url.startswith("https://")
    status, headers, body = get(basic_auth.url, pki.client_context(), USER, PASSWORD)
    assert status == 200 and HEALTH in body
    assert headers["X-Frame-Options"] == "deny"
    assert "TLS; client certificates: NoClientCert; basic auth for 2 user(s)" in basic_auth.log.read_text()


@pytest.mark.parametrize("user, password, authorization", [
    (None, "", None),  # no credentials
    (USER, "wrong password", None),
    (USER, "", None),
    ("nobody", PASSWORD, None),  # an unknown user, with a password that is some user's
    ("other", PASSWORD, None),  # another user's password
    (USER, PASSWORD * 10, None),  # longer than bcrypt reads
    (None, "", "Basic not-base64!"),
    (None, "", "Basic " + base64.b64encode(b"no colon").decode()),
    (None, "", "Bearer " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()),
], ids=["none", "wrong", "empty", "unknown-user", "other-users-password", "too-long", "bad-base64", "no-colon",
        "not-basic"])
def test_missing_or_wrong_credentials_get_401_with_a_basic_challenge(basic_auth, pki, user, password, authorization):
    status, headers, body = get(basic_auth.url, pki.client_context(), user, password, authorization)
    assert status == 401 and HEALTH not in body
    assert headers["WWW-Authenticate"] == 'Basic realm="rebalance exporter"'
    assert headers["X-Frame-Options"] == "deny"  # the configured headers go on every response


def test_plain_http_to_the_tls_port_gets_400_and_no_metrics(basic_auth):
    status, _, body = get(basic_auth.url.replace("https://", "http://"), user=USER, password=PASSWORD)
    assert status == 400 and body == b"Client sent an HTTP request to an HTTPS server.\n"


def test_broken_connections_are_dropped_quietly_and_serving_goes_on(basic_auth, pki):
    with socket.create_connection(("127.0.0.1", basic_auth.port)) as s:  # a TLS record header, then garbage
        s.sendall(b"\x16\x03\x01\x00\x05garbage")
        s.recv(100)  # an alert, or nothing: the server hangs up either way
    socket.create_connection(("127.0.0.1", basic_auth.port)).close()  # gone before the handshake
    with socket.create_connection(("127.0.0.1", basic_auth.port)) as raw, \
            pki.client_context().wrap_socket(raw, server_hostname="localhost") as tls:
        tls.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        assert b"400" in tls.makefile("rb").read()  # the standard library's "Bad request version" page
    with socket.create_connection(("127.0.0.1", basic_auth.port)) as raw, \
            pki.client_context().wrap_socket(raw, server_hostname="localhost") as tls:
        os.write(tls.fileno(), b"\x17\x03\x03\x00\x04junk")  # not encrypted: the TLS stream breaks
        with pytest.raises(ssl.SSLError, match="BAD_RECORD_MAC"):  # the server's alert
            tls.makefile("rb").read()
    assert get(basic_auth.url, pki.client_context(), USER, PASSWORD)[0] == 200
    assert "Traceback" not in basic_auth.log.read_text()


def test_a_client_that_does_not_trust_the_certificate_is_refused_by_itself(basic_auth):
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        get(basic_auth.url, ssl.create_default_context(), USER, PASSWORD)


def test_mutual_tls_serves_a_client_certificate_signed_by_the_ca(mutual, pki):
    status, _, body = get(mutual.url, pki.client_context(with_certificate=True))
    assert status == 200 and HEALTH in body


def test_mutual_tls_refuses_a_client_without_a_certificate(mutual, pki):
    with pytest.raises(OSError):  # the handshake fails: no HTTP response at all
        get(mutual.url, pki.client_context())


def test_mutual_tls_refuses_a_certificate_of_another_ca(mutual, pki, tmp_path):
    stranger = make_pki(tmp_path / "stranger")
    context = pki.client_context()
    context.load_cert_chain(stranger.client_cert, stranger.client_key)
    with pytest.raises(OSError):
        get(mutual.url, context)


def test_mutual_tls_refuses_a_certificate_without_an_allowed_san(mutual, pki):
    context = pki.client_context()
    context.load_cert_chain(pki.dir / "intruder.crt", pki.dir / "intruder.key")
    with pytest.raises(OSError):
        get(mutual.url, context)


def server_serial(url: str, pki: Pki) -> str:
    """The serial number of the certificate the exporter presents now."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.create_connection(("127.0.0.1", port)) as raw, \
            pki.client_context().wrap_socket(raw, server_hostname="localhost") as tls:
        return tls.getpeercert()["serialNumber"]


def test_a_renewed_certificate_and_a_changed_password_apply_without_a_restart(kafka_bootstrap, pki, tmp_path):
    """As the toolkit re-reads its file on every request; a change that does not load keeps the last good one."""
    tls = tmp_path / "tls"
    tls.mkdir()
    for name in ("server.crt", "server.key"):
        shutil.copy(pki.dir / name, tls / name)
    config = tls / "web.yml"

    def write_config(password: str, **extra: object) -> None:
        staged = tls / "web.yml.new"
        tls_config = {"cert_file": "server.crt", "key_file": "server.key"}
        staged.write_text(json.dumps({"tls_server_config": tls_config,
                                      "basic_auth_users": {USER: bcrypt_hash(password)}, **extra}))
        os.replace(staged, config)

    write_config(PASSWORD)
    for process in exporter(kafka_bootstrap, tmp_path, "reload", config):
        first = server_serial(process.url, pki)
        renewed = make_pki(tmp_path / "renewed", ca=pki)  # a new certificate and key from the same CA
        for name in ("server.key", "server.crt"):
            os.replace(renewed.dir / name, tls / name)
        assert server_serial(process.url, pki) not in (first, "")
        assert get(process.url, pki.client_context(), USER, PASSWORD)[0] == 200

        write_config("a new password")
        assert get(process.url, pki.client_context(), USER, PASSWORD)[0] == 401
        assert get(process.url, pki.client_context(), USER, "a new password")[0] == 200

        write_config("yet another", unknown_key=1)
        assert get(process.url, pki.client_context(), USER, "a new password")[0] == 200
        log = process.log.read_text()
        assert f"web config {config} changed but does not load (unknown key unknown_key)" in log
        assert "Traceback" not in log
