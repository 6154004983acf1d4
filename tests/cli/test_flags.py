"""The flags: --help explains every command, and ends quietly when its reader leaves early."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import SCRIPT, SERVER, cli


def test_help_explains_every_command() -> None:
    top = cli("--help")
    assert top.returncode == 0
    for name in ("serve", "search", "read", "outline", "status", "eval", "doctor", "cache"):
        assert name in top.stdout
        assert cli(name, "--help").returncode == 0
    for name in ("search", "read", "outline", "status", "eval", "doctor", "cache"):
        helped = cli(name, "--help").stdout
        assert "--json " in helped and "--json-schema" in helped, name


def test_help_read_by_a_reader_that_leaves_early_ends_quietly() -> None:
    """`agents-context --help | head -1`: the reader closes the pipe after one line; the command
    exits 0 with nothing on stderr (it printed a BrokenPipeError traceback)."""
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, SERVER]
    reader, writer = os.pipe()
    os.close(reader)  # a reader that left before the first byte: every write fails with EPIPE
    try:
        done = subprocess.run(
            [*command, "--help"], stdout=writer, stderr=subprocess.PIPE, text=True, timeout=300, check=False
        )
    finally:
        os.close(writer)
    assert done.returncode == 0 and done.stderr == "", done.stderr
