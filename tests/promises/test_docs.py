"""The README is the single description of the contracts: everything users can call is in it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from cli.flags import build_parser
from tests.helpers import REPO, make_server

README = (REPO / "README.md").read_text(encoding="utf-8")


def parsers() -> list[argparse.ArgumentParser]:
    top = build_parser()
    subs = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return [top, *(p for sub in subs for p in sub.choices.values())]


def flags() -> list[str]:
    return sorted({o for p in parsers() for a in p._actions for o in a.option_strings if o.startswith("--")})


def subcommands() -> list[str]:
    top = build_parser()
    return sorted(name for a in top._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices)


@pytest.mark.parametrize("flag", flags())
def test_every_flag_is_documented(flag: str) -> None:
    assert re.search(rf"(?<![\w-]){re.escape(flag)}\b", README), f"{flag} is missing from the README"


def test_every_flag_has_help() -> None:
    for parser in parsers():
        for action in parser._actions:
            assert action.help, f"{parser.prog} {action.option_strings or action.dest} has no help text"


@pytest.mark.anyio
async def test_every_tool_resource_and_prompt_is_documented(tmp_path: Path) -> None:
    (tmp_path / ".AGENTS").mkdir()
    server = make_server(tmp_path / ".AGENTS")
    names = [t.name for t in await server.list_tools()] + [p.name for p in await server.list_prompts()]
    uris = [str(r.uri) for r in await server.list_resources()] + [
        t.uri_template for t in await server.list_resource_templates()
    ]
    for name in names:
        assert f"`{name}`" in README, f"{name} is missing from the README"
    for uri in uris:
        assert uri in README, f"{uri} is missing from the README"


@pytest.mark.parametrize("subcommand", subcommands())
def test_every_subcommand_is_documented(subcommand: str) -> None:
    assert f"agents-context {subcommand}" in README
