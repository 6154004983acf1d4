"""Names never served (secrets, whatever their case) and pinned files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from corpus.rules import SECRET_PATTERNS, PinSet, is_secret
from tests.corpus.support import corpus_of, reasons, served
from tests.helpers import REPO


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".ENV",
        ".env.local",
        "prod.env",
        "server.KEY",
        "cert.pem",
        "store.p12",
        "store.PFX",
        "site.crt",
        "site.cer",
        "site.der",
        "java.jks",
        "app.keystore",
        "id_rsa",
        "ID_RSA.pub",
        "id_dsa",
        "id_ecdsa_sk",
        "id_ed25519.pub",
        "vault.kdbx",
        ".netrc",
        ".NPMRC",
        ".pypirc",
        "credentials.json",
        "Credentials-prod.JSON",
    ],
)
def test_secrets_are_never_served_whatever_their_case(make_tree: Callable[..., Path], name: str) -> None:
    root = make_tree({name: "TOKEN=abc123\n", "ok.md": "ok\n"})
    corpus = corpus_of(root)
    assert served(corpus) == ["ok.md"]
    assert reasons(corpus) == {name: "looks like a secret (denylist)"}


@pytest.mark.parametrize(
    ("rel", "secret"),
    [
        (".docker/config.json", True),
        ("ops/.Docker/CONFIG.json", True),
        ("config.json", False),
        ("docker/config.json", False),
        (".docker/daemon.json", False),
        (".kube/config", True),
        ("infra/.kube/config", True),
        ("config", False),
        (".kube/config.md", False),
        (".aws/credentials", True),
        ("credentials", False),
        ("aws/credentials", False),
        ("secrets.md", False),
        ("docs/secrets.md", False),
        ("security.md", False),
        ("secrets-policy.yaml", False),
        ("kubeconfig.md", False),
        ("terraform.tfvars.example", False),
    ],
)
def test_path_patterns_match_the_last_parts_and_names_alone_stay_served(rel: str, secret: bool) -> None:
    assert is_secret(rel) is secret


def test_the_docs_list_exactly_the_patterns_the_code_denies() -> None:
    """docs/corpus.md, "How the corpus is read", prints the denylist; it cannot drift from the code."""
    page = (REPO / "docs" / "corpus.md").read_text(encoding="utf-8")
    bullet = re.search(r"^  - secrets, .*?(?=^- )", page, re.MULTILINE | re.DOTALL)
    assert bullet, "the secrets bullet of docs/corpus.md is missing"
    listed = re.search(r"\): `([^`]*)`", bullet.group(0), re.DOTALL)
    assert listed, "the secrets bullet of docs/corpus.md lists no patterns"
    assert tuple(listed.group(1).split()) == SECRET_PATTERNS


def test_default_pins_are_overview_and_conventions_at_the_top_only(make_tree: Callable[..., Path]) -> None:
    root = make_tree(
        {
            "Overview.md": "# O\n",
            "CONVENTIONS.MD": "# C\n",
            "security.md": "# S\n",
            "sub/overview.md": "# nested, not pinned\n",
        }
    )
    files = corpus_of(root).files
    pinned = sorted(f.rel for f in files.values() if f.pinned)
    assert pinned == ["CONVENTIONS.MD", "Overview.md"]
    assert files[".AGENTS/security.md"].searchable
    assert files[".AGENTS/sub/overview.md"].searchable


def test_pin_flag_replaces_the_set_and_empty_pins_nothing(make_tree: Callable[..., Path]) -> None:
    root = make_tree({"overview.md": "o\n", "rules/deploy.md": "d\n"})
    chosen = corpus_of(root, PinSet(["rules/deploy.md"])).files
    assert [f.rel for f in chosen.values() if f.pinned] == ["rules/deploy.md"]
    nothing = corpus_of(root, PinSet([""])).files
    assert not any(f.pinned for f in nothing.values())
