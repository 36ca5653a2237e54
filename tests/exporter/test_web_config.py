"""`rebalance exporter --web-config FILE`: a file the exporter cannot honour exits 2 with one line naming the
key or the file, before anything listens; a good one is read with the toolkit's meanings."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import subprocess
from collections.abc import Callable

import pytest
from web_tls import Pki, bcrypt_hash, make_pki

from streaming.cli.main import main
from streaming.demo.local_broker import free_port
from streaming.exporter.web import LiveWebConfig, secured
from streaming.exporter.web_config import CIPHER_SUITES, WebConfig, load_web_config


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def tls(pki: Pki, **extra: object) -> dict[str, object]:
    return {"cert_file": str(pki.server_cert), "key_file": str(pki.server_key), **extra}


def encrypted_key(pki: Pki) -> str:
    path = pki.dir / "encrypted.key"
    if not path.exists():
        subprocess.run(["openssl", "pkey", "-in", str(pki.server_key), "-aes256", "-passout", "pass:secret",
                        "-out", str(path)], check=True, capture_output=True)
    return str(path)


BAD: list[tuple[str, Callable[[Pki], object], str]] = [
    ("unknown top-level key", lambda p: {"tls_server_confg": tls(p)}, "unknown key tls_server_confg"),
    ("unknown TLS key", lambda p: {"tls_server_config": tls(p, cert_fle="x")},
     "unknown key tls_server_config.cert_fle"),
    ("unknown header", lambda p: {"tls_server_config": tls(p), "http_server_config": {"headers": {"Server": "x"}}},
     "unknown key http_server_config.headers.Server"),
    ("missing certificate", lambda p: {"tls_server_config": tls(p, cert_file=str(p.dir / "missing.crt"))},
     "tls_server_config.cert_file {dir}/missing.crt: cannot read: No such file or directory"),
    ("key file is a directory", lambda p: {"tls_server_config": tls(p, key_file=str(p.dir))},
     "tls_server_config.key_file {dir}: is a directory"),
    ("key of another certificate", lambda p: {"tls_server_config": tls(p, key_file=str(p.client_key))},
     "the key does not belong to the certificate"),
    ("not a certificate", lambda p: {"tls_server_config": tls(p, cert_file=str(p.server_key))},
     "not a PEM certificate and its private key"),
    ("encrypted key", lambda p: {"tls_server_config": tls(p, key_file=encrypted_key(p))},
     "the key is encrypted"),
    ("plain-text password", lambda p: {"tls_server_config": tls(p), "basic_auth_users": {"alice": "secret"}},
     "basic_auth_users.alice: not a bcrypt hash"),
    ("MD5 crypt hash", lambda p: {"tls_server_config": tls(p),
                                  "basic_auth_users": {"bob": "$apr1$Hs3gq0Yq$Y0hCgZKpbUsHpSs1Ag5SX/"}},
     "basic_auth_users.bob: not a bcrypt hash"),
    ("truncated bcrypt hash", lambda p: {"tls_server_config": tls(p),
                                         "basic_auth_users": {"carol": bcrypt_hash("x")[:-1]}},
     "basic_auth_users.carol: not a bcrypt hash"),
    ("basic auth without TLS", lambda p: {"basic_auth_users": {"alice": bcrypt_hash("x")}},
     "tls_server_config: cert_file and key_file are required"),
    ("key without certificate", lambda p: {"tls_server_config": {"key_file": str(p.server_key)}},
     "tls_server_config: cert_file and key_file are required"),
    ("unknown client auth type", lambda p: {"tls_server_config": tls(p, client_auth_type="Always")},
     "tls_server_config.client_auth_type: expected one of NoClientCert, VerifyClientCertIfGiven, "
     "RequireAndVerifyClientCert, got 'Always'"),
    ("unverified client certificates", lambda p: {"tls_server_config": tls(p, client_auth_type="RequireAnyClientCert",
                                                                           client_ca_file=str(p.ca))},
     "tls_server_config.client_auth_type: RequireAnyClientCert is not supported"),
    ("client CA without a policy", lambda p: {"tls_server_config": tls(p, client_ca_file=str(p.ca))},
     "a client CA is set but the policy is NoClientCert"),
    ("client CA that is no certificate", lambda p: {"tls_server_config": tls(
        p, client_ca_file=str(p.server_key), client_auth_type="RequireAndVerifyClientCert")},
     "tls_server_config.client_ca_file {dir}/server.key: no PEM certificate in it"),
    ("SANs without required certificates", lambda p: {"tls_server_config": tls(
        p, client_ca_file=str(p.ca), client_auth_type="VerifyClientCertIfGiven", client_allowed_sans=["x"])},
     "tls_server_config.client_allowed_sans: needs client_auth_type RequireAndVerifyClientCert"),
    ("TLS version", lambda p: {"tls_server_config": tls(p, min_version="TLS14")},
     "tls_server_config.min_version: expected one of TLS10, TLS11, TLS12, TLS13, got 'TLS14'"),
    ("TLS version not a string", lambda p: {"tls_server_config": tls(p, min_version=["TLS12"])},
     "tls_server_config.min_version: expected a string"),
    ("client auth type not a string", lambda p: {"tls_server_config": tls(p, client_auth_type={"a": 1})},
     "tls_server_config.client_auth_type: expected a string"),
    ("versions crossed", lambda p: {"tls_server_config": tls(p, min_version="TLS13", max_version="TLS12")},
     "tls_server_config: min_version is above max_version"),
    ("unknown cipher suite", lambda p: {"tls_server_config": tls(p, cipher_suites=["ECDHE-RSA-AES128-GCM-SHA256"])},
     "tls_server_config.cipher_suites: unknown cipher ECDHE-RSA-AES128-GCM-SHA256"),
    ("curve preferences", lambda p: {"tls_server_config": tls(p, curve_preferences=["X25519"])},
     "tls_server_config.curve_preferences: not supported"),
    ("rate limit interval", lambda p: {"tls_server_config": tls(p), "rate_limit": {"interval": "1 sec", "burst": 5}},
     "rate_limit.interval: expected a duration such as 1s or 250ms, got '1 sec'"),
    ("rate limit burst", lambda p: {"tls_server_config": tls(p), "rate_limit": {"interval": "1s", "burst": -1}},
     "rate_limit.burst: expected a whole number of requests, got -1"),
    ("rate limit key", lambda p: {"tls_server_config": tls(p), "rate_limit": {"every": "1s"}},
     "unknown key rate_limit.every"),
    ("header value", lambda p: {"tls_server_config": tls(p),
                                "http_server_config": {"headers": {"X-Frame-Options": "allow"}}},
     "http_server_config.headers.X-Frame-Options: expected one of deny, sameorigin, got 'allow'"),
    ("http2 not a boolean", lambda p: {"tls_server_config": tls(p), "http_server_config": {"http2": "yes please"}},
     "http_server_config.http2: expected true or false"),
]


@pytest.mark.parametrize("config, message", [(c, m) for _, c, m in BAD], ids=[name for name, _, _ in BAD])
def test_a_bad_web_config_exits_2_with_one_line_before_listening(config, message, pki, tmp_path, capsys):
    path = tmp_path / "web.yml"
    path.write_text(json.dumps(config(pki)))
    port = free_port()
    assert main(["exporter", "--bootstrap", "127.0.0.1:1", "--host", "127.0.0.1", "--port", str(port),
                 "--web-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rebalance exporter: --web-config {path}: ") and len(err.splitlines()) == 1
    assert message.format(dir=pki.dir) in err
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):
        s.connect(("127.0.0.1", port))


@pytest.mark.parametrize("text, message", [
    ("tls_server_config: [unclosed", "not YAML: line 1"),
    ("tls_server_config: {}\ntls_server_config: {}\n", "not YAML: line 2: key 'tls_server_config' given twice"),
    ("- a list\n", "the file: expected a mapping"),
])
def test_a_file_that_is_not_a_yaml_mapping_exits_2(text, message, tmp_path, capsys):
    path = tmp_path / "web.yml"
    path.write_text(text)
    assert main(["exporter", "--bootstrap", "127.0.0.1:1", "--web-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


def test_a_missing_web_config_exits_2_naming_it(tmp_path, capsys):
    missing = tmp_path / "nowhere.yml"
    assert main(["exporter", "--bootstrap", "127.0.0.1:1", "--web-config", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"rebalance exporter: --web-config {missing}: cannot read: No such file or directory\n"


def test_inline_pem_is_read_like_files(pki, tmp_path):
    inline = {"cert": pki.server_cert.read_text(), "key": pki.server_key.read_text(),
              "client_ca": pki.ca.read_text(), "client_auth_type": "VerifyClientCertIfGiven"}
    (tmp_path / "inline.yml").write_text(json.dumps({"tls_server_config": inline}))
    assert load_web_config(tmp_path / "inline.yml").client_auth == "VerifyClientCertIfGiven"


def test_relative_paths_are_relative_to_the_files_directory(pki, tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "tls").symlink_to(pki.dir)
    (tmp_path / "conf" / "web.yml").write_text(
        "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/server.key\n"
        "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n    X-XSS-Protection: ''\n"
        f"basic_auth_users:\n  alice: '{bcrypt_hash('x')}'\n")
    config = load_web_config(tmp_path / "conf" / "web.yml")  # read from another working directory
    assert dict(config.headers) == {"X-Frame-Options": "deny"}  # blank: unset, as in the toolkit
    assert list(config.users) == ["alice"] and config.client_auth == "NoClientCert"


def handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> ssl.SSLObject:
    """A TLS handshake between the two contexts in memory; the client's end, or the SSLError that ended it."""
    server_in, server_out, client_in, client_out = (ssl.MemoryBIO() for _ in range(4))
    ends = [(client.wrap_bio(client_in, client_out, server_hostname="localhost"), client_out, server_in),
            (server.wrap_bio(server_in, server_out, server_side=True), server_out, client_in)]
    for _ in range(10):
        done = 0
        for end, out, peer_in in ends:
            try:
                end.do_handshake()
                done += 1
            except ssl.SSLWantReadError:
                pass
            peer_in.write(out.read())
        if done == 2:
            return ends[0][0]
    raise AssertionError("the handshake did not finish")


def client(pki: Pki, version: ssl.TLSVersion | None = None, ciphers: str | None = None) -> ssl.SSLContext:
    context = pki.client_context()
    if version is not None:
        context.minimum_version = context.maximum_version = version
    if ciphers is not None:
        context.set_ciphers(ciphers)
    return context


def load(pki: Pki, tmp_path, **config: object) -> WebConfig:
    (tmp_path / "web.yml").write_text(json.dumps({"tls_server_config": tls(pki), **config}))
    return load_web_config(tmp_path / "web.yml")


def test_tls_versions_are_the_toolkits_defaults_or_as_given(pki, tmp_path):
    default = load(pki, tmp_path).tls
    assert handshake(default, client(pki)).version() == "TLSv1.3"
    assert handshake(default, client(pki, ssl.TLSVersion.TLSv1_2)).version() == "TLSv1.2"
    with pytest.raises(ssl.SSLError):  # below the default minimum, TLS12
        handshake(default, client(pki, ssl.TLSVersion.TLSv1_1))
    only13 = load(pki, tmp_path, tls_server_config=tls(pki, min_version="TLS13")).tls
    with pytest.raises(ssl.SSLError):
        handshake(only13, client(pki, ssl.TLSVersion.TLSv1_2))
    only12 = load(pki, tmp_path, tls_server_config=tls(pki, max_version="TLS12")).tls
    assert handshake(only12, client(pki)).version() == "TLSv1.2"


def test_cipher_suites_named_as_in_go_restrict_tls_12(pki, tmp_path):
    chosen = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"  # the test certificates' keys are ECDSA
    web = load(pki, tmp_path, tls_server_config=tls(pki, cipher_suites=[chosen, "TLS_AES_128_GCM_SHA256"]))
    offered = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"
    assert handshake(web.tls, client(pki, ssl.TLSVersion.TLSv1_2, offered)).cipher()[0] == CIPHER_SUITES[chosen]
    with pytest.raises(ssl.SSLError):
        handshake(web.tls, client(pki, ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-GCM-SHA256"))
    assert handshake(web.tls, client(pki)).version() == "TLSv1.3"  # TLS 1.3's suites are not chosen here
    tls13 = load(pki, tmp_path, tls_server_config=tls(pki, cipher_suites=["TLS_AES_128_GCM_SHA256"])).tls
    with pytest.raises(ssl.SSLError):  # no TLS 1.2 suite left: TLS 1.3 only, as in Go
        handshake(tls13, client(pki, ssl.TLSVersion.TLSv1_2))


@pytest.mark.parametrize("interval, seconds", [("1m30s", 90.0), ("250ms", 0.25), ("1.5h", 5400.0), (1500, 1.5e-6),
                                               ("0", None), (0, None)])
def test_rate_limit_intervals_are_go_durations(pki, tmp_path, interval, seconds):
    limit = load(pki, tmp_path, rate_limit={"interval": interval, "burst": 3}).rate_limit
    assert (limit.interval_s if limit else None) == (pytest.approx(seconds) if seconds else None)


def test_requests_past_the_rate_limit_get_429_before_authentication(pki, tmp_path):
    web = load(pki, tmp_path, rate_limit={"interval": "10s", "burst": 2}, basic_auth_users={"u": bcrypt_hash("p")})
    now = [0.0]
    app = secured(lambda environ, start: start("200 OK", []) or [b"metrics"], LiveWebConfig(web, lambda: now[0]))

    def status_at(t: float) -> str:
        now[0] = t
        statuses: list[str] = []
        app({"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"u:p").decode()},
            lambda status, headers, exc_info=None: statuses.append(status))
        return statuses[0]

    assert [status_at(0), status_at(0), status_at(0)] == ["200 OK", "200 OK", "429 Too Many Requests"]
    assert [status_at(10), status_at(15), status_at(40), status_at(40), status_at(40)] == [
        "200 OK", "429 Too Many Requests", "200 OK", "200 OK", "429 Too Many Requests"]  # the bucket holds 2
