"""The command line's flags: the commands, and the flags they share. Every default comes from
`cli.settings.DEFAULTS` (or, for a command's own flags, the constant of the layer that owns it)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from importlib import metadata
from pathlib import Path

from cli import setup as client_setup
from cli.settings import DEFAULTS, Settings, configure_logging
from clients import claude_code
from clients.known import BY_KEY, UNKNOWN
from corpus.errors import CorpusError
from live.cache import default_dir
from retrieval.search.fusion import MAX_QUERIES
from retrieval.search.request import DEFAULT_DETAIL, DEFAULT_MAX_TOKENS, DETAILS, SECTIONS, WINDOWS


def version() -> str:
    try:
        return metadata.version("agents-context")
    except metadata.PackageNotFoundError:
        return "0+unknown"


_CUT, _SINCE, _BEFORE = claude_code.INSTRUCTIONS_CUT
CUT_BY = f"{claude_code.CLIENT.name} {_SINCE} cuts at {_CUT}, earlier versions at {_BEFORE}"
COMMANDS = ("serve", "search", "read", "outline", "status", "eval", "doctor", "cache", "setup")


def _corpus_flags() -> argparse.ArgumentParser:
    """The flags every command shares: which corpus, read how."""
    flags = argparse.ArgumentParser(add_help=False)
    group = flags.add_argument_group("corpus")
    group.add_argument(
        "--project",
        metavar="DIR",
        type=Path,
        help="the project to serve: its .AGENTS/ (or .agents/) folder and the agent files it already "
        "has (AGENTS.md, root and nested; CLAUDE.md; .cursor/rules; .github/copilot-instructions.md "
        "and .github/instructions). The default, without --root or --conventional: the current folder",
    )
    group.add_argument(
        "--root",
        metavar="[NAME=]DIR",
        action="append",
        help="serve this .AGENTS folder only (no other folder is mixed in); repeat it for a monorepo "
        "with one per package. NAME labels it (default: its folder name, or the nearest folder above "
        "that tells two apart). Default: $AGENTS_CONTEXT_ROOT, else the --project folder's",
    )
    group.add_argument(
        "--conventional",
        metavar="DIR",
        nargs="?",
        const=True,
        default=None,
        help="serve the agent files of this project folder (AGENTS.md, CLAUDE.md, Cursor and Copilot "
        "rules); alone, only those; with --root, beside them (bare: the first --root's parent). The "
        "root AGENTS.md is pinned",
    )
    group.add_argument(
        "--docs",
        metavar="DIR",
        action="append",
        nargs="?",
        const="",
        default=[],
        help="a documentation folder searched by search_docs only (repeatable); for 'search', "
        "--docs alone means search passages as search_docs does",
    )
    group.add_argument(
        "--pin",
        metavar="REL",
        action="append",
        help="pin this path of the .AGENTS folder instead of overview.md and "
        "conventions.md (repeatable; --pin '' pins nothing)",
    )
    group.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULTS.max_file_bytes,
        metavar="N",
        help="skip larger files (default: 1 MiB)",
    )
    group.add_argument(
        "--score-floor",
        type=float,
        default=DEFAULTS.score_floor,
        metavar="F",
        help=f"drop search hits scoring below F times the best hit's score, 0 to 1 (default: {DEFAULTS.score_floor})",
    )
    group.add_argument(
        "--feedback",
        action="store_true",
        help="expand each query with the words of its best hits (RM3 pseudo-relevance feedback): "
        "better on abstract-like collections (Cranfield nDCG@10 0.404 -> 0.434), worse on markdown "
        "documentation (section hit@3 0.80 -> 0.74), hence off by default",
    )
    group.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        help="where the persistent index lives (default: $AGENTS_CONTEXT_CACHE_DIR, else the user "
        f"cache folder, here {default_dir()}); never inside a corpus root",
    )
    group.add_argument(
        "--no-cache", action="store_true", help="index from the files every time; read and write no cache"
    )
    _cache_cap_flag(group)
    _log_flags(group, "default: INFO for serve, WARNING for the other commands")
    return flags


def _cache_cap_flag(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--cache-max-mb",
        type=_megabytes,
        default=DEFAULTS.cache_max_mb,
        metavar="N",
        help="cap the cache folder's entries at N MB (1 MB = 10^6 bytes): the least recently used "
        "entries are removed above it, as are entries unused for 30 days; 0: no cap "
        f"(default: {DEFAULTS.cache_max_mb})",
    )


def _megabytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of MB: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: must be 0 (no cap) or more")
    return value


def _log_flags(group: argparse._ActionsContainer, level_help: str) -> None:
    group.add_argument(
        "--log-level", default=None, choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], help=level_help
    )
    group.add_argument("--log-file", metavar="PATH", help="also write the log to this file")


def _budget_flags() -> argparse.ArgumentParser:
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument(
        "--pinned-budget",
        type=int,
        default=DEFAULTS.pinned_budget,
        metavar="BYTES",
        help=f"most bytes of pinned text pinned_context returns (default: {DEFAULTS.pinned_budget})",
    )
    flags.add_argument(
        "--instructions-budget",
        type=int,
        default=DEFAULTS.instructions_budget,
        metavar="CHARS",
        help=f"most characters of server instructions (default: {DEFAULTS.instructions_budget}; {CUT_BY})",
    )
    return flags


def _output_flags() -> argparse.ArgumentParser:
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument("--json", action="store_true", help="print the result as JSON (schema: --json-schema)")
    flags.add_argument("--json-schema", action="store_true", help="print the JSON Schema of --json and exit")
    return flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agents-context",
        description="An MCP server for a project's .AGENTS/ folder (pinned context, BM25 section "
        "search, resources, a live index), and a command line to see what agents see. Without a "
        "command, or with 'serve', it runs the server.",
        epilog="Run 'agents-context COMMAND --help' for a command's flags.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(
        dest="command",
        metavar="COMMAND",
        help="serve (default), search, read, outline, status, eval, doctor, cache or setup",
    )
    corpus, budgets, output = _corpus_flags(), _budget_flags(), _output_flags()
    serve = commands.add_parser("serve", parents=[corpus, budgets], help="run the MCP server (the default)")
    serve.add_argument(
        "--debounce-ms",
        type=int,
        default=DEFAULTS.debounce_ms,
        metavar="MS",
        help=f"wait this long for a burst of file changes to settle (default: {DEFAULTS.debounce_ms})",
    )
    serve.add_argument(
        "--deadline-ms",
        type=int,
        default=DEFAULTS.deadline_ms,
        metavar="MS",
        help="a search still running after this long returns its best results so far, marked partial=1 "
        f"(default: {DEFAULTS.deadline_ms})",
    )
    serve.add_argument(
        "--poll",
        action="store_true",
        help="watch by polling instead of OS events (network drives, containers); the server "
        "also falls back to polling by itself when OS events fail",
    )
    serve.add_argument(
        "--hooked",
        action="store_true",
        help="the client runs agents-context-hook (agents-context setup writes it), which adds the pinned "
        "files at each session's start: the instructions and pinned_context then name them",
    )
    serve.add_argument(
        "--client",
        choices=[*BY_KEY, UNKNOWN],
        default=None,
        help="answer as for this client, whatever name it gives (other: as for an unknown client, "
        "which gets every pinned file and structured results); default: as the client names itself",
    )
    serve.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default=DEFAULTS.transport,
        help="stdio (default; what desktop clients launch) or http (streamable HTTP, for clients "
        "that prefer it and for one server shared by several clients)",
    )
    serve.add_argument(
        "--host",
        default=DEFAULTS.host,
        help=f"with --transport http: the address to listen on (default: {DEFAULTS.host})",
    )
    serve.add_argument(
        "--port", type=int, default=DEFAULTS.port, help=f"with --transport http: the port (default: {DEFAULTS.port})"
    )

    search_cmd = commands.add_parser(
        "search", parents=[corpus, output], help="search as context_search does (or search_docs, with --docs)"
    )
    search_cmd.add_argument("query", nargs="?", help="what to search for")
    search_cmd.add_argument(
        "-k",
        type=int,
        default=None,
        help=f"most hits (default: {SECTIONS.default_k}; {WINDOWS.default_k} with --docs)",
    )
    search_cmd.add_argument("--detail", choices=DETAILS, default=DEFAULT_DETAIL, help="what each hit shows")
    search_cmd.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"budget for the answer (default: {DEFAULT_MAX_TOKENS})",
    )
    search_cmd.add_argument("--path-prefix", help="only files under this path")
    search_cmd.add_argument("--in", dest="in_root", metavar="LABEL", help="only this root, by label")
    search_cmd.add_argument("--offset", type=int, default=0, help="skip this many hits")
    search_cmd.add_argument(
        "--or",
        dest="variants",
        action="append",
        default=[],
        metavar="QUERY",
        help=f"another way to say the query (repeatable, {MAX_QUERIES - 1} at most): the lists are fused by rank",
    )

    read_cmd = commands.add_parser(
        "read", parents=[corpus, output], help="read a file, a section or lines, as read_context does"
    )
    read_cmd.add_argument(
        "path", metavar="PATH[#section]", help="a display path, URI or path in .AGENTS; #anchor or #L1-L9"
    )
    read_cmd.add_argument("--start-line", type=int, help="first line")
    read_cmd.add_argument("--end-line", type=int, help="last line")
    read_cmd.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"budget for the answer (default: {DEFAULT_MAX_TOKENS})",
    )

    commands.add_parser("outline", parents=[corpus, output], help="every .AGENTS file with its sections")
    commands.add_parser("status", parents=[corpus, output], help="what the index holds and what was skipped")
    eval_cmd = commands.add_parser(
        "eval", parents=[corpus, output], help="score context_search on questions with known answers"
    )
    eval_cmd.add_argument("questions", type=Path, metavar="QUESTIONS.jsonl", help="one JSON question a line")
    eval_cmd.add_argument("-k", type=int, default=3, help="a hit must be in the top k (default: 3)")
    cache_cmd = commands.add_parser(
        "cache", parents=[output], help="show, prune or clear the persistent index (the cache folder)"
    )
    cache_cmd.add_argument(
        "action",
        nargs="?",
        choices=["show", "prune", "clear"],
        default="show",
        help="show (default): each entry's root, size and last use; prune: remove entries unused for 30 "
        "days, then the least recently used above --cache-max-mb, as a server does at start-up; clear: "
        "remove every entry",
    )
    cache_cmd.add_argument("--cache-dir", metavar="DIR", type=Path, help="the cache folder (default: as for serve)")
    _cache_cap_flag(cache_cmd)
    _log_flags(cache_cmd, "default: WARNING")
    commands.add_parser(
        "doctor", parents=[corpus, budgets, output], help="lint the corpus; exit 1 on errors (use it in CI)"
    )
    client_setup.add_parser(commands)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The flags of `argv` (a command first). `search --docs "q"`: `--docs` takes an optional
    folder, so the query lands there; when it names no folder, it is the query."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "search" and args.query is None:
        if args.docs and args.docs[-1] and not Path(args.docs[-1]).is_dir():
            args.query = args.docs.pop()
            args.docs.append("")
        else:
            parser.error("search needs a query: agents-context search [--docs [DIR]] [flags] QUERY")
    if args.command == "search" and len(args.variants) >= MAX_QUERIES:
        parser.error(f"--or takes at most {MAX_QUERIES - 1} other ways to say the query, not {len(args.variants)}")
    return args


def show_help() -> int:
    """`agents-context --help`: the commands, then every flag of the default one (serve)."""
    parser = build_parser()
    serve = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["serve"]
    try:
        print(parser.format_help() + "\n" + serve.format_help())  # noqa: T201 - the help text
        sys.stdout.flush()
    except BrokenPipeError:  # `agents-context --help | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def serving(argv: list[str]) -> Settings:
    """`agents-context`'s arguments read: the settings to serve with, the default command; any
    other command (and `hook`, `--help`, `--version`) runs here and exits (`SystemExit`), as does
    a root that cannot be served (status 2, why on stderr)."""
    if argv[:1] == ["hook"]:  # as `agents-context-hook`, which starts faster (it loads no MCP SDK)
        from hook.main import main as hook

        raise SystemExit(hook(argv[1:]))
    if argv in (["-h"], ["--help"]):  # the commands, then every flag of the default one
        raise SystemExit(show_help())
    if not argv or (argv[0] not in COMMANDS and argv[0] != "--version"):
        argv = ["serve", *argv]
    args = parse(argv)
    if args.command != "serve":
        from cli import commands  # the terminal output (rich) loads only for these commands

        raise SystemExit(commands.run(args))
    try:
        return Settings.from_args(args)
    except CorpusError as exc:
        configure_logging(args.log_level or "INFO", args.log_file)
        logging.getLogger("agents_context").error("%s", exc)
        raise SystemExit(2) from None
