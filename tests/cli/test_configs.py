"""One config file read, edited in memory and rendered back (`cli.configs`), on its own: parsing and
its refusals, rendering, our server entry and hook handlers in and out of a parsed file, and one
file's change (left as it is when its meaning would not change, deleted when only ours was in it).
What each client's files are, and the command on real projects, is `test_setup.py`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from cli import configs
from clients import entries
from clients.entries import HOOK, SERVER, ConfigFile, Refused

ENTRY = {"command": "agents-context", "args": ["--project", "/p"]}
OURS = {"type": "command", "command": f"{HOOK} claude-code", "timeout": 10}
THEIRS = {"type": "command", "command": "their-linter --fix", "timeout": 5}
EVENTS = (("SessionStart", "startup"), ("PreToolUse", "Bash"))


def refusal(call: Any, *args: Any) -> str:
    with pytest.raises(Refused) as raised:
        call(*args)
    message = str(raised.value)
    assert "\n" not in message, "one sentence on one line"
    return message


# --- reading and parsing -------------------------------------------------------------------------


def test_a_missing_file_reads_as_none_and_empty_json_as_an_empty_object(tmp_path: Path) -> None:
    assert configs.read(tmp_path / "absent.json") is None
    assert configs.parse(tmp_path / "a.json", " \n", toml=False) == {}


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": "\xff"}')
    message = refusal(configs.read, path)
    assert message == f"{path} is not UTF-8 text, so nothing was written"


def test_json_that_does_not_parse_is_refused_with_where_and_why(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    message = refusal(configs.parse, path, '{"servers": {,}\n', False)
    assert message.startswith(f"{path} is not valid JSON: ") and "line 1, column" in message
    assert message.endswith("so nothing was written")
    assert "(comments are not JSON)" in refusal(configs.parse, path, '{\n  // mine\n  "servers": {}\n}\n', False)


def test_json_that_holds_no_object_is_refused_naming_what_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    expected = f"{path} holds a list, not a JSON object, so nothing was written"
    assert refusal(configs.parse, path, "[]", False) == expected
    assert "holds a number" in refusal(configs.parse, path, "3", False)


def test_toml_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert refusal(configs.parse, path, "[mcp_servers\nx = \n", True).startswith(f"{path} is not valid TOML: ")


def test_plain_unwraps_toml_to_compare_meaning_not_layout() -> None:
    doc = configs.parse(Path("c.toml"), "# note\na = [1, 2]  # two\n[t]\nk = 'v'\n", toml=True)
    assert entries.plain(doc) == {"a": [1, 2], "t": {"k": "v"}} and type(entries.plain(doc)) is dict
    assert entries.plain({"a": 1}) == {"a": 1} and entries.plain(3) == 3


# --- rendering -----------------------------------------------------------------------------------


def test_json_is_rendered_two_space_indented_in_the_users_key_order_with_a_final_newline() -> None:
    text = configs.render({"zeta": 1, "servers": {"é": True}}, toml=False)
    assert text == '{\n  "zeta": 1,\n  "servers": {\n    "é": true\n  }\n}\n'


def test_toml_is_rendered_with_its_comments_and_one_final_newline() -> None:
    doc = configs.parse(Path("c.toml"), '# top\nmodel = "o3"  # the model\n\n\n', toml=True)
    assert configs.render(doc, toml=True) == '# top\nmodel = "o3"  # the model\n'
    assert configs.render(tomlkit.document(), toml=True) == ""


def test_toml_tomlkit_cannot_lay_out_gets_our_table_appended_as_text_else_is_refused() -> None:
    path, dotted = Path("config.toml"), 'mcp_servers.theirs.command = "x"\nmodel = "m"\n'
    part = entries.server_part("mcp_servers", ENTRY, entries.toml_tables)
    appended = ConfigFile("config.toml", (part,), toml=True, appended={"mcp_servers": {SERVER: ENTRY}})
    doc = configs.parse(path, dotted, toml=True)
    part.add(doc)
    text = configs.written(path, dotted, doc, appended, remove=False)
    assert text == dotted + '\n[mcp_servers.agents-context]\ncommand = "agents-context"\nargs = ["--project", "/p"]\n'
    message = refusal(configs.written, path, dotted, doc, ConfigFile("config.toml", (part,), toml=True), False)
    assert (
        message
        == f"{path} is laid out in a way agents-context cannot edit without changing its meaning, so nothing was written"
    )


def test_a_rewritten_file_keeps_its_byte_order_mark_and_crlf_line_endings() -> None:
    assert configs.dressed('{\n  "a": 1\n}\n', '\ufeff{"b": 2}\r\n') == '\ufeff{\r\n  "a": 1\r\n}\r\n'
    assert configs.dressed("a = 1\r\nb = 2\n", "a = 1\r\n") == "a = 1\r\nb = 2\r\n"
    assert configs.dressed("{}\n", "{}\n") == "{}\n" and configs.dressed("{}\n", None) == "{}\n"


# --- our entries in and out of a parsed file ----------------------------------------------------


def test_our_server_entry_goes_in_beside_theirs_and_comes_out_with_the_key_it_leaves_empty() -> None:
    part = entries.server_part("mcpServers", ENTRY)
    doc: dict[str, Any] = {"mcpServers": {"theirs": {"command": "x"}}}
    part.add(doc)
    assert doc == {"mcpServers": {"theirs": {"command": "x"}, SERVER: ENTRY}}
    part.remove(doc)
    assert doc == {"mcpServers": {"theirs": {"command": "x"}}}
    alone: dict[str, Any] = {"other": 1}
    part.add(alone)
    part.remove(alone)
    assert alone == {"other": 1}


def test_a_users_keys_in_our_server_entry_are_kept_and_ours_updated() -> None:
    doc: dict[str, Any] = {"mcpServers": {SERVER: {"command": "old", "args": [], "env": {"A": "1"}}}}
    entries.server_part("mcpServers", ENTRY).add(doc)
    assert doc["mcpServers"][SERVER] == {**ENTRY, "env": {"A": "1"}}


def test_a_wrong_kind_of_value_where_ours_go_is_refused() -> None:
    part = entries.server_part("mcpServers", ENTRY)
    assert refusal(part.add, {"mcpServers": ["theirs"]}) == '"mcpServers" is a list, not an object'
    hooks = entries.grouped_hooks(EVENTS, OURS)
    assert refusal(hooks.add, {"hooks": {"PreToolUse": {"matcher": "Bash"}}}) == '"PreToolUse" is an object, not a list'


def test_grouped_hooks_add_one_group_per_event_once_and_remove_only_ours() -> None:
    part = entries.grouped_hooks(EVENTS, OURS)
    doc: dict[str, Any] = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}]}, "theme": "dark"}
    part.add(doc)
    added = {
        "SessionStart": [{"matcher": "startup", "hooks": [OURS]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}, {"matcher": "Bash", "hooks": [OURS]}],
    }
    assert doc == {"hooks": added, "theme": "dark"}
    part.add(doc)
    assert doc == {"hooks": added, "theme": "dark"}, "a second add changes nothing"
    part.remove(doc)
    assert doc == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}]}, "theme": "dark"}


def test_an_older_hook_of_ours_is_replaced_not_doubled() -> None:
    stale = {"type": "command", "command": f"/old/bin/{HOOK} claude-code", "timeout": 3}
    doc: dict[str, Any] = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [stale, THEIRS]}]}}
    entries.grouped_hooks((("PreToolUse", "Bash"),), OURS).add(doc)
    assert doc["hooks"]["PreToolUse"] == [{"matcher": "Bash", "hooks": [THEIRS]}, {"matcher": "Bash", "hooks": [OURS]}]


def test_flat_hooks_start_a_file_at_version_1_and_leave_it_there_when_removed() -> None:
    handler = {"command": f"{HOOK} cursor", "timeout": 10}
    part = entries.flat_hooks((("sessionStart", handler),))
    doc: dict[str, Any] = {}
    part.add(doc)
    assert doc == {"version": 1, "hooks": {"sessionStart": [handler]}}
    theirs = {"version": 1, "hooks": {"sessionStart": [{"command": "theirs"}]}}
    mixed: dict[str, Any] = {"version": 1, "hooks": {"sessionStart": [{"command": "theirs"}]}}
    part.add(mixed)
    assert mixed["hooks"]["sessionStart"] == [{"command": "theirs"}, handler]
    part.remove(mixed)
    part.remove(doc)
    assert mixed == theirs and doc == {"version": 1}


def test_our_server_entry_in_a_toml_file_is_a_table_of_its_own() -> None:
    doc = configs.parse(Path("c.toml"), '[mcp_servers.theirs]\ncommand = "x"\n', toml=True)
    entries.server_part("mcp_servers", ENTRY, entries.toml_tables).add(doc)
    text = configs.render(doc, toml=True)
    assert text == (
        '[mcp_servers.theirs]\ncommand = "x"\n\n'
        '[mcp_servers.agents-context]\ncommand = "agents-context"\nargs = ["--project", "/p"]\n'
    )
    fresh = tomlkit.document()
    entries.server_part("mcp_servers", ENTRY, entries.toml_tables).add(fresh)
    assert configs.render(fresh, toml=True).startswith("[mcp_servers.agents-context]\n")


# --- one file's change ---------------------------------------------------------------------------


def test_a_file_whose_meaning_would_not_change_is_left_byte_for_byte(tmp_path: Path) -> None:
    text = '{"mcpServers":   {"agents-context": {"command": "agents-context", "args": ["--project", "/p"]}}}'
    (tmp_path / ".mcp.json").write_text(text, encoding="utf-8")
    change = configs.file_change(tmp_path, ConfigFile(".mcp.json", (entries.server_part("mcpServers", ENTRY),)), False)
    assert change.before == change.after == text and not change.changed


def test_a_new_file_is_created_and_a_file_of_only_ours_is_deleted_when_removed(tmp_path: Path) -> None:
    file = ConfigFile(".cursor/mcp.json", (entries.server_part("mcpServers", ENTRY),))
    created = configs.file_change(tmp_path, file, remove=False)
    assert (created.path, created.relative, created.before) == (tmp_path / ".cursor/mcp.json", ".cursor/mcp.json", None)
    assert created.after == configs.render({"mcpServers": {SERVER: ENTRY}}, toml=False)
    created.path.parent.mkdir()
    created.path.write_text(created.after or "", encoding="utf-8")
    removed = configs.file_change(tmp_path, file, remove=True)
    assert removed.before == created.after and removed.after is None and removed.changed


def test_removing_from_a_missing_file_changes_nothing(tmp_path: Path) -> None:
    change = configs.file_change(tmp_path, ConfigFile("a.json", (entries.server_part("mcpServers", ENTRY),)), True)
    assert (change.before, change.after, change.changed) == (None, None, False)


def test_a_file_holding_only_what_counts_as_empty_is_deleted(tmp_path: Path) -> None:
    handler = {"command": f"{HOOK} cursor", "timeout": 10}
    file = ConfigFile("hooks.json", (entries.flat_hooks((("sessionStart", handler),)),), empty=({}, {"version": 1}))
    (tmp_path / "hooks.json").write_text(configs.render({"version": 1, "hooks": {"sessionStart": [handler]}}, False))
    assert configs.file_change(tmp_path, file, remove=True).after is None


def test_a_refused_part_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": 3}\n', encoding="utf-8")
    file = ConfigFile(".mcp.json", (entries.server_part("mcpServers", ENTRY),))
    message = refusal(configs.file_change, tmp_path, file, False)
    assert message == (
        f'{tmp_path / ".mcp.json"} cannot take our entries: "mcpServers" is a number, not an object, '
        "so nothing was written"
    )


def test_meaning_is_compared_with_types_so_1_1_0_and_true_differ() -> None:
    assert not configs.same(1, True) and not configs.same(1, 1.0) and not configs.same({"a": 0}, {"a": False})
    assert configs.same({"a": [1, float("nan")]}, {"a": [1, float("nan")]}) and not configs.same([1], [1, 2])


@pytest.mark.parametrize(
    ("config", "kept"),
    [
        ("", ""),
        ('model = "m"\n', 'model = "m"\n'),
        ("[mcp_servers]\n", "[mcp_servers]\n"),
        ("[mcp_servers]\n# mine\n\n[profiles.x]\nm = 1\n", "[mcp_servers]\n# mine\n\n[profiles.x]\nm = 1\n"),
        ("mcp_servers = {}\n", "mcp_servers = {}\n"),
    ],
    ids=["nothing", "no-table", "empty-table", "table-with-a-comment", "inline-table"],
)
def test_remove_takes_out_only_the_toml_table_setup_made(tmp_path: Path, config: str, kept: str) -> None:
    """Setup writes no `[mcp_servers]` header: a table with one, or an inline table, is the user's."""
    part = entries.server_part("mcp_servers", ENTRY, entries.toml_tables)
    file = ConfigFile("config.toml", (part,), toml=True, appended={"mcp_servers": {SERVER: ENTRY}})
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    added = configs.file_change(tmp_path, file, remove=False)
    (tmp_path / "config.toml").write_text(added.after or "", encoding="utf-8")
    removed = configs.file_change(tmp_path, file, remove=True)
    assert removed.after == (kept or None), "a file left with nothing goes"


def test_a_toml_file_of_only_ours_is_deleted_when_removed(tmp_path: Path) -> None:
    entry = {"mcp_servers": {SERVER: ENTRY}}
    file = ConfigFile(
        "config.toml", (entries.server_part("mcp_servers", ENTRY, entries.toml_tables),), toml=True, appended=entry
    )
    created = configs.file_change(tmp_path, file, remove=False)
    assert created.after is not None and tomlkit.parse(created.after).unwrap() == entry
    created.path.write_text(created.after, encoding="utf-8")
    assert configs.file_change(tmp_path, file, remove=True).after is None


LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
VALUES = st.recursive(LEAVES, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(), kids, max_size=3))


@settings(deadline=None, max_examples=150)
@given(doc=st.dictionaries(st.text(max_size=12) | st.just("mcpServers"), VALUES, max_size=4), bom=st.booleans())
def test_any_json_object_takes_our_entry_and_gives_it_back_meaning_what_it_meant(
    doc: dict[str, Any], bom: bool
) -> None:
    """Written as setup writes it, any object reads back as itself plus our entry, or is refused in
    one sentence; taking ours out again gives back what it meant (an empty `mcpServers` goes too)."""
    file = ConfigFile(".mcp.json", (entries.server_part("mcpServers", ENTRY),))
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / ".mcp.json").write_text(("\ufeff" if bom else "") + json.dumps(doc), encoding="utf-8")
        servers = doc.get("mcpServers")
        if servers is not None and not isinstance(servers, dict):
            assert "cannot take our entries" in refusal(configs.file_change, project, file, False)
            return
        theirs = {k: v for k, v in (servers or {}).items() if k != SERVER}
        added = configs.file_change(project, file, remove=False)
        assert added.after is not None and added.after.startswith("\ufeff") is bom
        wanted = {**doc, "mcpServers": {**theirs, SERVER: ENTRY}}
        assert configs.same(json.loads(added.after.removeprefix("\ufeff")), wanted)
        (project / ".mcp.json").write_text(added.after, encoding="utf-8")
        removed = configs.file_change(project, file, remove=True)
        left = {**doc, "mcpServers": theirs} if theirs else {k: v for k, v in doc.items() if k != "mcpServers"}
        assert (removed.after is None) == (not left)
        assert removed.after is None or configs.same(json.loads(removed.after.removeprefix("\ufeff")), left)
