"""Every entry of the secrets denylist, one real file each: a credential file holding a fake
credential, in a `.AGENTS` root and in a `--docs` root, served through a real MCP client. It is
never indexed, listed, searchable, pinned, linked or readable (`read_context`, `resources/read`),
and `context_status` lists it as skipped, a secret. Documents about secrets stay served."""

from __future__ import annotations

import os
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from corpus.rules import SECRET_PATTERNS, is_secret
from corpus.scan import SECRET
from tests.helpers import make_server, split_status, text_of
from tests.tally import tried

pytestmark = pytest.mark.anyio

TOKEN = "zqxvulpecula"
"""The fake credential: one searchable word, in no served file."""

EXAMPLES: dict[str, tuple[str, str]] = {
    ".env": (".env", f"API_TOKEN={TOKEN}\n"),
    ".env.*": (".env.production", f"DATABASE_URL=postgres://app:{TOKEN}@db/app\n"),
    "*.env": ("prod.env", f"STRIPE_SECRET_KEY=sk_live_{TOKEN}\n"),
    ".envrc": (".envrc", f"export AWS_SECRET_ACCESS_KEY={TOKEN}\n"),
    "*.key": ("server.key", f"-----BEGIN PRIVATE KEY-----\n{TOKEN}\n-----END PRIVATE KEY-----\n"),
    "*.pem": ("cert.pem", f"-----BEGIN RSA PRIVATE KEY-----\n{TOKEN}\n-----END RSA PRIVATE KEY-----\n"),
    "*.p12": ("store.p12", f"bag attributes {TOKEN}\n"),
    "*.pfx": ("store.pfx", f"bag attributes {TOKEN}\n"),
    "*.crt": ("site.crt", f"-----BEGIN CERTIFICATE-----\n{TOKEN}\n-----END CERTIFICATE-----\n"),
    "*.cer": ("site.cer", f"-----BEGIN CERTIFICATE-----\n{TOKEN}\n-----END CERTIFICATE-----\n"),
    "*.der": ("site.der", f"certificate {TOKEN}\n"),
    "*.jks": ("java.jks", f"keystore {TOKEN}\n"),
    "*.keystore": ("release.keystore", f"keystore {TOKEN}\n"),
    "id_rsa*": ("id_rsa", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{TOKEN}\n-----END OPENSSH PRIVATE KEY-----\n"),
    "id_dsa*": ("id_dsa", f"-----BEGIN DSA PRIVATE KEY-----\n{TOKEN}\n-----END DSA PRIVATE KEY-----\n"),
    "id_ecdsa*": ("id_ecdsa", f"-----BEGIN EC PRIVATE KEY-----\n{TOKEN}\n-----END EC PRIVATE KEY-----\n"),
    "id_ed25519*": ("id_ed25519", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{TOKEN}\n-----END OPENSSH PRIVATE KEY-----\n"),
    "*.kdbx": ("vault.kdbx", f"keepass {TOKEN}\n"),
    ".netrc": (".netrc", f"machine api.example.com login bot password {TOKEN}\n"),
    "_netrc": ("_netrc", f"machine api.example.com login bot password {TOKEN}\n"),
    ".git-credentials": (".git-credentials", f"https://bot:{TOKEN}@github.com\n"),
    ".npmrc": (".npmrc", f"//registry.npmjs.org/:_authToken={TOKEN}\n"),
    ".yarnrc.yml": (".yarnrc.yml", f'npmRegistryServer: "https://npm.example.com"\nnpmAuthToken: "{TOKEN}"\n'),
    ".pypirc": (".pypirc", f"[pypi]\nusername = __token__\npassword = pypi-{TOKEN}\n"),
    ".pgpass": (".pgpass", f"db.example.com:5432:app:app:{TOKEN}\n"),
    ".my.cnf": (".my.cnf", f"[client]\nuser = app\npassword = {TOKEN}\n"),
    ".htpasswd": (".htpasswd", f"admin:$apr1${TOKEN}\n"),
    ".s3cfg": (".s3cfg", f"[default]\naccess_key = AKIAEXAMPLE\nsecret_key = {TOKEN}\n"),
    ".boto": (".boto", f"[Credentials]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = {TOKEN}\n"),
    ".vault-token": (".vault-token", f"hvs.{TOKEN}\n"),
    ".dockercfg": (".dockercfg", f'{{"https://index.docker.io/v1/": {{"auth": "{TOKEN}"}}}}\n'),
    ".docker/config.json": (".docker/config.json", f'{{"auths": {{"ghcr.io": {{"auth": "{TOKEN}"}}}}}}\n'),
    ".aws/credentials": (".aws/credentials", f"[default]\naws_secret_access_key = {TOKEN}\n"),
    ".kube/config": (".kube/config", f"apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: {TOKEN}\n"),
    "kubeconfig": ("kubeconfig", f"apiVersion: v1\nusers:\n- name: ci\n  user:\n    token: {TOKEN}\n"),
    "*.kubeconfig": ("staging.kubeconfig", f"apiVersion: v1\nusers:\n- name: ci\n  user:\n    token: {TOKEN}\n"),
    "credentials*.json": ("credentials.json", f'{{"installed": {{"client_secret": "{TOKEN}"}}}}\n'),
    "application_default_credentials.json": (
        "application_default_credentials.json",
        f'{{"type": "authorized_user", "refresh_token": "{TOKEN}"}}\n',
    ),
    "service-account*.json": (
        "service-account-prod.json",
        f'{{"type": "service_account", "private_key": "{TOKEN}"}}\n',
    ),
    "service_account*.json": ("service_account.json", f'{{"type": "service_account", "private_key": "{TOKEN}"}}\n'),
    "secrets.json": ("secrets.json", f'{{"api_key": "{TOKEN}"}}\n'),
    "secrets.yaml": ("secrets.yaml", f"api_key: {TOKEN}\n"),
    "secrets.yml": ("secrets.yml", f"production:\n  secret_key_base: {TOKEN}\n"),
    "secrets.toml": ("secrets.toml", f'[connections.db]\npassword = "{TOKEN}"\n'),
    "*.tfvars": ("terraform.tfvars", f'db_password = "{TOKEN}"\n'),
    "*.tfvars.json": ("prod.tfvars.json", f'{{"db_password": "{TOKEN}"}}\n'),
    "*.tfstate": (
        "terraform.tfstate",
        f'{{"resources": [{{"instances": [{{"attributes": {{"password": "{TOKEN}"}}}}]}}]}}\n',
    ),
    "*.tfstate.backup": ("terraform.tfstate.backup", f'{{"outputs": {{"db_password": {{"value": "{TOKEN}"}}}}}}\n'),
}
"""One credential file for each pattern of the denylist, as developers keep them."""


def matches(pattern: str, rel: str) -> bool:
    depth = pattern.count("/") + 1
    return fnmatchcase("/".join(rel.casefold().split("/")[-depth:]), pattern)


def test_every_pattern_of_the_denylist_has_its_credential_file() -> None:
    assert set(EXAMPLES) == set(SECRET_PATTERNS)
    for pattern, (rel, content) in EXAMPLES.items():
        assert matches(pattern, rel), (pattern, rel)
        assert TOKEN in content


@pytest.mark.parametrize("pattern", SECRET_PATTERNS)
async def test_the_denylisted_file_is_never_indexed_listed_searched_pinned_linked_or_read(
    make_tree: Callable[..., Path], pattern: str
) -> None:
    rel, secret = EXAMPLES[pattern]
    served = {
        "rules.md": f"# Rules\n\nDeploy rules. The credentials live in [the file]({rel}), never here.\n",
        "secrets.md": "# Secrets\n\nHow this team keeps secrets: in the vault, rotated monthly.\n",
    }
    agents = make_tree({**served, rel: secret})
    docs = make_tree({"guide.md": "# Guide\n\nThe deploy guide.\n", rel: secret}, name="docs")
    server = make_server(agents, [docs], pins=[rel, "rules.md"])
    assert {".AGENTS/rules.md", ".AGENTS/secrets.md", "docs/guide.md"} <= set(server.app.live.corpus.files)
    assert f".AGENTS/{rel}" not in server.app.live.corpus.files  # never indexed
    assert f"docs/{rel}" not in server.app.live.corpus.files
    async with Client(server) as client:
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        assert f"agents://{rel}" not in listed and "agents://secrets.md" in listed
        answers: list[str] = []
        for tool in ("context_search", "search_docs"):
            for query in (TOKEN, rel, f"{rel} credentials"):
                result = await client.call_tool(tool, {"query": query, "k": 10})
                assert not result.is_error, text_of(result)
                hits = (result.structured_content or {}).get("hits", [])
                if query == TOKEN:  # the miss line repeats the query: no hit is what matters
                    assert split_status(text_of(result))[1]["hits"] == "0" and hits == []
                else:
                    answers.append(text_of(result))
                assert not [h for h in hits if h["path"].endswith(f"/{rel}")]
                assert not [link for h in hits for link in h.get("links", []) if link["uri"].endswith(rel)]
        answers.append(text_of(await client.call_tool("pinned_context", {})))
        answers.append(text_of(await client.call_tool("context_for_path", {"path": rel})))
        outline = await client.read_resource("agents-context://outline")
        answers.append(getattr(outline.contents[0], "text", ""))
        for name in (rel, f".AGENTS/{rel}", f"agents://{rel}", f"docs/{rel}", f"agents-docs://docs/{rel}"):
            read = await client.call_tool("read_context", {"path": name})
            assert read.is_error and SECRET in text_of(read), (name, text_of(read))
        for uri in (f"agents://{rel}", f"agents-docs://docs/{rel}", f"agents://{rel}#L1"):
            with pytest.raises(MCPError, match="looks like a secret"):
                await client.read_resource(uri)
        status = await client.call_tool("context_status", {})
        report: dict[str, Any] = status.structured_content or {}
        assert read_served(await client.read_resource("agents://secrets.md")).startswith("# Secrets")
    assert not [a for a in answers if TOKEN in a]
    assert not [a for a in answers if f"agents://{rel}" in a or f"agents-docs://docs/{rel}" in a]
    skipped = {s["path"]: s["reason"] for root in report["roots"] for s in root["skipped"]}
    assert skipped[f".AGENTS/{rel}"] == SECRET
    assert skipped[f"docs/{rel}"] == SECRET
    assert f"  skipped .AGENTS/{rel}: {SECRET}" in split_status(text_of(status))[0]
    tried("secret file (list, search, pin, links, read, status)")


def read_served(result: Any) -> str:
    return str(getattr(result.contents[0], "text", ""))


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
async def test_a_link_to_a_credential_file_is_refused_as_its_target(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({".docker/config.json": EXAMPLES[".docker/config.json"][1], "rules.md": "# Rules\n"})
    (agents / "registry.json").symlink_to(agents / ".docker" / "config.json")
    (agents / "dock").symlink_to(agents / ".docker", target_is_directory=True)
    server = make_server(agents)
    async with Client(server) as client:
        report: dict[str, Any] = (await client.call_tool("context_status", {})).structured_content or {}
        for name in ("registry.json", "dock/config.json"):
            read = await client.call_tool("read_context", {"path": name})
            assert read.is_error and TOKEN not in text_of(read)
    skipped = {s["path"]: s["reason"] for root in report["roots"] for s in root["skipped"]}
    assert skipped[".AGENTS/registry.json"] == "symlink to a denylisted file .docker/config.json"
    assert skipped[".AGENTS/.docker/config.json"] == SECRET
    assert ".AGENTS/dock/config.json" not in server.app.live.corpus.files


DOCUMENTS = [
    "security.md",
    "secrets.md",
    "SECRETS.md",
    "docs/secrets-policy.md",
    "credentials.md",
    "kubeconfig.md",
    "config.json",
    "docker/config.json",
    ".docker/daemon.json",
    "aws/credentials.md",
    "config",
    "terraform.tfvars.example",
    "env.md",
]
"""Files about secrets, or named like a credential file's folder, that hold none: all served."""


async def test_documents_about_secrets_stay_served(make_tree: Callable[..., Path]) -> None:
    agents = make_tree({rel: f"# About {rel}\n\nThe secrets policy okapi.\n" for rel in DOCUMENTS})
    assert not [rel for rel in DOCUMENTS if is_secret(rel)]
    server = make_server(agents)
    async with Client(server) as client:
        for rel in DOCUMENTS:
            read = await client.call_tool("read_context", {"path": rel})
            assert not read.is_error, text_of(read)
            assert "okapi" in text_of(read)
        found = text_of(await client.call_tool("search_docs", {"query": "secrets policy okapi", "k": 10}))
        report: dict[str, Any] = (await client.call_tool("context_status", {})).structured_content or {}
    assert split_status(found)[1]["hits"] == "10"
    assert report["roots"][0]["files"] == len(DOCUMENTS)
    assert report["roots"][0]["skipped"] == []
