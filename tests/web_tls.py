"""Certificates, keys, bcrypt hashes and web config files for the secured exporter's tests: made with the
`openssl` commands docs/exporter.md gives (a CA, a server certificate for localhost/127.0.0.1 and a client
certificate it signs), so the tests run what the docs tell users to run."""

from __future__ import annotations

import json
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

import bcrypt

USER, PASSWORD = "prometheus", "correct horse battery staple"


@dataclass(frozen=True)
class Pki:
    dir: Path
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def client_context(self, with_certificate: bool = False) -> ssl.SSLContext:
        """A client trusting the test CA (and presenting the client certificate when asked)."""
        context = ssl.create_default_context(cafile=str(self.ca))
        if with_certificate:
            context.load_cert_chain(self.client_cert, self.client_key)
        return context


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


EC_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")


def issue(directory: Path, name: str, san: str, ca: Path) -> tuple[Path, Path]:
    """`name`.crt and `name`.key in `directory`: a certificate for `san` signed by the CA whose ca.crt and
    ca.key are in `ca`."""
    openssl("req", "-new", *EC_KEY, "-subj", f"/CN={name}", "-addext", f"subjectAltName={san}",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=directory)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", str(ca / "ca.crt"), "-CAkey", str(ca / "ca.key"),
            "-days", "30", "-copy_extensions", "copy", "-out", f"{name}.crt", cwd=directory)
    return directory / f"{name}.crt", directory / f"{name}.key"


def make_pki(directory: Path, ca: Pki | None = None) -> Pki:
    """A server certificate for localhost and 127.0.0.1 and a client certificate, signed by `ca`'s CA or
    by a new one."""
    directory.mkdir(parents=True, exist_ok=True)
    if ca is None:
        openssl("req", "-x509", *EC_KEY, "-days", "30", "-subj", "/CN=rebalance exporter CA",
                "-keyout", "ca.key", "-out", "ca.crt", cwd=directory)
    ca_dir = directory if ca is None else ca.dir
    server = issue(directory, "server", "DNS:localhost,IP:127.0.0.1", ca_dir)
    client = issue(directory, "client", "DNS:prometheus", ca_dir)
    return Pki(directory, ca_dir / "ca.crt", *server, *client)


def bcrypt_hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()  # the lowest cost: fast tests


def write_web_config(path: Path, pki: Pki, *, users: dict[str, str] | None = None, mutual: bool = False,
                     **extra_tls: object) -> Path:
    """A web config serving `pki`'s server certificate, `users` (user -> bcrypt hash) by basic auth and,
    when `mutual`, requiring client certificates signed by the CA. JSON is YAML."""
    tls: dict[str, object] = {"cert_file": str(pki.server_cert), "key_file": str(pki.server_key), **extra_tls}
    if mutual:
        tls.update(client_ca_file=str(pki.ca), client_auth_type="RequireAndVerifyClientCert")
    config: dict[str, object] = {"tls_server_config": tls}
    if users:
        config["basic_auth_users"] = users
    path.write_text(json.dumps(config, indent=1))
    return path
