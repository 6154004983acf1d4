"""The set-up as the README writes it: the Claude Desktop snippet, placeholders filled in, started
from an unrelated working folder as a client starts it, serves the named project and searches.
And `agents-context setup` run as a user runs it, on files it must not harm: a private or read-only
file, links, a file it cannot write back as it was read, a write that fails midway, `--remove` of
a table the user wrote. Each is refused in one sentence with nothing written, or done exactly."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from cli import setup
from clients.entries import Refused
from tests.conftest import TEST_ENV, write_tree
from tests.helpers import REPO, SCRIPT, SERVER, search, text_of

PROJECT = {
    ".agents/overview.md": "# Shop overview\n\nA small web shop.\n",
    ".agents/payments.md": "# Payments\n\n## Refunds\n\nRefunds go through the ledger service, never the card API.\n",
    "AGENTS.md": "# Agent guide\n\nRun `make check` before every commit.\n",
    "src/api/AGENTS.md": "# API folder\n\nEvery handler validates its input with pydantic.\n",
    ".cursor/rules/endpoints.mdc": (
        "---\ndescription: Endpoint rules\nalwaysApply: true\n---\n# Endpoints\n\n"
        "List endpoints paginate their results with a cursor, never with page numbers.\n"
    ),
}


PASSED_ON = ("UV_", "SSL_", "PIP_", "REQUESTS_CA", "CURL_CA", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "PYENV")
"""What a user's machine may need to reach the package index (certificates, proxies, uv's own
settings), passed on as the user's client passes on its environment."""


def claude_desktop_snippet() -> dict[str, object]:
    """The server entry of the README's Claude Desktop configuration."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Claude Desktop") :]
    block = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert block, "the README's Claude Desktop section has no JSON configuration"
    config = json.loads(block.group(1))
    entry: dict[str, object] = config["mcpServers"]["agents-context"]
    return entry


def filled(args: list[str], project: Path) -> list[str]:
    return [a.replace("/abs/agents-context", str(REPO)).replace("/abs/project", str(project)) for a in args]


def command(name: str) -> list[str]:
    """`uvx` as the snippet says; where only uv's module is installed, the same command through it."""
    found = shutil.which(name)
    if found:
        return [found]
    if name == "uvx":
        uv = shutil.which("uv")
        return [uv, "tool", "run"] if uv else [sys.executable, "-m", "uv", "tool", "run"]
    pytest.fail(f"{name} is not installed")


@pytest.mark.anyio
async def test_the_claude_desktop_snippet_serves_the_named_project_from_any_folder(tmp_path: Path) -> None:
    entry = claude_desktop_snippet()
    assert entry["command"] == "uvx"
    args = entry["args"]
    assert isinstance(args, list) and "/abs/agents-context" in args and "/abs/project" in args
    project = write_tree(tmp_path / "shop", PROJECT)
    elsewhere = tmp_path / "client-home"  # clients start servers in their own folder
    elsewhere.mkdir()
    head, *rest = command("uvx")
    env = {**TEST_ENV, **{k: v for k, v in os.environ.items() if k.upper().startswith(PASSED_ON)}}
    params = StdioServerParameters(command=head, args=[*rest, *filled(args, project)], cwd=str(elsewhere), env=env)
    async with Client(params) as client:
        refunds = await search(client, "how are refunds made")
        assert refunds.startswith('<context path=".agents/payments.md" section="Refunds"')
        commit = await search(client, "what to run before a commit")
        assert '<context path="shop/AGENTS.md" section="Agent guide"' in commit
        paging = await search(client, "How should list endpoints paginate their results?")
        assert paging.startswith('<context path="shop/.cursor/rules/endpoints.mdc" section="Endpoints"')
        assert 'pinned="true"' in paging.split("\n", 1)[0]
        status = text_of(await client.call_tool("context_status", {}))
    assert f"(agents, {project.resolve() / '.agents'})" in status and f"(agents, {project.resolve()})" in status
    assert str(REPO) not in status  # the clone's own .AGENTS is not mixed in


def test_every_client_snippet_starts_the_same_command() -> None:
    """The seven clients' snippets all run what the Claude Desktop test above starts (VS Code names
    the project by its own variable)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Connect your client") : readme.index("### Over HTTP")]
    want = ["--from", "/abs/agents-context", "agents-context", "--project"]
    commands: dict[str, list[str]] = {}
    for client, body in re.findall(r"### (.+?)\n(.*?)(?=\n### |\Z)", section, re.DOTALL):
        for lang, block in re.findall(r"```(json|toml|bash)\n(.*?)\n```", body, re.DOTALL):
            if lang == "json":
                servers = json.loads(block)
                (entry,) = next(iter(servers.values())).values()
                commands[client] = [entry["command"], *entry["args"]]
            elif lang == "toml":
                (args,) = re.findall(r"^args = (\[.*\])$", block, re.MULTILINE)
                assert re.search(r'^command = "uvx"$', block, re.MULTILINE)
                commands[client] = ["uvx", *json.loads(args)]
            else:
                commands[client] = block.splitlines()[0].split(" -- ", 1)[1].split()
    assert sorted(commands) == ["Claude Code", "Claude Desktop", "Codex", "Cursor", "Gemini CLI", "VS Code", "Zed"]
    for client, argv in commands.items():
        assert argv[0] == "uvx" and argv[1:-1] == want, client
        assert argv[-1] == ("${workspaceFolder}" if client == "VS Code" else "/abs/project"), client


# --- setup on files it must not harm ------------------------------------------------------------

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes, links and named pipes")
PRIVATE = {
    ".mcp.json": '{"mcpServers": {"db": {"command": "db-mcp", "env": {"DB_PASSWORD": "hunter2"}}}}\n',
    ".codex/config.toml": '[mcp_servers.db]\ncommand = "db-mcp"\nenv = { DB_PASSWORD = "hunter2" }\n',
    ".gemini/settings.json": '{"mcpServers": {"db": {"command": "db-mcp", "env": {"DB_PASSWORD": "hunter2"}}}}\n',
}
CLIENT_OF = {".mcp.json": "claude-code", ".codex/config.toml": "codex", ".gemini/settings.json": "gemini-cli"}


def setup_cli(project: Path, client: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """`agents-context setup` through its console script, as a user runs it (a minute at most: a
    named pipe must not hold it)."""
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, SERVER]
    argv = [*command, "setup", client, "--project", str(project), "--command", "agents-context", *flags]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def on_disk(root: Path) -> dict[str, object]:
    """Every path under `root`, links not followed: a file's bytes and mode, a link's target, a
    folder's mode, a pipe."""
    found: dict[str, object] = {}
    for folder, names, files in os.walk(root):
        for name in [*names, *files]:
            path = Path(folder, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                found[path.relative_to(root).as_posix()] = ("link", str(path.readlink()))
            elif stat.S_ISREG(st.st_mode):
                found[path.relative_to(root).as_posix()] = (path.read_bytes(), stat.S_IMODE(st.st_mode))
            else:
                found[path.relative_to(root).as_posix()] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return found


def refused(done: subprocess.CompletedProcess[str], *said: str) -> None:
    """Exit 2 and one sentence on one line, which says each of `said`; no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(part in done.stderr for part in said), done.stderr


@posix
@pytest.mark.parametrize("name", list(PRIVATE))
def test_a_private_config_stays_private(tmp_path: Path, name: str) -> None:
    write_tree(tmp_path, {name: PRIVATE[name]})
    (tmp_path / name).chmod(0o600)
    assert setup_cli(tmp_path, CLIENT_OF[name]).returncode == 0
    assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    assert "hunter2" in (tmp_path / name).read_text(encoding="utf-8")
    assert "agents-context" in (tmp_path / name).read_text(encoding="utf-8")


@posix
@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dry-run"])
@pytest.mark.parametrize("name", [".mcp.json", ".claude/settings.json"])
def test_a_read_only_file_is_refused_and_nothing_is_written(tmp_path: Path, name: str, dry_run: bool) -> None:
    write_tree(tmp_path, {name: "{}\n"})
    (tmp_path / name).chmod(0o444)
    before = on_disk(tmp_path)
    done = setup_cli(tmp_path, "claude-code", *(["--dry-run"] if dry_run else []))
    refused(done, f"{tmp_path / name} is read-only", "nothing was written")
    assert on_disk(tmp_path) == before


@posix
def test_a_read_only_folder_stops_every_file(tmp_path: Path) -> None:
    """`.mcp.json` would say a hook delivers the pinned files, and no hook could be written."""
    (tmp_path / ".claude").mkdir(mode=0o555)  # no one may write it: setup writes nothing into it, as root too
    before = on_disk(tmp_path)
    refused(setup_cli(tmp_path, "claude-code"), f"{tmp_path / '.claude'} is read-only", "nothing was written")
    assert on_disk(tmp_path) == before
    (tmp_path / ".claude").chmod(0o755)


@posix
def test_a_linked_config_is_edited_where_it_leads_and_the_link_kept(tmp_path: Path) -> None:
    theirs = '{"mcpServers": {"db": {"command": "db-mcp"}}}\n'
    write_tree(tmp_path, {"shared/mcp.json": theirs, "shared/empty.json": "{}\n"})
    (tmp_path / ".mcp.json").symlink_to("shared/mcp.json")
    (tmp_path / ".claude").symlink_to("shared", target_is_directory=True)
    (tmp_path / "shared/settings.json").symlink_to("empty.json")
    assert setup_cli(tmp_path, "claude-code").returncode == 0
    assert (tmp_path / ".mcp.json").readlink() == Path("shared/mcp.json")
    assert (tmp_path / "shared/settings.json").readlink() == Path("empty.json")
    assert "agents-context" in json.loads((tmp_path / "shared/mcp.json").read_text())["mcpServers"]
    assert "hooks" in json.loads((tmp_path / "shared/empty.json").read_text())
    assert setup_cli(tmp_path, "claude-code", "--remove").returncode == 0
    assert json.loads((tmp_path / "shared/mcp.json").read_text()) == json.loads(theirs)
    assert (tmp_path / "shared/empty.json").read_text() == "{}\n", "a file reached through a link is kept, emptied"
    assert (tmp_path / "shared/settings.json").readlink() == Path("empty.json") and (tmp_path / ".claude").is_symlink()


@posix
@pytest.mark.parametrize("to", ["outside", "missing", "loop", "folder", "named-pipe"])
def test_a_link_that_leads_nowhere_outside_or_to_no_file_is_refused(tmp_path: Path, to: str) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere.json"
    project.mkdir()
    elsewhere.write_text("{}\n")
    targets = {"outside": elsewhere, "missing": project / "gone.json", "loop": project / ".mcp.json"}
    targets |= {"folder": project / "folder", "named-pipe": project / "pipe"}
    (project / "folder").mkdir()
    os.mkfifo(project / "pipe")
    (project / ".mcp.json").symlink_to(targets[to])
    before = on_disk(tmp_path)
    said = {"outside": "outside the project", "missing": "leads nowhere", "loop": "leads nowhere"}
    said |= {"folder": "is a folder, not a file", "named-pipe": "is a named pipe, not a file"}
    refused(setup_cli(project, "claude-code"), str(project / ".mcp.json"), said[to], "nothing was written")
    assert on_disk(tmp_path) == before


@posix
def test_a_hard_linked_config_is_refused_rather_than_parted_from_its_other_names(tmp_path: Path) -> None:
    write_tree(tmp_path, {"backup/mcp.json": "{}\n"})
    os.link(tmp_path / "backup/mcp.json", tmp_path / ".mcp.json")
    before = on_disk(tmp_path)
    refused(setup_cli(tmp_path, "claude-code"), f"{tmp_path / '.mcp.json'} has other hard links")
    assert on_disk(tmp_path) == before


UNWRITABLE = {
    "lone-surrogate": (".mcp.json", '{"mcpServers": {"x": {"command": "a", "args": ["\\ud800"]}}}', "lone surrogate"),
    "100000-deep": (".mcp.json", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests deeper than 100 levels"),
    "1e400": (".mcp.json", '{"timeout": 1e400}', "1e400, too large to write back"),
    "NaN": (".mcp.json", '{"timeout": NaN}', "NaN, which is not JSON"),
    "-Infinity": (".mcp.json", '{"timeout": -Infinity}', "-Infinity, which is not JSON"),
    "5000-digits": (".mcp.json", '{"n": ' + "9" * 5000 + "}", "integer of 5000 digits"),
    "duplicate-key": (".mcp.json", '{"mcpServers": {}, "mcpServers": {"db": {}}}', '"mcpServers" twice'),
    "over-4-MB": (".mcp.json", '{"pad": "' + "x" * 4_100_000 + '"}', "over 4 MB"),
    "nul-byte": (".mcp.json", '{"a": "\x00"}', "not valid JSON"),
    "toml-1000-deep": (".codex/config.toml", "a = " + "[" * 1000 + "]" * 1000 + "\n", "not valid TOML"),
}


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dry-run"])
@pytest.mark.parametrize("case", list(UNWRITABLE))
def test_a_file_setup_could_not_write_back_as_it_was_read_is_refused(tmp_path: Path, case: str, dry_run: bool) -> None:
    name, text, said = UNWRITABLE[case]
    write_tree(tmp_path, {name: text})
    before = on_disk(tmp_path)
    client = "codex" if name.endswith(".toml") else "claude-code"
    done = setup_cli(tmp_path, client, *(["--dry-run"] if dry_run else []))
    refused(done, str(tmp_path / name), said, "nothing was written")
    assert on_disk(tmp_path) == before


@pytest.mark.parametrize("name", [".mcp.json", ".codex/config.toml"])
def test_a_byte_order_mark_and_crlf_line_endings_are_kept(tmp_path: Path, name: str) -> None:
    text = '\ufeff{\r\n  "theme": "dark"\r\n}\r\n' if name.endswith(".json") else '\ufeffmodel = "m"\r\n'
    write_tree(tmp_path, {name: text})
    assert setup_cli(tmp_path, "codex" if name.endswith(".toml") else "claude-code").returncode == 0
    data = (tmp_path / name).read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"agents-context" in data
    assert data.count(b"\n") == data.count(b"\r\n") > 3
    assert setup_cli(tmp_path, "codex" if name.endswith(".toml") else "claude-code", "--remove").returncode == 0
    assert (tmp_path / name).read_bytes().decode("utf-8") == text


def path_max() -> int:
    """The longest path a file may have, plus one (Linux's PATH_MAX); skips the test elsewhere."""
    if sys.platform != "linux":
        pytest.skip("needs Linux's PATH_MAX")
    return os.pathconf("/", "PC_PATH_MAX")


def deep_folder(root: Path, length: int) -> Path:
    """A folder under `root` whose path is `length` characters long, or one less."""
    folder = root
    while len(str(folder)) < length - 1:
        folder /= "d" * min(200, max(1, length - len(str(folder)) - 1))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_write_that_fails_midway_puts_every_file_back(tmp_path: Path) -> None:
    """The project's path is long enough for `.mcp.json` and its temporary file, and for
    `.claude/settings.json`, but not for the temporary file beside that (`.settings.json.*.tmp`):
    the second write fails after the first was made."""
    project = deep_folder(tmp_path, path_max() - 32)
    write_tree(project, {".mcp.json": PRIVATE[".mcp.json"]})
    (project / ".mcp.json").chmod(0o600)
    before = on_disk(project)
    done = setup_cli(project, "claude-code")
    refused(done, f"{project / '.claude/settings.json'} could not be written", "put every file back as it was")
    assert on_disk(project) == before, "files and folders are as they were, and no temporary file is left"


def test_a_path_too_long_to_read_is_refused_in_one_sentence(tmp_path: Path) -> None:
    project = deep_folder(tmp_path, path_max() - 16)  # `.claude/settings.json` is longer than a path may be
    refused(setup_cli(project, "claude-code"), "File name too long", "nothing was written")
    assert on_disk(project) == {}


def test_a_file_changed_between_plan_and_write_is_refused_and_every_file_put_back(tmp_path: Path) -> None:
    write_tree(tmp_path, {".mcp.json": PRIVATE[".mcp.json"]})
    changes = setup.plan("claude-code", tmp_path, setup.launch("agents-context"))
    write_tree(tmp_path, {".claude/settings.json": '{"theme": "dark"}\n'})  # the user, meanwhile
    before = on_disk(tmp_path)
    with pytest.raises(Refused) as raised:
        setup.apply(changes, tmp_path)
    assert str(raised.value) == (
        f"{tmp_path / '.claude/settings.json'} changed while setup ran, so setup put every file back as it was"
    )
    assert on_disk(tmp_path) == before


def test_remove_keeps_a_toml_table_the_user_wrote_with_its_comment(tmp_path: Path) -> None:
    config = 'model = "m"\n\n[mcp_servers]\n# my servers go here\n'
    write_tree(tmp_path, {".codex/config.toml": config})
    assert setup_cli(tmp_path, "codex").returncode == 0
    assert setup_cli(tmp_path, "codex", "--remove").returncode == 0
    assert (tmp_path / ".codex/config.toml").read_text(encoding="utf-8") == config
    assert sorted(on_disk(tmp_path)) == [".codex", ".codex/config.toml"]


def test_remove_takes_an_empty_json_object_with_ours_as_documented(tmp_path: Path) -> None:
    """JSON cannot tell an empty `mcpServers` the user wrote from one setup made: both go."""
    write_tree(tmp_path, {".cursor/mcp.json": '{"mcpServers": {}, "theme": 1}\n'})
    assert setup_cli(tmp_path, "cursor").returncode == 0
    assert setup_cli(tmp_path, "cursor", "--remove").returncode == 0
    assert json.loads((tmp_path / ".cursor/mcp.json").read_text()) == {"theme": 1}


@posix
@pytest.mark.parametrize("project", ["loop", "~no-such-user-here/x", "not-utf8-\udcff", "a-file"])
def test_a_project_that_is_no_usable_folder_is_refused_in_one_sentence(tmp_path: Path, project: str) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "a-file").write_text("")
    (tmp_path / "not-utf8-\udcff").mkdir()
    before = on_disk(tmp_path)
    given = project if project.startswith("~") else str(tmp_path / project)
    refused(setup_cli(Path(given), "vscode"), "nothing was written")
    assert on_disk(tmp_path) == before


@posix
def test_two_client_files_that_are_one_file_are_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {".mcp.json": "{}\n"})
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").symlink_to("../.mcp.json")
    before = on_disk(tmp_path)
    refused(setup_cli(tmp_path, "claude-code"), "are one file")
    assert on_disk(tmp_path) == before
