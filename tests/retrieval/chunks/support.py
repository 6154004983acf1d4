"""Random markdown-ish text (headings, fences, front matter markers, blank lines), for the chunker tests."""

from __future__ import annotations

from hypothesis import strategies as st

markdownish = st.lists(
    st.one_of(
        st.sampled_from(["# H1", "## H2", "### H3", "```", "~~~", "---", "===", "", "   ", "> # q"]),
        st.text(alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")),
    ),
    max_size=40,
).map("\n".join)
