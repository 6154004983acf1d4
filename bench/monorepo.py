"""A monorepo's agent files as teams keep them, for the hook's tests and `bench/hook.py`: a
Cursor rule of more than 1,000 lines for background-task files (`**/trigger/**/*.ts`, 40
sections), a 66-line rule for every `.ts` file, other path rules that apply to some files and
not others, always-on Cursor rules, `.claude/rules`, a top `AGENTS.md` imported by `CLAUDE.md`,
and nested `CLAUDE.md` and `AGENTS.md` files: 26 agent files over a small TypeScript tree.

Every rule holds marks no other file holds: `TRIGGER-INTRO-MARK` and `TS-RULE-MARK` open the two
rules a task file gets; `TRIGGER-S07-MARK` is the first line of the long rule's seventh section.
The text is written from a table here (no third-party text), so the fixture is the same on every
machine.

    write(folder) -> the project folder, with `TASK_FILE` and the other `SOURCES` in it
"""

from __future__ import annotations

from pathlib import Path

TASK_FILE = "apps/jobs/src/trigger/scheduled/cleanup-sessions.ts"
"""A background task: the long rule, the `.ts` rule and the jobs package's CLAUDE.md apply."""
SOURCES = {
    TASK_FILE: "export const cleanupSessions = 1;\n",
    "apps/jobs/src/trigger/emails/send-welcome.ts": "export const sendWelcome = 1;\n",
    "apps/jobs/src/index.ts": "export {};\n",
    "apps/api/src/auth/login.ts": "export const login = 1;\n",
    "apps/api/src/auth/login.test.ts": "test('login', () => {});\n",
    "apps/web/app/page.tsx": "export default function Page() { return null; }\n",
    "packages/db/src/schema.ts": "export const schema = {};\n",
    "scripts/release.sh": "echo release\n",
    "README.md": "# Tea shop\n\nNot an agent file.\n",
}

# The long rule's sections: a heading, what the section is about, and the words its lines use.
TOPICS = [
    ("Defining a task", "task", "id run payload export"),
    ("Schema tasks", "schemaTask", "zod schema payload validation"),
    ("Scheduled tasks", "schedules.task", "cron schedule timezone externalId"),
    ("Cron expressions", "cron", "minute hour day-of-month weekday"),
    ("Retries", "retry", "maxAttempts factor minTimeoutInMs randomize"),
    ("Handling errors", "handleError", "skipRetrying retryAt error"),
    ("Idempotency keys", "idempotencyKeys.create", "idempotency key scope run"),
    ("Queues", "queue", "concurrencyLimit name shared"),
    ("Concurrency keys", "concurrencyKey", "per-user tenant queue"),
    ("Machines", "machine", "preset cpu memory large-1x"),
    ("Max duration", "maxDuration", "seconds timeout limit"),
    ("Triggering from the backend", "tasks.trigger", "handle id import type"),
    ("Triggering and waiting", "triggerAndWait", "result ok output unwrap"),
    ("Batch triggering", "batchTrigger", "items batch runs limit"),
    ("Batch and wait", "batchTriggerAndWait", "runs results ordering"),
    ("Waits", "wait.for", "seconds minutes until date"),
    ("Wait tokens", "wait.createToken", "token timeout completeToken"),
    ("Metadata", "metadata.set", "progress keys parent root"),
    ("Tags", "tags", "run tags filter dashboard"),
    ("Realtime", "runs.subscribeToRun", "stream react hook"),
    ("Streams", "metadata.stream", "chunks openai response"),
    ("Logging", "logger", "info warn error structured"),
    ("Tracing", "logger.trace", "span attributes otel"),
    ("Lifecycle hooks", "onStart", "onSuccess onFailure cleanup"),
    ("Init and cleanup", "init", "cleanup database connection"),
    ("Middleware", "middleware", "locals context"),
    ("Environment variables", "envvars", "secrets sync deploy"),
    ("Build extensions", "build.extensions", "prisma ffmpeg puppeteer"),
    ("Prisma in tasks", "prismaExtension", "schema migrate generate"),
    ("Sessions cleanup jobs", "sessions", "expired cleanup batch delete"),
    ("Sending emails", "emails", "welcome template resend"),
    ("Webhooks", "webhooks", "signature verify replay"),
    ("Versioning", "version", "locked deployments"),
    ("Local development", "dev", "cli watch login"),
    ("Testing tasks", "test", "vitest mock payload"),
    ("Deploying", "deploy", "ci github actions"),
    ("Preview branches", "preview", "branch env archive"),
    ("Limits", "limits", "payload size rate"),
    ("Migrating from v3", "migrate", "imports renamed"),
    ("Troubleshooting", "troubleshooting", "stuck runs logs"),
]
SECTION_LINES = 25
"""Lines of each of the long rule's sections (heading and blank lines included)."""


def trigger_rule() -> str:
    """The long rule: front matter, an introduction, then one section per `TOPICS` row."""
    lines = [
        "---",
        "description: Guidelines for writing Trigger.dev background tasks",
        "globs: **/trigger/**/*.ts",
        "alwaysApply: false",
        "---",
        "# Trigger.dev tasks",
        "",
        "TRIGGER-INTRO-MARK. Every background job is a Trigger.dev task in a `trigger/` folder.",
        "Import from `@trigger.dev/sdk`, never from the deprecated `@trigger.dev/sdk/v3`.",
        "Export every task, and give each an `id` unique in the project.",
        "",
    ]
    for number, (heading, api, words) in enumerate(TOPICS, start=1):
        mark = f"TRIGGER-S{number:02d}-MARK"
        body = [
            f"## {heading}",
            "",
            f"{mark}. Use `{api}` for this; the words to know are {words}.",
            "",
            "```ts",
            'import { task } from "@trigger.dev/sdk";',
            "",
            f"export const example{number} = task({{",
            f'  id: "example-{number}",',
            "  run: async (payload: { id: string }) => {",
            f"    // {heading.lower()}: {words}",
            "    return { ok: true };",
            "  },",
            "});",
            "```",
            "",
        ]
        while len(body) < SECTION_LINES - 1:
            step = len(body) - 15
            body.append(
                f"- {heading} note {step}: keep {words.split()[step % len(words.split())]} explicit (S{number:02d})."
            )
        body.append("")
        lines += body
    return "\n".join(lines) + "\n"


def typescript_rule() -> str:
    """A 66-line rule for every `.ts` file."""
    lines = [
        "---",
        "description: TypeScript conventions for the whole monorepo",
        "globs: **/*.ts",
        "alwaysApply: false",
        "---",
        "# TypeScript",
        "",
        "TS-RULE-MARK. Strict mode everywhere; no `any`, no non-null assertions.",
        "",
    ]
    subjects = ["Types", "Errors", "Imports", "Naming", "Async code", "Tests"]
    for subject in subjects:
        lines += [f"## {subject}", ""]
        lines += [
            f"- {subject} rule {i}: prefer the explicit form (TS-{subject[:3].upper()}-{i})." for i in range(1, 9)
        ]
        lines.append("")
    return "\n".join(lines[:66]) + "\n"


def rule(front: str, title: str, mark: str, *lines: str) -> str:
    head = f"---\n{front}\n---\n" if front else ""
    return head + f"# {title}\n\n{mark}. " + "\n".join(lines) + "\n"


def agent_files() -> dict[str, str]:
    """The 26 agent files, by path."""
    cursor, claude = ".cursor/rules", ".claude/rules"
    return {
        "AGENTS.md": rule(
            "", "Tea shop monorepo", "AGENTS-TOP-MARK", "pnpm workspaces; run `pnpm test` before committing."
        ),
        "CLAUDE.md": "# Claude\n\n@AGENTS.md\n",
        f"{cursor}/trigger-tasks.mdc": trigger_rule(),
        f"{cursor}/typescript.mdc": typescript_rule(),
        f"{cursor}/english.mdc": rule(
            "alwaysApply: true", "Language", "ALWAYS-EN-MARK", "Write code and comments in English."
        ),
        f"{cursor}/commits.mdc": rule("alwaysApply: true", "Commits", "ALWAYS-COMMIT-MARK", "Conventional commits."),
        f"{cursor}/security.mdc": rule("alwaysApply: true", "Security", "ALWAYS-SEC-MARK", "Never log a token."),
        f"{cursor}/react.mdc": rule("globs: **/*.tsx", "React", "REACT-MARK", "Server components by default."),
        f"{cursor}/tests.mdc": rule("globs: **/*.test.ts", "Tests", "TESTS-MARK", "vitest, one file per module."),
        f"{cursor}/database.mdc": rule("globs: packages/db/**", "Database", "DB-MARK", "Drizzle migrations only."),
        f"{cursor}/api.mdc": rule("globs: apps/api/**", "API", "API-MARK", "Validate every body with zod."),
        f"{cursor}/scripts.mdc": rule("globs: scripts/**", "Scripts", "SCRIPTS-MARK", "POSIX sh, set -eu."),
        f"{cursor}/styling.mdc": rule("description: Tailwind styling", "Styling", "STYLE-MARK", "Tailwind only."),
        f"{cursor}/i18n.mdc": rule(
            "description: Translations", "Translations", "I18N-MARK", "Every string in en.json."
        ),
        f"{claude}/jobs.md": rule("paths: apps/jobs/**", "Jobs package", "CLAUDE-JOBS-MARK", "Tasks are idempotent."),
        f"{claude}/api.md": rule("paths: apps/api/**", "API for Claude", "CLAUDE-API-MARK", "Return typed errors."),
        f"{claude}/web.md": rule("paths: apps/web/**", "Web for Claude", "CLAUDE-WEB-MARK", "No client fetches."),
        f"{claude}/review.md": rule("", "Review", "CLAUDE-REVIEW-MARK", "Small diffs, one concern each."),
        "apps/jobs/CLAUDE.md": rule("", "Jobs", "JOBS-CLAUDE-MARK", "Run `pnpm dev:jobs` to try a task."),
        "apps/jobs/AGENTS.md": rule("", "Jobs agents", "JOBS-AGENTS-MARK", "Jobs deploy with the CLI."),
        "apps/api/CLAUDE.md": rule("", "API service", "API-CLAUDE-MARK", "Fastify; one route per file."),
        "apps/api/AGENTS.md": rule("", "API agents", "API-AGENTS-MARK", "Keep handlers thin."),
        "apps/web/CLAUDE.md": rule("", "Web app", "WEB-CLAUDE-MARK", "Next.js app router."),
        "apps/web/AGENTS.md": rule("", "Web agents", "WEB-AGENTS-MARK", "pnpm --filter web."),
        "packages/db/CLAUDE.md": rule("", "Database package", "DB-CLAUDE-MARK", "Never edit generated SQL."),
        "packages/db/AGENTS.md": rule("", "Database agents", "DB-AGENTS-MARK", "Seed with pnpm db:seed."),
    }


def write(folder: Path) -> Path:
    """The monorepo in `folder` (made), its agent files and `SOURCES`; returns `folder`."""
    for rel, text in {**agent_files(), **SOURCES}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def rule_lines(folder: Path) -> frozenset[str]:
    """Every line of the agent files' bodies (front matter aside) that is not blank: what counts as
    rule text in what the hook injects."""
    found: set[str] = set()
    for rel in agent_files():
        lines = (folder / rel).read_text(encoding="utf-8").split("\n")
        if lines and lines[0] == "---":
            end = lines.index("---", 1)
            lines = lines[end + 1 :]
        found.update(line for line in lines if line.strip())
    return frozenset(found)


def rule_share(text: str, lines: frozenset[str]) -> float:
    """The share of `text`'s characters (newlines included) on lines that are rule lines."""
    if not text:
        return 0.0
    ruled = sum(len(line) + 1 for line in text.split("\n") if line in lines)
    return min(ruled / len(text), 1.0)
