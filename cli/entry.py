"""`agents-context`, the command: the small commands start without the server's imports (the MCP
SDK, pydantic, numpy, anyio, watchfiles: most of a second), everything else goes to `server.main`.

`hook` runs `agents-context-hook` (before every file an agent touches) and `setup` writes a
client's configuration: neither opens an index. This is the one module below the server that
imports it (pyproject.toml's import contracts say so), and only when it is asked to serve or to
run a command that needs the index.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        from hook.main import main as hook

        raise SystemExit(hook(args[1:]))
    if args[:1] == ["setup"]:
        from cli.setup import main as setup

        raise SystemExit(setup(args[1:]))
    from server import main as serve  # every other command, and serving

    serve(args)
