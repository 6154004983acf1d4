"""The links benchmark runs end to end on one small tree, so it cannot rot (no timing is asserted)."""

from __future__ import annotations

import pytest

from bench.links import main
from tests.bench import needs_documents


@needs_documents
def test_the_links_benchmark_prints_a_row_for_the_tree_asked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--only", "httpx"]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| httpx |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "23" and int(cells[2]) > 0 and cells[-1].endswith("x")
