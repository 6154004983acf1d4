"""A rule's glob against a file's path: what pathspec's GitIgnoreSpec decides, in time linear in
the path (pathspec's regular expressions take minutes on some paths of a few thousand characters)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from corpus.conventions import matches
from corpus.globs import Globs, InvalidGlob

TOKENS = ["a", "b", "ab", "*", "?", "**", "[ab]", "[]a]", "[!a]", "\\*", "x*y", "*a*", "a?", "[", ""]
NAMES = ["a", "b", "ab", "ba", "aa", "x", "xay", "a*", "[", "]"]


@st.composite
def lines(draw: st.DrawFn) -> list[str]:
    """A few lines of gitignore syntax, from pieces that meet at `/`, with the ends that change
    what a pattern means (a leading `/`, a trailing `/`, `!`)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        segments = draw(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(TOKENS)), min_size=1, max_size=4))
        line = "/".join(a + b for a, b in segments)
        line = ("/" if draw(st.booleans()) else "") + line + ("/" if draw(st.booleans()) else "")
        out.append(("!" if draw(st.integers(0, 5)) == 0 else "") + line)
    return out


@pytest.mark.filterwarnings("ignore::FutureWarning")  # `[[ab]`: "possible nested set", to both
@given(patterns=lines(), paths=st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5), min_size=1))
def test_it_decides_as_pathspec_does(patterns: list[str], paths: list[list[str]]) -> None:
    try:
        spec = GitIgnoreSpec.from_lines(patterns, backend="simple")
    except Exception:  # not gitignore syntax for pathspec: nor here
        try:
            Globs.of(patterns)
        except InvalidGlob:
            return
        raise AssertionError(f"{patterns} is read here, and not by pathspec") from None
    globs = Globs.of(patterns)
    for names in paths:
        rel = "/".join(names)
        if any("[!" in p for p in patterns) and "/" in rel:
            continue  # pathspec's `[!a]` crosses a `/`; git's does not, nor does this
        assert globs.match(rel) == spec.match_file(rel), (patterns, rel)


def test_a_bracket_never_crosses_a_folder_as_in_git() -> None:
    assert GitIgnoreSpec.from_lines(["a[!x]b"]).match_file("a/b")  # pathspec's expression
    assert not matches("a[!x]b", "a/b") and matches("a[!x]b", "top/ayb")


def test_many_stars_in_one_name_take_one_pass() -> None:
    assert not matches("*a*a*a*a*b", "a" * 255)
    assert matches("*a*a*a*a*b", "a" * 254 + "b")


def lines_run(work: Callable[[], object]) -> int:
    """How many lines of Python `work` runs: the work done, counted without a clock."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


def test_the_work_grows_with_the_paths_length_not_its_square() -> None:
    """`**/a/**/b/**/c/**/d/**/*.ts` against a path of `a/b/c/d/` 60 times over and long names:
    pathspec's expression took 24 s; here twice the path is about twice the work."""
    glob = "**/a/**/b/**/c/**/d/**/*.ts"

    def path(times: int) -> str:
        return "a/b/c/d/" * times + "/".join(["y" * 250] * 6) + "/x.py"

    matches(glob, "a/x.ts")  # compiled once, before counting
    small, large = lines_run(lambda: matches(glob, path(30))), lines_run(lambda: matches(glob, path(60)))
    assert large < 2.3 * small, (small, large)
    assert matches(glob, "a/b/c/d/x.ts") and not matches(glob, path(60))
