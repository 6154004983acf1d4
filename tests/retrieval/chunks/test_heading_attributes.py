"""MkDocs / Pandoc heading attributes (`## Use CORSMiddleware { #use-corsmiddleware }`): never part
of a section's name; the id they give is its anchor; a heading folds alike however the caller
writes inline markup (so read_context finds a section by it: tests/promises/test_citations.py)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.chunks.anchors import anchors
from retrieval.chunks.sections import folded_heading, heading_attributes, sections
from retrieval.chunks.units import section_units


@pytest.mark.parametrize(
    ("written", "name", "given"),
    [
        ("Use `CORSMiddleware` { #use-corsmiddleware }", "Use `CORSMiddleware`", "use-corsmiddleware"),
        ("Top {#top}", "Top", "top"),
        ("Top{#top}", "Top", "top"),
        ("Install { #install .tabbed data-x=1 }", "Install", "install"),
        ('Install {: #setup .note title="Two words" }', "Install", "setup"),
        ("Setup {.unnumbered}", "Setup", None),
        ("Setup {.class key=val}", "Setup", None),
        ("Appendix {-}", "Appendix", None),
        ("  Spaced   out   {#sp}  ", "Spaced out", "sp"),
        ("Options {json}", "Options {json}", None),  # not attributes: part of the name
        ("Map {a: 1}", "Map {a: 1}", None),
        ('{"hasApp":true}', '{"hasApp":true}', None),
        ("Empty {}", "Empty {}", None),
        ("Bare {#}", "Bare {#}", None),
        ("Use {braces} {#b}", "Use {braces}", "b"),
        ("Plain heading", "Plain heading", None),
    ],
)
def test_an_attribute_block_leaves_the_name_and_gives_its_id(written: str, name: str, given: str | None) -> None:
    assert heading_attributes(written) == (name, given)


def test_a_long_heading_of_braces_is_read_in_linear_time() -> None:
    started = time.monotonic()
    for hostile in ("{#a" * 50_000 + " }", "{#a " * 50_000 + "x}", "{ " + "#a " * 50_000 + "}", "{" + "." * 100_000):
        heading_attributes(hostile)
    assert time.monotonic() - started < 5


def test_sections_drop_the_block_and_keep_the_id() -> None:
    text = "# Guide {#guide}\n\n## Use `CORSMiddleware` { #use-corsmiddleware }\n\nbody\n\n## Notes {.aside}\n"
    found = sections(text)
    assert [(s.heading, s.trail, s.anchor_id) for s in found] == [
        ("Guide", ("Guide",), "guide"),
        ("Use `CORSMiddleware`", ("Guide", "Use `CORSMiddleware`"), "use-corsmiddleware"),
        ("Notes", ("Guide", "Notes"), None),
    ]


def test_setext_headings_take_attributes_too() -> None:
    (found,) = sections("Title { #the-title }\n=====\ntext\n")
    assert (found.heading, found.anchor_id) == ("Title", "the-title")


def test_the_given_id_is_the_anchor_and_the_others_step_around_it() -> None:
    units = section_units(
        ".AGENTS/cors.md",
        "agents://cors.md",
        "Intro text.\n\n## Setup\n\na\n\n## Use `CORSMiddleware` { #use-corsmiddleware }\n\nb\n\n"
        "## Configure {#setup}\n\nc\n\n## Setup\n\nd\n\n## Options {.wide}\n\ne\n",
    )
    assert [(u.heading, u.anchor) for u in units] == [
        ("(intro)", "intro"),
        ("Setup", "setup-1"),  # `{#setup}` below is the page's link target: it keeps it
        ("Use `CORSMiddleware`", "use-corsmiddleware"),
        ("Configure", "setup"),
        ("Setup", "setup-2"),
        ("Options", "options"),
    ]
    assert units[2].section_uri == "agents://cors.md#use-corsmiddleware"


@pytest.mark.parametrize(
    ("headings", "given", "expected"),
    [
        (["A", "B"], ["x", "x"], ["x", "x-1"]),  # an id given twice is counted up
        (["A", "B"], ["Setup", None], ["Setup", "b"]),  # as written, case kept
        (["Setup", "B"], [None, "Setup"], ["setup-1", "Setup"]),  # unique ignoring case
        (["A", "B"], ["L12", "a#b"], ["a", "b"]),  # one that names lines, or cannot be an anchor: the slug
        ([None, "A"], [None, "intro"], ["intro", "intro-1"]),  # the intro keeps its anchor
        (["A", "B", "C"], [], ["a", "b", "c"]),
        (["Über", "B"], ["straße", "v1.2:x_y"], ["straße", "v1.2:x_y"]),
    ],
)
def test_anchors_with_given_ids_stay_unique(
    headings: list[str | None], given: list[str | None], expected: list[str]
) -> None:
    assert anchors(headings, given) == expected


_USABLE = {"Setup", "setup", "setup-1", "intro", "Über", "x", "X", "v1.2:x_y"}
_names = st.sampled_from(sorted(_USABLE | {"Setup 1", "L12", "a#b", "?"}))


@given(st.lists(st.tuples(st.one_of(st.none(), _names), st.one_of(st.none(), _names)), max_size=12))
def test_anchors_stay_one_per_section_and_unique_whatever_the_ids(pairs: list[tuple[str | None, str | None]]) -> None:
    """One anchor per section, unique ignoring case; an id that can be an anchor, given first (case
    aside), is the anchor exactly."""
    headings = [None, *(h or "Heading" for h, _ in pairs)]
    ids = [None, *(i for _, i in pairs)]
    found = anchors(headings, ids)
    assert len(found) == len(headings) and found[0] == "intro"
    assert len({a.lower() for a in found}) == len(found)
    for i, wanted in enumerate(ids):
        earlier = {x.lower() for x in ["intro", *(x for x in ids[:i] if x)]}
        if wanted in _USABLE and wanted.lower() not in earlier:
            assert found[i] == wanted


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use `CORSMiddleware`", "use corsmiddleware"),
        ("Use `CORSMiddleware` { #use-corsmiddleware }", "Use CORSMiddleware"),
        ("The *main* **loop**", "the main loop"),
        ("See [the guide](docs/guide.md)", "see the guide"),
        ("`__init__` files", "__init__ files"),
        ("Spaced\tout", "spaced   OUT"),
    ],
)
def test_headings_fold_alike_however_markup_is_written(a: str, b: str) -> None:
    assert folded_heading(a) == folded_heading(b)
