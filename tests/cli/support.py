"""Running a command's --json against its --json-schema, a terminal's rendering, and the credentials doctor must mask."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import jsonschema
from rich.console import Console

from cli import commands
from tests.helpers import cli


def as_json(command: str, *args: str) -> Any:
    done = cli(command, *args, "--json")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    schema = json.loads(cli(command, *args, "--json-schema").stdout)
    jsonschema.validate(data, schema)  # --json is exactly what --json-schema documents
    return data


def screen(output: commands.Output, width: int = 100) -> str:
    assert output.show is not None
    out = StringIO()
    output.show(Console(file=out, force_terminal=True, width=width))
    return out.getvalue()


SECRETS = {
    "aws": "AKIAQWERTYUIOPASDFGH",
    "github": "ghp_Zq8wX2cV4bN6mM1kL3jH5gF7dS9aP0oI2uY4",
    "generic": "s3cr3tV4lu3Zq8wX2cV4bN6m",
    "heading": "ghp_Hd8wX2cV4bN6mM1kL3jH5gF7dS9aP0oI2uY4",
}
