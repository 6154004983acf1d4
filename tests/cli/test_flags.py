"""The flags: --help explains every command."""

from __future__ import annotations

from tests.helpers import cli


def test_help_explains_every_command() -> None:
    top = cli("--help")
    assert top.returncode == 0
    for name in ("serve", "search", "read", "outline", "status", "eval", "doctor", "cache"):
        assert name in top.stdout
        assert cli(name, "--help").returncode == 0
    for name in ("search", "read", "outline", "status", "eval", "doctor", "cache"):
        helped = cli(name, "--help").stdout
        assert "--json " in helped and "--json-schema" in helped, name
