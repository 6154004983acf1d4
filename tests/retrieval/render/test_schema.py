"""The search tools' output schema: the embedded search dataclasses, plain JSON dumps, and UTC times."""

from __future__ import annotations

import json
from typing import Any

import pytest

from corpus.catalog import Change
from retrieval.render.grammar import utc
from retrieval.render.schema import Hit, LastUpdate, SearchResult
from retrieval.search.links import LinkTo
from retrieval.search.nearest import Nearest


@pytest.fixture
def definitions() -> dict[str, Any]:
    defs: dict[str, Any] = SearchResult.model_json_schema()["$defs"]
    return defs


def test_link_fields_are_described_by_their_attribute_docstrings(definitions: dict[str, Any]) -> None:
    link = definitions["LinkTo"]
    assert {name: field["description"] for name, field in link["properties"].items()} == {
        "text": "The link text.",
        "path": "Display path of the linked file.",
        "uri": "URI of the linked section (#anchor) or file.",
    }
    assert link["required"] == ["text", "path", "uri"]


@pytest.mark.parametrize("name", ["LinkTo", "Nearest"])
def test_the_search_dataclasses_carry_no_description_of_their_own(definitions: dict[str, Any], name: str) -> None:
    assert "description" not in definitions[name]
    assert definitions[name]["title"] == name


def test_hits_link_to_and_results_list_nearest_through_their_definitions() -> None:
    schema = SearchResult.model_json_schema()
    assert schema["properties"]["nearest"]["items"] == {"$ref": "#/$defs/Nearest"}
    assert schema["$defs"]["Hit"]["properties"]["links"]["items"] == {"$ref": "#/$defs/LinkTo"}
    assert set(schema["$defs"]["Nearest"]["properties"]) == {
        "path",
        "uri",
        "heading",
        "start_line",
        "end_line",
        "similarity",
    }


def test_a_result_with_nearest_entries_and_links_dumps_to_plain_json() -> None:
    link = LinkTo("Rollback", ".AGENTS/services/deploy.md", "agents://services/deploy.md#rollback")
    hit = Hit(
        rank=1,
        path=".AGENTS/security.md",
        heading="Secrets",
        score=4.25,
        start_line=5,
        end_line=7,
        text="## Secrets",
        uri="agents://security.md",
        section_uri="agents://security.md#secrets",
        citation=".AGENTS/security.md:5-7 (Security > Secrets)",
        links=[link],
    )
    near = Nearest(".AGENTS/ops.md", "agents://ops.md#rate-limiting", "Ops > Rate limiting", 4, 9, 0.8)
    no_heading = Nearest(".AGENTS/limits.md", "agents://limits.md", None, None, None, 0.5)
    dumped = SearchResult(method="outline", hits=[hit], nearest=[near, no_heading]).model_dump(mode="json")
    assert dumped["nearest"] == [
        {
            "path": ".AGENTS/ops.md",
            "uri": "agents://ops.md#rate-limiting",
            "heading": "Ops > Rate limiting",
            "start_line": 4,
            "end_line": 9,
            "similarity": 0.8,
        },
        {
            "path": ".AGENTS/limits.md",
            "uri": "agents://limits.md",
            "heading": None,
            "start_line": None,
            "end_line": None,
            "similarity": 0.5,
        },
    ]
    assert dumped["hits"][0]["links"] == [
        {"text": "Rollback", "path": ".AGENTS/services/deploy.md", "uri": "agents://services/deploy.md#rollback"}
    ]
    assert json.loads(json.dumps(dumped)) == dumped  # nothing but JSON types


def test_a_dumped_result_validates_back_to_the_same_dataclasses() -> None:
    near = Nearest(".AGENTS/ops.md", "agents://ops.md", None, None, None, 0.25)
    result = SearchResult(method="outline", hits=[], nearest=[near])
    again = SearchResult.model_validate(result.model_dump(mode="json"))
    assert again.nearest == [near]
    assert isinstance(again.nearest[0], Nearest)


def test_utc_writes_iso_8601_with_milliseconds_and_a_z() -> None:
    assert utc(0) == "1970-01-01T00:00:00.000Z"
    assert utc(1_800_000_000.25) == "2027-01-15T08:00:00.250Z"
    assert utc(1_700_000_000.5) == "2023-11-14T22:13:20.500Z"


def test_the_last_update_sorts_its_paths_and_writes_its_time_in_utc() -> None:
    change = Change(
        added=frozenset({".AGENTS/z.md", ".AGENTS/a.md", ".AGENTS/m/b.md"}),
        changed=frozenset({"docs/y.md", ".AGENTS/x.md"}),
        removed=frozenset(),
        at=1_800_000_000.25,
    )
    assert LastUpdate.of(change).model_dump() == {
        "at": "2027-01-15T08:00:00.250Z",
        "added": [".AGENTS/a.md", ".AGENTS/m/b.md", ".AGENTS/z.md"],
        "changed": [".AGENTS/x.md", "docs/y.md"],
        "removed": [],
    }
