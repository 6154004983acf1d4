"""`context_status`, `agents-context://status` and `agents-context status`: the report an agent
checks before it trusts a search.

Whether search is enabled and healthy, what each root holds, what was skipped and why, how the
watcher is doing, and how fresh the index is.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from corpus.names import printable
from live.index import LiveIndex
from live.watch import Watcher
from retrieval.render.grammar import condition_words, inline, utc, with_status
from retrieval.render.schema import LastUpdate
from retrieval.search.request import RootCondition


class Skip(BaseModel):
    path: str
    reason: str


class RootStatus(BaseModel):
    label: str
    kind: str = Field(description="agents (.AGENTS: pinned + sections + windows) or docs (windows only).")
    path: str
    present: bool
    files: int
    pinned: int
    sections: int
    windows: int
    fresh_as_of: str | None = Field(
        description="Every change before this moment (UTC) is reflected; null until first indexed."
    )
    indexing: str | None = Field(
        default=None,
        description="While the root's first indexing runs: files read/to read, or 'checking'; "
        "'changing' while its files change faster than they settle (answers come from the last complete update).",
    )
    skipped: list[Skip]
    condition: SkipJsonSchema[RootCondition | None] = Field(default=None, exclude=True)
    """The root's condition when the report was made (`indexing` says it), for the text: not
    part of the JSON."""

    @property
    def building(self) -> RootCondition | None:
        """The condition, while the root's first indexing runs."""
        return self.condition if self.condition is not None and self.condition.building else None


class WatcherStatus(BaseModel):
    mode: str
    healthy: bool
    restarts: int
    last_error: str | None


class StatusReport(BaseModel):
    enabled: bool = Field(description="BM25 search is available (always, in this server).")
    healthy: bool = Field(
        description="Nothing is wrong: every root present, the watcher not failed, no update failing "
        "(starting and indexing are not unhealthy)."
    )
    state: Literal["healthy", "starting", "indexing", "not healthy"] = Field(
        description="healthy; starting (the watcher is not running yet); indexing (a root's first "
        "indexing runs: answers are partial); not healthy (see problems)."
    )
    problems: list[str] = Field(description="Why it is not healthy, one sentence each.")
    warnings: list[str] = Field(
        description="Set-up mistakes: a --pin that matches no file, a --root that is a whole project."
    )
    generation: int
    age_s: float = Field(description="Seconds since the index last changed (or since start-up).")
    fresh_as_of: str | None = Field(
        description="Every change before this moment (UTC) is reflected; null until indexed."
    )
    roots: list[RootStatus]
    watcher: WatcherStatus
    last_error: str | None
    last_update: LastUpdate | None


ONE_SHOT = WatcherStatus(mode="none (one-shot command)", healthy=True, restarts=0, last_error=None)
"""What a command that indexes once and exits (`agents-context status`) says of its watcher."""


def report(live: LiveIndex, watcher: Watcher | None, started: float) -> StatusReport:
    """The report now; `watcher` is None for a one-shot command, which runs none."""
    with live.view() as view:
        roots = []
        for root in live.roots:
            files = view.corpus.in_root(root)
            condition = live.condition(root)  # a record: the indexer thread goes on reading
            roots.append(
                RootStatus(
                    label=root.label,
                    kind=root.kind.value,
                    path=printable(str(root.path)),
                    present=live.syncs[root.label].present,
                    files=len(files),
                    pinned=sum(f.pinned for f in files),
                    sections=sum(view.library.sections.group_size(f.path) for f in files),
                    windows=sum(view.library.windows.group_size(f.path) for f in files),
                    fresh_as_of=_utc(live.syncs[root.label].fresh_as_of),
                    indexing=condition_words(condition) if condition is not None else None,
                    condition=condition,
                    skipped=[
                        Skip(path=f"{s.root.label}/{s.rel}", reason=s.reason)
                        for s in view.corpus.skipped
                        if s.root is root
                    ],
                )
            )
        change = view.last_change
        generation = view.generation
        unmatched = view.corpus.unmatched_pins()
    watching = (
        ONE_SHOT
        if watcher is None
        else WatcherStatus(
            mode=watcher.mode, healthy=watcher.healthy, restarts=watcher.restarts, last_error=watcher.last_error
        )
    )
    problems = [f"root {inline(r.label)} is missing ({inline(r.path)})" for r in roots if not r.present]
    # Started but not reported in yet, and never failed: the first report comes within a poll interval.
    starting = watcher is not None and watcher.last_tick is None and watcher.last_error is None
    if not watching.healthy and not starting:
        problems.append(
            f"the file watcher is {watching.mode}"
            + (f" after {inline(watching.last_error)}" if watching.last_error else "")
            + ": answers are still checked against the disk before each call"
        )
    if live.last_error is not None:
        problems.append(f"the last index update failed: {inline(live.last_error)}")
    indexing = any(r.building is not None for r in roots)
    state: Literal["healthy", "starting", "indexing", "not healthy"] = (
        "not healthy" if problems else "indexing" if indexing else "starting" if starting else "healthy"
    )
    warnings = [
        *live.warnings,
        *(f"--pin {p} matches no file, so it pins nothing" for p in unmatched),
    ]
    fresh = live.fresh_since(live.roots)
    return StatusReport(
        enabled=True,
        healthy=not problems,
        state=state,
        problems=problems,
        warnings=warnings,
        generation=generation,
        age_s=round(time.time() - (change.at if change else started), 3),
        fresh_as_of=utc(fresh) if fresh is not None else None,
        roots=roots,
        watcher=watching,
        last_error=live.last_error,
        last_update=LastUpdate.of(change) if change else None,
    )


def _utc(moment: float) -> str | None:
    return utc(moment) if moment > 0 else None


def _headline(status: StatusReport) -> str:
    """The first line: the state, and its reason when it is not plainly healthy."""
    if status.state == "not healthy":
        return f"agents-context is NOT healthy: {'; '.join(status.problems)}. BM25 search enabled."
    if status.state == "indexing":
        going = ", ".join(
            f"{r.label}: {condition_words(c)}" + (" files read" if c.counted else "")
            for r in status.roots
            if (c := r.building) is not None
        )
        return f"agents-context is indexing ({going}); BM25 search enabled: answers are partial until it is done."
    if status.state == "starting":
        return "agents-context is starting (the file watcher is not running yet); BM25 search enabled."
    return "agents-context is healthy; BM25 search enabled."


def render(status: StatusReport) -> str:
    fresh = f"fresh as of {status.fresh_as_of}" if status.fresh_as_of else "not indexed yet"
    lines = [
        _headline(status),
        f"Index generation {status.generation}, last changed {status.age_s:.1f} s ago; {fresh}.",
        f"Watcher: {status.watcher.mode}, "
        + ("healthy, " if status.watcher.healthy else "starting, " if status.state == "starting" else "not healthy, ")
        + f"{status.watcher.restarts} restarts"
        + (f", last error: {inline(status.watcher.last_error)}" if status.watcher.last_error else "")
        + ".",
    ]
    for r in status.roots:
        state = "" if r.present else " MISSING"
        if r.indexing:
            state += f" INDEXING {r.indexing}"
        lines.append(
            f"- {inline(r.label)} ({r.kind}, {inline(r.path)}){state}: {r.files} files ({r.pinned} pinned), "
            f"{r.sections} sections, {r.windows} windows; "
            + (f"fresh as of {r.fresh_as_of}" if r.fresh_as_of else "not indexed yet")
        )
        lines.extend(f"  skipped {inline(s.path)}: {inline(s.reason)}" for s in r.skipped)
    if status.last_update:
        u = status.last_update
        lines.append(
            f"Last update at {u.at}: {len(u.added)} added, {len(u.changed)} changed, {len(u.removed)} removed."
        )
    if status.last_error:
        lines.append(f"Last error: {inline(status.last_error)}")
    lines.extend(f"Warning: {inline(w)}." for w in status.warnings)
    fields: dict[str, object] = {"healthy": int(status.healthy), "gen": status.generation}
    if status.fresh_as_of:
        fields["fresh_as_of"] = status.fresh_as_of
    indexing = [f"{r.label}:{r.indexing}" for r in status.roots if r.indexing]
    if indexing:
        fields["indexing"] = ",".join(indexing)
    return with_status("\n".join(lines), fields)
