"""The MCP clients the server knows, by the name each gives in `initialize`, and what each does by
itself: which of the project's agent files it puts into the model's context at a session's start,
and whether its model reads a tool result's structured content instead of its text. The server
names the files a client loaded instead of sending them again. `docs/conventions.md` has the
table, with the source of every fact (the client's documentation, or the real-client harness).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from corpus.catalog import Corpus
from corpus.files import CorpusFile
from corpus.markdown import fences_blanked

Loaded = dict[str, str]
"""Display path of a file the client loaded -> how it loaded it (`imported by CLAUDE.md`)."""


@dataclass(frozen=True, slots=True)
class Client:
    key: str
    """The `--client` value: `claude-code`."""
    name: str
    """How answers name it: `Claude Code`."""
    ids: tuple[str, ...]
    """The `clientInfo.name` values it introduces itself with, case-folded."""
    reads_structured: bool
    """Given a tool result with text and structured content, its model reads the structured
    content (as JSON): the server then sends it the text alone, unless asked to explain."""
    loads: Callable[[Corpus], Loaded]
    """The corpus files it puts into the model's context itself at a session's start."""


def _top(f: CorpusFile, *names: str) -> bool:
    """A file of the project's conventional files, at the project's top, named one of `names`."""
    return bool(f.root.include) and f.rel.casefold() in {n.casefold() for n in names}


def _always(f: CorpusFile, convention: str) -> bool:
    """A rule of `convention` that applies to every task (no path condition of its own)."""
    return f.meta.convention == convention and f.pinned and not f.meta.globs


_IMPORT = re.compile(r"(?<![\w`@])@((?:\.{0,2}/)?[\w.-][\w./-]*)")
"""An `@path` import as Claude Code and Gemini CLI read them in CLAUDE.md and GEMINI.md."""
MAX_IMPORT_HOPS = 5
"""Claude Code follows imports this deep (its memory documentation)."""


def imports(f: CorpusFile, corpus: Corpus) -> list[CorpusFile]:
    """The corpus files `f` imports with `@path` (relative to `f`'s folder), outside code
    fences and code spans, in the order written."""
    by_place = {(g.root.path / g.rel).as_posix(): g for g in corpus.files.agents() if g.held}
    found: list[CorpusFile] = []
    for line in fences_blanked(f.text.split("\n")):
        for match in _IMPORT.finditer(re.sub(r"`[^`]*`", "", line)):
            target = PurePosixPath(f.rel).parent / match.group(1).rstrip(".")
            place = _normal(f.root.path.as_posix() + "/" + target.as_posix())
            if place in by_place and by_place[place] not in found:
                found.append(by_place[place])
    return found


def _normal(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return ("/" if path.startswith("/") else "") + "/".join(parts)


def _with_imports(corpus: Corpus, first: Iterable[CorpusFile], loaded: Loaded) -> Loaded:
    """`loaded`, and every file the files of `first` import, hop by hop."""
    todo = [(f, 0) for f in first]
    while todo:
        f, hops = todo.pop(0)
        if hops >= MAX_IMPORT_HOPS:
            continue
        for g in imports(f, corpus):
            if g.path not in loaded:
                loaded[g.path] = f"imported by {f.rel}"
                todo.append((g, hops + 1))
    return loaded


def _claude_code(corpus: Corpus) -> Loaded:
    """CLAUDE.md at the project's top (or in .claude/) with its `@` imports, else AGENTS.md at
    the top; and the `.claude/rules` files without `paths:`."""
    files = list(corpus.files.agents())
    memory = [f for f in files if _top(f, "CLAUDE.md", ".claude/CLAUDE.md")]
    loaded = {f.path: "project instructions" for f in memory}
    if not memory:  # Claude Code reads AGENTS.md only where there is no CLAUDE.md
        memory = [f for f in files if _top(f, "AGENTS.md")]
        loaded = {f.path: "project instructions, as there is no CLAUDE.md" for f in memory}
    loaded.update({f.path: "a rule without paths" for f in files if _always(f, "claude")})
    return _with_imports(corpus, memory, loaded)


CODEX_PROJECT_DOC_BYTES = 32 * 1024
"""Codex reads at most this much of the AGENTS.md chain (`project_doc_max_bytes`), root first."""


def _codex(corpus: Corpus) -> Loaded:
    """AGENTS.md at the project's top, when Codex reads it whole (within its 32 KiB)."""
    return {
        f.path: "project instructions"
        for f in corpus.files.agents()
        if _top(f, "AGENTS.md") and len(f.text.encode("utf-8")) <= CODEX_PROJECT_DOC_BYTES
    }


def _gemini_cli(corpus: Corpus) -> Loaded:
    """GEMINI.md at the project's top, with its `@` imports (AGENTS.md only if its settings name
    it, which the server cannot see)."""
    memory = [f for f in corpus.files.agents() if _top(f, "GEMINI.md")]
    return _with_imports(corpus, memory, {f.path: "context file" for f in memory})


def _cursor(corpus: Corpus) -> Loaded:
    """AGENTS.md at the project's top and the Cursor rules with `alwaysApply: true`."""
    files = list(corpus.files.agents())
    loaded = {f.path: "project instructions" for f in files if _top(f, "AGENTS.md")}
    loaded.update({f.path: "an alwaysApply rule" for f in files if _always(f, "cursor")})
    return loaded


def _vscode(corpus: Corpus) -> Loaded:
    """AGENTS.md at the project's top and `.github/copilot-instructions.md`."""
    return {
        f.path: "workspace instructions"
        for f in corpus.files.agents()
        if _top(f, "AGENTS.md", ".github/copilot-instructions.md")
    }


def _cline(corpus: Corpus) -> Loaded:
    """Its `.clinerules` rules without `paths:`."""
    return {f.path: "a rule without paths" for f in corpus.files.agents() if _always(f, "cline")}


def _nothing(corpus: Corpus) -> Loaded:
    return {}


CLIENTS: tuple[Client, ...] = (
    Client("claude-code", "Claude Code", ("claude-code",), True, _claude_code),
    Client("codex", "Codex", ("codex-mcp-client", "codex"), True, _codex),
    Client("gemini-cli", "Gemini CLI", ("gemini-cli-mcp-client", "gemini-cli"), False, _gemini_cli),
    Client("cursor", "Cursor", ("cursor-vscode", "cursor"), False, _cursor),
    Client("vscode", "VS Code", ("visual studio code", "visual studio code - insiders"), False, _vscode),
    Client("claude-desktop", "Claude Desktop", ("claude-ai",), False, _nothing),
    Client("cline", "Cline", (), False, _cline),
)
"""Every client the server tells apart; any other is unknown and gets everything."""

BY_KEY: Mapping[str, Client] = {c.key: c for c in CLIENTS}
UNKNOWN = "other"
"""The `--client` value for a client treated as unknown, whatever it says it is."""


def identify(client_name: str | None) -> Client | None:
    """The known client that introduces itself as `client_name` (`clientInfo.name`), or None."""
    folded = (client_name or "").strip().casefold()
    return next((c for c in CLIENTS if folded in c.ids), None)


HOOK_CLIENTS = frozenset({"claude-code", "codex", "gemini-cli", "cursor", "cline"})
"""The clients `agents-context-hook` speaks to (`cli/hook.py`)."""
BY_HOOK = "added by the agents-context hook at the session's start"


def loaded_by(client: Client | None, corpus: Corpus, hooked: bool = False) -> Loaded:
    """The files `client` puts into the model's context itself, by display path (none for an
    unknown client); with `hooked` (the client runs our hook, `--hooked`), also every pinned file,
    which the hook adds at each session's start and after each compaction."""
    if client is None:
        return {}
    loaded = client.loads(corpus)
    if hooked and client.key in HOOK_CLIENTS:
        loaded.update({f.path: BY_HOOK for f in corpus.files.agents() if f.pinned and f.path not in loaded})
    return loaded
