"""`basic_auth_users` as the exporter checks them: bcrypt for known and unknown users alike (so timing does
not tell which users exist), Go's reading of the header and of long passwords."""

from __future__ import annotations

import base64

import bcrypt
import pytest

from streaming.exporter import web
from streaming.exporter.web import BasicAuth


def header(user: str, password: str | bytes) -> str:
    raw = password if isinstance(password, bytes) else password.encode()
    return "Basic " + base64.b64encode(user.encode() + b":" + raw).decode()


@pytest.fixture
def hashes() -> dict[str, bytes]:
    return {"alice": bcrypt.hashpw(b"wonderland", bcrypt.gensalt(4)),
            "bob": bcrypt.hashpw(b"builder", bcrypt.gensalt(4))}


@pytest.fixture
def checks(monkeypatch) -> list[bytes]:
    """The hashes bcrypt is asked to check against, in order."""
    seen: list[bytes] = []
    real = bcrypt.checkpw

    def spy(password: bytes, hashed: bytes) -> bool:
        seen.append(hashed)
        return real(password, hashed)

    monkeypatch.setattr(web.bcrypt, "checkpw", spy)
    return seen


def test_an_unknown_user_costs_the_same_bcrypt_check_as_a_known_one(hashes, checks):
    auth = BasicAuth(hashes)
    assert not auth.allows(header("mallory", "wonderland"))  # alice's password under another name
    assert not auth.allows(header("alice", "wrong"))
    assert checks == [hashes["alice"], hashes["alice"]]  # one full check each, against a configured hash


def test_matched_credentials_are_remembered_and_nothing_else(hashes, checks):
    auth = BasicAuth(hashes)
    assert [auth.allows(header("bob", "builder")) for _ in range(3)] == [True] * 3
    assert [auth.allows(header("bob", "wrong")) for _ in range(2)] == [False] * 2
    assert checks == [hashes["bob"]] * 3  # the match once; every wrong guess pays bcrypt again


@pytest.mark.parametrize("authorization", [
    None, "", "Basic", "Basic !!!", "Digest " + base64.b64encode(b"alice:wonderland").decode(),
    "Basic " + base64.b64encode(b"alice").decode()])
def test_a_header_that_is_not_basic_credentials_is_refused_without_bcrypt(hashes, checks, authorization):
    assert not BasicAuth(hashes).allows(authorization)
    assert checks == []


def test_the_scheme_is_case_insensitive_and_the_password_may_hold_colons():
    auth = BasicAuth({"carol": bcrypt.hashpw(b"a:b:c", bcrypt.gensalt(4))})
    assert auth.allows("bAsIc " + base64.b64encode(b"carol:a:b:c").decode())


def test_a_password_beyond_72_bytes_is_read_as_bcrypt_reads_it():
    """Go's bcrypt uses the first 72 bytes (Python's refuses longer ones): the same answer, no error."""
    password = b"p" * 72
    auth = BasicAuth({"dave": bcrypt.hashpw(password, bcrypt.gensalt(4))})
    assert auth.allows(header("dave", password + b"and more"))
    assert not auth.allows(header("dave", b"q" + password))
