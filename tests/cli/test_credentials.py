"""Credentials are found and masked, even when a cut halves one."""

from __future__ import annotations

from cli.credentials import redact
from tests.cli.support import SECRETS


def test_a_credential_cut_by_the_instructions_limit_is_still_masked() -> None:
    text = "x " * 5 + SECRETS["github"] + " after"
    assert redact(text, 20) == "x " * 5 + "ghp_… (40 characters, not shown)"
    assert redact(text, 5) == "x x x" and redact(text) == "x " * 5 + "ghp_… (40 characters, not shown) after"
