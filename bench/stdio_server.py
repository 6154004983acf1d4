"""The real server on stdio, plus one no-op tool: the protocol floor for bench/speed.py.

Same flags as `server.py`. It builds the server with `server.create_server`, registers a `noop`
tool that returns a constant string, and serves stdio exactly as `server.main` does, so a
`context_search` call and a `noop` call over the same connection differ only by the search.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from server import SWITCH_INTERVAL_S, announce, build_parser, configure_logging, create_server, open_index


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    configure_logging(args.log_level or "INFO", args.log_file)
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # as server.main does
    live, config = open_index(args)
    announce(live)
    server = create_server(live, config)

    @server.tool(name="noop", description="Returns a constant (benchmark floor).", structured_output=False)
    def noop() -> str:
        return "ok"

    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
