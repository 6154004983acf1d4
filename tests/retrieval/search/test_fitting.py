"""The sections of a long rule that best fit a touched file come first: by the path's words, its
extension and whether the tool writes a new file."""

from __future__ import annotations

from retrieval.chunks.units import section_units
from retrieval.search.fitting import best_first, path_words

RULE = (
    "# Tasks\n\nWhat every task needs.\n\n"
    "## Retries\n\nmaxAttempts.\n\n"
    "## Defining a task\n\nExport it.\n\n"
    "## Scheduled tasks\n\nA cron.\n\n"
    "## Sessions cleanup\n\nDelete expired sessions in batches.\n"
)


def headings(path: str, tool: str = "") -> list[str | None]:
    units = section_units("p/tasks.md", "agents://tasks.md", RULE)
    return [u.heading for u in best_first(units, [path], tool)]


def test_the_introduction_first_then_the_sections_the_path_names() -> None:
    assert headings("apps/jobs/src/trigger/scheduled/cleanup-sessions.ts")[:3] == [
        "Tasks",
        "Sessions cleanup",
        "Scheduled tasks",
    ]


def test_ties_keep_the_files_order() -> None:
    assert headings("src/other.py") == ["Tasks", "Retries", "Defining a task", "Scheduled tasks", "Sessions cleanup"]


def test_writing_a_new_file_asks_for_how_one_is_made() -> None:
    assert headings("src/new-thing.ts", "Write")[1] == "Defining a task"
    assert headings("src/new-thing.ts", "Read")[1] == "Retries"


def test_a_paths_words_leave_out_the_generic_ones_and_keep_the_extension() -> None:
    assert path_words("apps/api/src/sendWelcomeEmail.ts") == {"api", "send", "welcome", "email", "ts"}
