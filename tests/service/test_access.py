"""Access by tokens: a token for owner A cannot read, list, search, forget or even learn of owner B; a
forbidden owner answers exactly as an unknown one does; no token or an unknown one is 401."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.errors import MemstreamError
from memstream.service import LOCAL, Principal, Tokens, Unauthorized
from memstream.service.tokens import MIN_TOKEN_CHARS
from memstream.stream import normalise_owner
from tests.service.conftest import ADMIN, ANA, BEN, bearer, entries


@pytest.fixture
def two_owners(serve, tmp_path: Path):
    c = serve(tmp_path / "s.db")
    for token, owner in ((ANA, "ana"), (BEN, "ben")):
        r = c.post("/v1/add", json={"owner": owner, "entries": entries(f"{owner}'s secret")}, headers=bearer(token))
        assert r.status_code == 200
    return c


#: Every read, and forget, of ``owner`` (each a request the TestClient sends).
def reads(owner: str) -> dict[str, tuple[str, str, dict]]:
    return {
        "get": ("GET", "/v1/records/1", {"params": {"owner": owner}}),
        "list": ("GET", "/v1/records", {"params": {"owner": owner}}),
        "context": ("POST", "/v1/context", {"json": {"owner": owner, "query": "secret"}}),
        "search": ("POST", "/v1/search", {"json": {"owner": owner, "query": "secret"}}),
        "history": ("GET", "/v1/history", {"params": {"owner": owner}}),
        "delete": ("DELETE", "/v1/records/1", {"params": {"owner": owner}}),
        "update": ("PATCH", "/v1/records/1", {"json": {"owner": owner, "text": "x"}}),
        "forget": ("POST", "/v1/forget", {"json": {"owner": owner}}),
    }


@pytest.mark.parametrize("call", list(reads("x")))
def test_a_token_for_ana_cannot_touch_ben_and_learns_nothing_of_him(two_owners, call: str) -> None:
    method, path, kwargs = reads("ben")[call]
    forbidden = two_owners.request(method, path, headers=bearer(ANA), **kwargs)
    method, path, kwargs = reads("nobody")[call]
    unknown = two_owners.request(method, path, headers=bearer(ANA), **kwargs)
    assert forbidden.status_code == unknown.status_code == 404
    assert forbidden.json()["detail"] == unknown.json()["detail"].replace("nobody", "ben")
    assert "secret" not in forbidden.text
    # and ben's memory is untouched
    assert two_owners.get("/v1/records", params={"owner": "ben"}, headers=bearer(BEN)).json()["total"] == 1


def test_a_token_lists_only_its_owners(two_owners) -> None:
    assert two_owners.get("/v1/owners", headers=bearer(ANA)).json() == {"owners": ["ana"]}
    assert two_owners.get("/v1/owners", headers=bearer(BEN)).json() == {"owners": ["ben"]}
    assert two_owners.get("/v1/owners", headers=bearer(ADMIN)).json() == {"owners": ["ana", "ben"]}


def test_a_token_cannot_write_for_another_owner(two_owners) -> None:
    r = two_owners.post("/v1/add", json={"owner": "ben", "entries": entries("planted")}, headers=bearer(ANA))
    assert r.status_code == 403
    assert two_owners.get("/v1/records", params={"owner": "ben"}, headers=bearer(BEN)).json()["total"] == 1


def test_an_owner_named_in_another_form_is_the_same_owner(two_owners) -> None:
    """Bén Two (NFC) in the file; the NFD spelling and stray spaces are the same owner, not a way around."""
    nfd = " Be\u0301n Two "
    r = two_owners.post("/v1/add", json={"owner": nfd, "entries": entries("hi")}, headers=bearer(BEN))
    assert r.status_code == 200
    assert two_owners.post("/v1/add", json={"owner": nfd, "entries": entries("hi")}, headers=bearer(ANA)).status_code == 403


@pytest.mark.parametrize("headers", [{}, bearer("not-a-known-token-at-all"), {"Authorization": f"Basic {ANA}"},
                                     bearer(ANA + "x"), bearer(ANA[:-1])])
def test_no_token_or_an_unknown_one_is_401_everywhere(two_owners, headers: dict) -> None:
    for method, path, kwargs in reads("ana").values():
        assert two_owners.request(method, path, headers=headers, **kwargs).status_code == 401
    assert two_owners.get("/v1/owners", headers=headers).status_code == 401
    r = two_owners.post("/v1/add", json={"owner": "ana", "entries": entries("x")}, headers=headers)
    assert r.status_code == 401 and ANA not in r.text


def test_the_admin_token_reads_and_forgets_any_owner(two_owners) -> None:
    assert two_owners.get("/v1/records", params={"owner": "ben"}, headers=bearer(ADMIN)).json()["total"] == 1
    assert two_owners.post("/v1/forget", json={"owner": "ben"}, headers=bearer(ADMIN)).status_code == 200
    assert two_owners.get("/v1/records", params={"owner": "ben"}, headers=bearer(BEN)).status_code == 404


def test_a_token_is_never_in_a_log(two_owners, caplog) -> None:
    with caplog.at_level("DEBUG"):
        two_owners.get("/v1/records", params={"owner": "ana"}, headers=bearer(ANA))
        two_owners.get("/v1/records", params={"owner": "ana"}, headers=bearer("wrong-token-0123456789"))
    assert ANA not in caplog.text and "wrong-token" not in caplog.text


@pytest.mark.parametrize(("text", "says"), [
    ("short ana\n", f"at least {MIN_TOKEN_CHARS}"),
    (f"{ANA}\n", "then its owners"),
    (f"{ANA} ana\n{ANA} ben\n", "already given"),
    (f"{ANA} a\u0000b\n", "control"),
    ("# only a comment\n", "no tokens"),
    (f"{ANA} ,\n", "name the owners"),
])
def test_a_bad_tokens_file_is_one_line_naming_the_line(text: str, says: str) -> None:
    with pytest.raises(MemstreamError, match=says) as raised:
        Tokens.parse(text, "tokens.txt")
    assert "\n" not in str(raised.value) and ANA not in str(raised.value)


owner_names = st.text(st.characters(categories=("L", "N")), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(grants=st.lists(st.tuples(st.text(st.characters(categories=("L", "N")), min_size=MIN_TOKEN_CHARS,
                                         max_size=24), st.sets(owner_names, min_size=1, max_size=3) | st.none()),
                       min_size=1, max_size=5, unique_by=lambda g: g[0]),
       asked=st.text(max_size=30), owner=owner_names)
def test_a_token_is_the_principal_of_its_own_line_and_no_other(grants, asked: str, owner: str) -> None:
    text = "".join(f"{t} {'*' if o is None else ','.join(sorted(o))}\n" for t, o in grants)
    tokens = Tokens.parse(text)
    for n, (token, owners) in enumerate(grants, 1):
        p = tokens.principal(token)
        assert p.name == f"token of line {n}" and token not in p.name
        named = normalise_owner(owner)  # as the service asks (an owner is its NFC name)
        assert p.may(named) == (owners is None or named in {normalise_owner(o) for o in owners})
    if asked not in {t for t, _ in grants}:
        with pytest.raises(Unauthorized):
            tokens.principal(asked)


def test_the_local_principal_may_use_every_owner() -> None:
    assert LOCAL.may("anyone") and not Principal("x", frozenset({"a"})).may("b")
