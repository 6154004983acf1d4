"""What `doctor` reports: one finding, with the file, the lines, what is wrong and how to fix it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from clients import claude_code
from corpus.files import CorpusFile
from retrieval.chunks.units import Unit


class Finding(BaseModel):
    severity: str = Field(description="error (exit status 1), warning, or note (worth knowing; nothing wrong).")
    check: str = Field(description="Which check found it.")
    path: str = Field(description="Display path of the file.")
    start_line: int | None = None
    end_line: int | None = None
    message: str = Field(description="What is wrong (any credential in it masked).")
    fix: str = Field(description="How to fix it.")


INSTRUCTIONS_CUTS = claude_code.INSTRUCTIONS_CUTS
"""What clients do to long server instructions, as doctor's messages say it."""


Where = Unit | tuple[int, int] | None
"""The lines a finding is about: a section's, (first, last), or none (the whole file)."""


def warn(f: CorpusFile | str, check: str, message: str, fix: str, at: Where = None, error: bool = False) -> Finding:
    return finding("error" if error else "warning", f, check, message, fix, at)


def note(f: CorpusFile | str, check: str, message: str, fix: str, at: Where = None) -> Finding:
    return finding("note", f, check, message, fix, at)


def finding(severity: str, f: CorpusFile | str, check: str, message: str, fix: str, at: Where) -> Finding:
    lines = (at.start_line, at.end_line) if isinstance(at, Unit) else at
    return Finding(
        severity=severity,
        check=check,
        path=f if isinstance(f, str) else f.path,
        start_line=lines[0] if lines else None,
        end_line=lines[1] if lines else None,
        message=message,
        fix=fix,
    )
