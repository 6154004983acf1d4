"""How precise `context_for_path` is: the sections it returns for a source file, against the
sections that should apply to it.

    uv run python -m bench.applies                            # the built-in projects, this checkout
    uv run python -m bench.applies --before /tmp/wt-applies   # and on another checkout (HEAD in a worktree)
    uv run python -m bench.applies PROJECT=LABELS.json ...    # real projects, with their labels
    uv run python -m bench.applies PROJECT ...                # a project without labels: volume only
    uv run python -m bench.applies --smoke                    # what tests/bench/test_applies.py runs

The built-in projects are written to a temporary folder, modelled on layouts teams have: a VS
Code-like repository (`.github/copilot-instructions.md`, a title over 18 sections, and
`.github/instructions/*.instructions.md`, one with `applyTo`, the others with a description only),
a web app with Cursor rules (`.cursor/rules/*.mdc`: React `.tsx`, Python, tests, a database rule
without globs) and a monorepo of nested `AGENTS.md` and `CLAUDE.md` files. Each comes with labels.

A labels file is JSON: `{"source/path.py": ["rule/file.md", "other/rule.md#Heading"], ...}`, paths
relative to the project: a rule file alone means every section of it, `#Heading` that section (its
heading as written, case aside); `[]` says nothing should apply. Precision is the share of the
returned sections that should apply, recall the share of those that should apply that are returned,
both over every (source file, section) pair of a project (micro-averaged). Characters are the text
an agent would read: all returned, and the part of it that should not have been.

Each checkout runs in its own process (`--worker`), importing its own `corpus` and `retrieval`
through the library API (`applicable`, as `context_for_path` calls it), so the same labels measure
the code before and after a change. A project is read as the server reads it: its `.AGENTS` folder
if it has one, else its conventional agent files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

Files = Mapping[str, str]
Labels = Mapping[str, Sequence[str]]


def _body(*lines: str) -> str:
    return "\n".join(lines) + "\n\n"


VSCODE_SECTIONS = [
    (
        "##",
        "Project Overview",
        "Visual Studio Code is built with a layered architecture using TypeScript and Electron.",
    ),
    ("###", "Root Folders", "- `src/`: main TypeScript sources\n- `build/`: build scripts\n- `extensions/`: built-ins"),
    ("###", "Core Architecture (`src/` folder)", "- `src/vs/base/`: utilities\n- `src/vs/editor/`: the editor"),
    ("###", "Built-in Extensions (`extensions/` folder)", "First-party extensions that ship with VS Code."),
    ("###", "Finding Related Code", "Semantic search first, then grep for exact strings."),
    ("##", "Validating TypeScript changes", "Always check for compilation errors before running tests."),
    ("###", "TypeScript compilation steps", "Check the `VS Code - Build` watch task output."),
    ("###", "TypeScript validation steps", "Use `scripts/test.sh` for unit tests."),
    ("##", "Coding Guidelines", "The house rules below apply to every change."),
    ("###", "Indentation", "We use tabs, not spaces."),
    ("###", "Naming Conventions", "PascalCase for type names, camelCase for functions."),
    ("###", "Types", "Do not export types unless you need to share them."),
    ("###", "Comments", "JSDoc style comments for functions, interfaces, enums and classes."),
    ("###", "Strings", "Externalize every string shown to the user."),
    ("###", "UI labels", "Title-style capitalization for command labels."),
    ("###", "Style", "Arrow functions over anonymous function expressions."),
    ("###", "Code Quality", "Every file has the Microsoft copyright header; prefer async and await."),
    ("##", "Learnings", "Minimize the number of assertions in tests."),
]
FILLER = " Keep the change small, follow the patterns around it, and check it compiles." * 5

VSCODE: Files = {
    "package.json": "{}\n",
    ".github/copilot-instructions.md": "# VS Code Copilot Instructions\n\n"
    + "".join(f"{level} {heading}\n\n{body}{FILLER}\n\n" for level, heading, body in VSCODE_SECTIONS),
    ".github/instructions/typescript.instructions.md": "---\napplyTo: '**/*.ts'\n---\n\n"
    "# VS Code Copilot Development Instructions\n\n"
    + _body("## Scripts", "", "Use `scripts/test.sh` for unit tests.")
    + _body("## Compilation Tasks", "", "Watch the Core - Build task."),
    ".github/instructions/notebook.instructions.md": "---\ndescription: Architecture of the notebook and "
    "interactive window\n---\n\n# Notebook Architecture\n\n"
    + _body("## Model resolution", "", "NotebookService resolves notebook models.")
    + _body("## Cell Rendering", "", "Cell parts render through a contribution system.")
    + _body("## Focus Tracking", "", "NotebookEditorWidget tracks focus."),
    ".github/instructions/telemetry.instructions.md": "---\ndescription: Use when asked to work on telemetry "
    "events\n---\n\nPatterns for GDPR-compliant telemetry.\n\n"
    + _body("## Implementation Pattern", "", "Define the event and its classification types.")
    + _body("## GDPR Classifications & Purposes", "", "Choose the most restrictive classification.")
    + _body("## Naming & Privacy Rules", "", "No PII."),
    ".github/instructions/disposable.instructions.md": "---\ndescription: The IDisposable pattern\n---\n\n"
    "# IDisposable Pattern Overview\n\n"
    + _body("## Purpose", "", "Deterministic cleanup.")
    + _body("## Development Guidelines", "", "Register disposables immediately."),
    ".github/instructions/tree-widgets.instructions.md": "---\ndescription: Workbench tree widgets\n---\n\n"
    "# Workbench Tree Widgets Overview\n\n"
    + _body("## Purpose", "", "High-level trees for the workbench.")
    + _body("## Architecture", "", "WorkbenchTreeInternals holds the shared parts."),
}
TS = ".github/instructions/typescript.instructions.md"
CORE = ".github/copilot-instructions.md#Core Architecture (`src/` folder)"
VSCODE_LABELS: Labels = {
    "src/vs/editor/browser/widget/codeEditorWidget.ts": [TS, CORE],
    "src/vs/workbench/contrib/notebook/browser/notebookEditor.ts": [
        TS,
        CORE,
        ".github/instructions/notebook.instructions.md",
    ],
    "src/vs/platform/telemetry/common/telemetryService.ts": [
        TS,
        CORE,
        ".github/instructions/telemetry.instructions.md",
    ],
    "src/vs/base/common/lifecycle.ts": [TS, CORE, ".github/instructions/disposable.instructions.md"],
    "src/vs/workbench/contrib/comments/browser/commentsView.ts": [TS, CORE],
    "extensions/git/src/repository.ts": [
        TS,
        ".github/copilot-instructions.md#Built-in Extensions (`extensions/` folder)",
    ],
    "test/smoke/src/areas/notebook/notebook.test.ts": [TS, ".github/instructions/notebook.instructions.md"],
    "build/gulpfile.js": [],
}

WEBAPP: Files = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    # As Cursor's rule editor saves them: globs unquoted and comma-separated.
    ".cursor/rules/react.mdc": "---\ndescription: React components\nglobs: **/*.tsx, src/components/**\n"
    "alwaysApply: false\n---\n# React conventions\n\nFunction components only.\n\n"
    + _body("## Components", "", "One component per file, named exports.")
    + _body("## Hooks", "", "Hooks at the top of the component.")
    + _body("## Tests", "", "Testing Library; component tests live in `tests/` beside the Python ones."),
    ".cursor/rules/fastapi.mdc": "---\ndescription:\nglobs: *.py\nalwaysApply: false\n---\n# FastAPI\n\n"
    "You are an expert in Python and FastAPI.\n\n"
    + _body("## Error Handling", "", "Guard clauses first, the happy path last.")
    + _body("## Dependencies", "", "Pydantic v2, SQLAlchemy 2.0."),
    ".cursor/rules/tests.mdc": "---\ndescription: Python tests\nglobs: tests/**/*.py\nalwaysApply: false\n---\n"
    "# Pytest\n\nPlain functions.\n\n"
    + _body("## Fixtures", "", "Fixtures, not setUp.")
    + _body("## Mocks", "", "Mock the network, never the database."),
    ".cursor/rules/db.mdc": "---\ndescription: Database and migrations\nglobs:\nalwaysApply: false\n---\n"
    "# Database\n\nPostgres through SQLAlchemy.\n\n"
    + _body("## Migrations", "", "Alembic; never edit an applied migration.")
    + _body("## Queries", "", "No N+1 queries."),
    ".cursor/rules/general.mdc": "---\nalwaysApply: true\n---\n# General\n\nKeep it simple.\n",
    ".github/copilot-instructions.md": "# Shop Copilot Instructions\n\n"
    + _body("## Frontend", "", "React and Vite under `src/`.")
    + _body("## API", "", "FastAPI under `src/api/`.")
    + _body("## Testing", "", "pytest for Python, Vitest for the front end.")
    + _body("## Deployment", "", "Railway deploys main."),
}
FASTAPI = ".cursor/rules/fastapi.mdc"
REACT = ".cursor/rules/react.mdc"
SHOP = ".github/copilot-instructions.md"
WEBAPP_LABELS: Labels = {
    "tests/test_orders.py": [FASTAPI, ".cursor/rules/tests.mdc", f"{SHOP}#Testing"],
    "src/components/Button.tsx": [REACT, f"{SHOP}#Frontend"],
    "src/pages/Home.tsx": [REACT, f"{SHOP}#Frontend"],
    "src/api/orders.py": [FASTAPI, f"{SHOP}#API"],
    "migrations/versions/0042_add_users.py": [
        FASTAPI,
        ".cursor/rules/db.mdc#Database",
        ".cursor/rules/db.mdc#Migrations",
    ],
    "scripts/deploy.sh": [f"{SHOP}#Deployment"],
}

MONOREPO: Files = {
    "package.json": "{}\n",
    "AGENTS.md": "# Monorepo\n\npnpm workspaces.\n",
    "CLAUDE.md": "# Monorepo guide\n\n"
    + _body("## The web package", "", "Next.js.")
    + _body("## The api package", "", "Express.")
    + _body("## Releases", "", "Changesets."),
    "packages/web/AGENTS.md": "# Web\n\n" + _body("## Styling", "", "Tailwind.") + _body("## State", "", "Zustand."),
    "packages/web/CLAUDE.md": "# Web notes\n\n" + _body("## Storybook", "", "Every component has a story."),
    "packages/api/AGENTS.md": "# API service\n\n"
    + _body("## Endpoints", "", "REST.")
    + _body("## Errors", "", "RFC 7807."),
    "packages/api/src/billing/AGENTS.md": "# Billing\n\n" + _body("## Money", "", "Integer cents."),
}
MONOREPO_LABELS: Labels = {
    "packages/web/src/app.tsx": ["packages/web/AGENTS.md", "packages/web/CLAUDE.md", "CLAUDE.md#The web package"],
    "packages/api/src/server.ts": ["packages/api/AGENTS.md", "CLAUDE.md#The api package"],
    "packages/api/src/billing/invoice.ts": [
        "packages/api/src/billing/AGENTS.md",
        "packages/api/AGENTS.md",
        "CLAUDE.md#The api package",
    ],
    "packages/shared/src/dates.ts": [],
}

BUILT_IN: dict[str, tuple[Files, Labels]] = {
    "vscode-like": (VSCODE, VSCODE_LABELS),
    "cursor-webapp": (WEBAPP, WEBAPP_LABELS),
    "monorepo": (MONOREPO, MONOREPO_LABELS),
}

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", "out", "target"}


# --- the worker: one checkout's answers ----------------------------------------------------------


def worker(spec: dict[str, Any], code: Path) -> dict[str, Any]:
    """What this checkout's `context_for_path` returns for each source file of each project, and the
    sections of every rule file (to read the labels by)."""
    sys.path.insert(0, str(code))
    import corpus
    from corpus.catalog import load
    from corpus.roots import make_roots, relative_source
    from retrieval.chunks.units import sections_of
    from retrieval.search.applies import applicable

    out: dict[str, Any] = {"code": str(Path(corpus.__file__).resolve().parents[1]), "projects": {}}
    for project in spec["projects"]:
        folder = Path(project["folder"]).resolve()
        agents = folder / ".AGENTS"
        roots = make_roots([agents]) if agents.is_dir() else make_roots([], conventional=folder)
        found = load(roots)
        files = {f.path: (f.root.path / f.rel).relative_to(folder).as_posix() for f in found.files.values()}
        sections = {
            files[f.path]: [[u.start_line, u.heading or "", len(u.text)] for u in sections_of(f)]
            for f in found.files.values()
        }
        answers = {}
        for source in project["sources"]:
            where = {r.label: at for r in found.agents_roots if (at := relative_source(r, source, folder)) is not None}
            answers[source] = [
                [files[a.unit.path], a.unit.start_line, a.unit.heading or "", a.reason, len(a.unit.text)]
                for a in applicable(found, where)
            ]
        out["projects"][project["name"]] = {"sections": sections, "answers": answers}
    return out


def run_worker(code: Path, spec: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-applies-") as tmp:
        path = Path(tmp) / "spec.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--worker", str(path), "--code", str(code)],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp,
            env=env,
        )
    if done.returncode != 0:
        raise SystemExit(f"the worker on {code} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# --- scoring -------------------------------------------------------------------------------------


@dataclass
class Score:
    sources: int = 0
    returned: int = 0
    relevant: int = 0
    hits: int = 0
    chars: int = 0
    noise_chars: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        self.sources += other.sources
        self.returned += other.returned
        self.relevant += other.relevant
        self.hits += other.hits
        self.chars += other.chars
        self.noise_chars += other.noise_chars
        self.reasons.update(other.reasons)

    @property
    def precision(self) -> float:
        return self.hits / self.returned if self.returned else 1.0

    @property
    def recall(self) -> float:
        return self.hits / self.relevant if self.relevant else 1.0


def _fold(heading: str) -> str:
    return " ".join(heading.split()).casefold()


def _kind(reason: str) -> str:
    """`cursor globs: src/**`, `claude paths: src/**` (or `globs: src/**` before conventions were
    named) -> `globs`: a rule's own paths; `heading names vs` -> `heading names`."""
    for kind in ("file path names", "heading names", "package rules"):
        if reason.startswith(kind):
            return kind
    if ": " in reason:
        return "globs"
    return reason.split(" in ", 1)[0] + " in folder" if " in " in reason else reason


def relevant_sections(labels: Sequence[str], sections: Mapping[str, Sequence[Sequence[Any]]]) -> set[tuple[str, int]]:
    """The (rule file, start line) pairs the labels name; a label that names nothing is an error."""
    out: set[tuple[str, int]] = set()
    for label in labels:
        path, _, heading = label.partition("#")
        if path not in sections:
            raise SystemExit(f"label {label!r}: no rule file {path} (known: {', '.join(sorted(sections))})")
        named = [(path, int(s[0])) for s in sections[path] if not heading or _fold(str(s[1])) == _fold(heading)]
        if not named:
            raise SystemExit(f"label {label!r}: {path} has no section {heading!r}")
        out.update(named)
    return out


def score(result: Mapping[str, Any], labels: Labels | None) -> Score:
    total = Score()
    sections: Mapping[str, Sequence[Sequence[Any]]] = result["sections"]
    for source, answer in result["answers"].items():
        got = {(str(a[0]), int(a[1])): a for a in answer}
        one = Score(sources=1, returned=len(got), chars=sum(int(a[4]) for a in answer))
        one.reasons.update(_kind(str(a[3])) for a in answer)
        if labels is not None:
            want = relevant_sections(labels[source], sections)
            one.relevant = len(want)
            one.hits = len(want & set(got))
            one.noise_chars = sum(int(a[4]) for key, a in got.items() if key not in want)
            total.extras += [f"{source}: {k[0]}:{k[1]} {got[k][2]!r} ({got[k][3]})" for k in sorted(set(got) - want)]
            total.misses += [f"{source}: {k[0]}:{k[1]}" for k in sorted(want - set(got))]
        total.add(one)
    return total


# --- projects ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    name: str
    folder: Path
    labels: Labels | None
    sources: tuple[str, ...]


def write_built_in(base: Path, names: Sequence[str]) -> list[Project]:
    projects = []
    for name in names:
        files, labels = BUILT_IN[name]
        folder = base / name
        for rel, text in files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        projects.append(Project(name, folder, labels, tuple(labels)))
    return projects


def sample_sources(folder: Path, limit: int) -> tuple[str, ...]:
    """Up to `limit` files of the project, spread evenly over its sorted paths (no agent files)."""
    found: list[str] = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [(Path(top) / n).relative_to(folder).as_posix() for n in names if not n.endswith((".md", ".mdc"))]
    found.sort()
    step = max(1, len(found) // limit) if found else 1
    return tuple(found[::step][:limit])


def given_project(text: str, limit: int) -> Project:
    folder_text, _, labels_text = text.partition("=")
    folder = Path(folder_text).resolve()
    if not folder.is_dir():
        raise SystemExit(f"no project folder {folder}")
    if labels_text:
        labels: Labels = json.loads(Path(labels_text).read_text(encoding="utf-8"))
        return Project(folder.name, folder, labels, tuple(labels))
    return Project(folder.name, folder, None, sample_sources(folder, limit))


# --- report --------------------------------------------------------------------------------------


def table(rows: list[tuple[str, str, Score, bool]]) -> str:
    lines = [
        "| project | code | sources | sections returned | should apply | precision | recall "
        "| characters per source | of them noise |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for project, code, s, labelled in rows:
        per = s.chars / s.sources if s.sources else 0.0
        noise = s.noise_chars / s.sources if s.sources else 0.0
        if labelled:
            lines.append(
                f"| {project} | {code} | {s.sources} | {s.returned} | {s.relevant} | {s.precision:.3f} "
                f"| {s.recall:.3f} | {per:,.0f} | {noise:,.0f} |"
            )
        else:
            lines.append(f"| {project} | {code} | {s.sources} | {s.returned} | - | - | - | {per:,.0f} | - |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.applies", description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="*", help="PROJECT or PROJECT=LABELS.json (see the module docstring)")
    parser.add_argument("--before", type=Path, help="another checkout to measure too (e.g. a worktree of HEAD)")
    parser.add_argument("--no-built-in", action="store_true", help="only the projects given")
    parser.add_argument("--sample", type=int, default=40, help="source files sampled from an unlabelled project")
    parser.add_argument("--smoke", action="store_true", help="one built-in project: seconds")
    parser.add_argument(
        "--detail", action="store_true", help="list every section returned that should not be, and every miss"
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker.read_text(encoding="utf-8")), args.code.resolve())))
        return 0

    with tempfile.TemporaryDirectory(prefix="bench-applies-projects-") as tmp:
        names = [] if args.no_built_in else (["vscode-like"] if args.smoke else list(BUILT_IN))
        projects = write_built_in(Path(tmp), names) + [given_project(p, args.sample) for p in args.projects]
        spec = {"projects": [{"name": p.name, "folder": str(p.folder), "sources": list(p.sources)} for p in projects]}
        checkouts = [("before", args.before.resolve())] if args.before else []
        checkouts.append(("after" if args.before else "this", REPO))
        results = {name: run_worker(code, spec) for name, code in checkouts}

    rows: list[tuple[str, str, Score, bool]] = []
    figures: dict[str, Any] = {"checkouts": {name: r["code"] for name, r in results.items()}, "projects": {}}
    details: list[str] = []
    for name, _ in checkouts:
        labelled_total = Score()
        for p in projects:
            s = score(results[name]["projects"][p.name], p.labels)
            rows.append((p.name, name, s, p.labels is not None))
            if p.labels is not None:
                labelled_total.add(s)
            figures["projects"].setdefault(p.name, {})[name] = {
                "sources": s.sources,
                "returned": s.returned,
                "relevant": s.relevant if p.labels is not None else None,
                "precision": round(s.precision, 4) if p.labels is not None else None,
                "recall": round(s.recall, 4) if p.labels is not None else None,
                "chars_per_source": round(s.chars / s.sources, 1) if s.sources else 0.0,
                "reasons": dict(s.reasons),
            }
            details += [f"[{name}] {p.name} extra  {e}" for e in s.extras]
            details += [f"[{name}] {p.name} missed {m}" for m in s.misses]
        if any(p.labels is not None for p in projects):
            rows.append(("all labelled", name, labelled_total, True))
            figures.setdefault("all", {})[name] = {
                "precision": round(labelled_total.precision, 4),
                "recall": round(labelled_total.recall, 4),
            }

    print("## context_for_path: the sections returned against the sections that should apply\n")
    for name, result in results.items():
        print(f"- {name}: {result['code']}")
    print()
    print(table(rows))
    print("\n## Why the sections were returned\n")
    print("| project | code | " + " | ".join(KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    for project, code, s, _ in rows:
        if project != "all labelled":
            print(f"| {project} | {code} | " + " | ".join(str(s.reasons.get(k, 0)) for k in KINDS) + " |")
    if args.detail and details:
        print("\n## Detail\n")
        print("\n".join(details))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


KINDS = ("globs", "AGENTS.md in folder", "CLAUDE.md in folder", "package rules", "file path names", "heading names")


if __name__ == "__main__":
    sys.exit(main())
