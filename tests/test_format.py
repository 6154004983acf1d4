"""The BODY + STATUS grammar, byte for byte."""

from __future__ import annotations

from retrieval.format import render_context, render_docs
from retrieval.retriever import RetrievedDocument
from retrieval.units import Unit


def section(path: str, heading: str, text: str, score: float, start: int = 1) -> RetrievedDocument:
    end = start + text.count("\n")
    unit = Unit(
        path=path,
        uri="agents://" + path.split("/", 1)[1],
        text=text,
        start_line=start,
        end_line=end,
        heading=heading,
        trail=(heading,),
    )
    return RetrievedDocument(unit, score)


def window(path: str, chunk: int, text: str, score: float) -> RetrievedDocument:
    unit = Unit(path=path, uri="u", text=text, start_line=1, end_line=1 + text.count("\n"), chunk_id=chunk)
    return RetrievedDocument(unit, score)


def test_context_hits_are_blocks_separated_by_a_blank_line_then_status() -> None:
    docs = [
        section(".AGENTS/security.md", "Secrets", "## Secrets\nNever print .env.", 4.2149),
        section(".AGENTS/deploy.md", "Deploy", "# Deploy\nShip on green.", 1.005),
    ]
    rendered = render_context("secrets", docs)
    assert rendered.text == (
        '<context path=".AGENTS/security.md" section="Secrets" score="4.21">\n'
        "## Secrets\nNever print .env.\n"
        "</context>\n"
        "\n"
        '<context path=".AGENTS/deploy.md" section="Deploy" score="1.00">\n'
        "# Deploy\nShip on green.\n"
        "</context>\n"
        "\n"
        "[agents-context method=bm25 hits=2]"
    )
    assert [h.heading for h in rendered.result.hits] == ["Secrets", "Deploy"]
    assert rendered.result.method == "bm25"


def test_context_miss_names_the_query() -> None:
    assert render_context("rate limits", []).text == (
        "no matching context for: rate limits\n\n[agents-context method=bm25 hits=0]"
    )


def test_attribute_values_are_xml_escaped() -> None:
    doc = section('.AGENTS/a&b "q".md', '<Tags> & "quotes"', "# x", 1.0)
    first_line = render_context("x", [doc]).text.split("\n")[0]
    assert first_line == (
        '<context path=".AGENTS/a&amp;b &quot;q&quot;.md" '
        'section="&lt;Tags&gt; &amp; &quot;quotes&quot;" score="1.00">'
    )


def test_whole_hits_are_dropped_from_the_end_to_fit_the_cap() -> None:
    big = "x" * 6000
    docs = [section(f".AGENTS/{n}.md", n, f"# {n}\n{big}", 3.0 - i) for i, n in enumerate("abcd")]
    text = render_context("q", docs).text
    assert len(text.encode()) <= 16384
    assert text.count("<context ") == 2
    assert text.endswith("</context>\n\n[2 more hits left out]\n\n[agents-context method=bm25 hits=2]")


def test_a_first_hit_too_large_alone_is_cut_at_a_line_boundary() -> None:
    lines = [f"line {i} " + "y" * 90 for i in range(2, 400)]
    doc = section(".AGENTS/long.md", "Long", "# Long\n" + "\n".join(lines), 2.0, start=10)
    rendered = render_context("q", [doc, section(".AGENTS/b.md", "B", "# B", 1.0)])
    text = rendered.text
    assert len(text.encode()) <= 16384
    body_lines = text.split("\n")
    marker = next(line for line in body_lines if line.startswith("[... cut at line "))
    last_kept = int(marker.split()[4])
    assert marker == f"[... cut at line {last_kept} of 10-408]"
    kept_text = body_lines[body_lines.index(marker) - 1]
    assert kept_text == lines[last_kept - 11]  # whole lines only: the last kept line is intact
    assert text.endswith(
        f"{marker}\n</context>\n\n[1 more hits left out]\n\n[agents-context method=bm25 hits=1]"
    )
    assert 16384 - len(text.encode()) < 120  # it used the room it had
    assert rendered.result.hits[0].text.endswith(marker)


def test_one_enormous_line_is_cut_inside_the_line() -> None:
    doc = section(".AGENTS/one.md", "(intro)", "é" * 50_000, 1.0)
    text = render_context("q", [doc]).text
    assert len(text.encode()) <= 16384
    assert "[... cut at line 1 of 1-1]\n</context>" in text


def test_docs_hits_have_seed_001_blocks_and_a_cost_footer() -> None:
    docs = [
        window("docs/a.md", 0, "alpha text\nsecond line", 3.14159),
        window(".AGENTS/b.md", 2, "beta", 0.5),
    ]
    text = render_docs(docs).text
    chars = len("alpha text\nsecond line") + len("beta")
    assert text == (
        "--- docs/a.md#0 (score=3.14) ---\nalpha text\nsecond line\n"
        "\n"
        "--- .AGENTS/b.md#2 (score=0.50) ---\nbeta\n"
        "\n"
        f"[2 hits, ~{chars} chars (~{chars // 4} tokens)]\n"
        "\n"
        "[agents-context method=bm25 hits=2]"
    )


def test_docs_footer_says_hits_even_for_one_and_miss_is_no_results() -> None:
    one = render_docs([window("docs/a.md", 0, "12345678", 1.0)]).text
    assert "\n\n[1 hits, ~8 chars (~2 tokens)]\n\n" in one
    assert render_docs([]).text == "(no results)\n\n[agents-context method=bm25 hits=0]"
