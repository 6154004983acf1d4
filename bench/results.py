"""The benchmarks' results as data: one dated JSON file a run, under `bench/results/`.

A file is `<bench>-<YYYY-MM-DD>.json` (`-2`, `-3` for a second run that day) and holds:

    {"bench": "speed", "date": "2026-11-23", "machine": "...", "source": "...", "command": "...",
     "tables": {"speed-query": {"columns": [...], "rows": [[...], ...], "note": "..."}, ...}}

Every cell is the text the benchmark printed. A table's name is unique across benchmarks; the
docs show the newest file's table of that name (`bench.tables` writes them between markers).
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
NAME = re.compile(r"^(?P<bench>[a-z0-9_]+)-(?P<date>\d{4}-\d{2}-\d{2})(?:-(?P<n>\d+))?\.json$")

Table = dict[str, Any]
"""`columns` (the header cells), `rows` (lists of cells, as printed) and an optional `note`."""


def table(columns: Sequence[str], rows: Iterable[Sequence[object]], note: str = "") -> Table:
    made: Table = {"columns": list(columns), "rows": [[str(c) for c in row] for row in rows]}
    if note:
        made["note"] = note
    return made


def from_markdown(lines: Iterable[str]) -> list[Table]:
    """The markdown tables among printed lines, in order (a header, a `|---|` rule, rows)."""
    found: list[Table] = []
    block: list[list[str]] = []
    for line in [*lines, ""]:
        if line.startswith("|") and line.rstrip().endswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split(" | ")])
            continue
        if len(block) >= 2 and set("".join(block[1])) <= set("-:| "):
            found.append(table(block[0], block[2:]))
        block = []
    return found


def save(
    bench: str,
    tables: Mapping[str, Table],
    *,
    machine: Mapping[str, object] | str,
    command: str,
    source: str = "",
    folder: Path = RESULTS,
    date: datetime.date | None = None,
) -> Path:
    """Write one run's tables as `<bench>-<date>.json` in `folder`, never over an earlier run's."""
    day = (date or datetime.date.today()).isoformat()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{bench}-{day}.json"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{bench}-{day}-{n}.json"
    record = {
        "bench": bench,
        "date": day,
        "machine": machine,
        "command": command,
        "source": source or f"a run of `{command}`",
        "tables": dict(tables),
    }
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _order(path: Path) -> tuple[str, int, str]:
    m = NAME.match(path.name)
    assert m, f"{path.name} is not named <bench>-<YYYY-MM-DD>.json"
    return (m["date"], int(m["n"] or 1), m["bench"])


def load(folder: Path = RESULTS) -> list[tuple[Path, dict[str, Any]]]:
    """Every result file, oldest first (by date, then by run of that day)."""
    paths = sorted(folder.glob("*.json"), key=_order)
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def latest(folder: Path = RESULTS) -> dict[str, tuple[Path, dict[str, Any], Table]]:
    """Each table name's newest table, with the file and record it comes from."""
    newest: dict[str, tuple[Path, dict[str, Any], Table]] = {}
    for path, record in load(folder):
        for name, t in record["tables"].items():
            newest[name] = (path, record, t)
    return newest
