"""The built sdist and wheel: the wheel exactly our modules, installable into a fresh venv, and it
serves; neither carries the development sets' documents, and the sdist's tests skip theirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import TEST_CACHE
from tests.helpers import REPO, search


def uv() -> list[str]:
    found = os.environ.get("UV") or shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the sdist, the wheel built from it), as `uv build` makes them."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([*uv(), "build", "--out-dir", str(out), str(REPO)], check=True, capture_output=True, timeout=300)
    (sdist,) = out.glob("agents_context-*.tar.gz")
    (wheel,) = out.glob("agents_context-*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path]) -> tuple[Path, Path]:
    """(the wheel, the `agents-context` script of a fresh venv it was installed into)."""
    _, wheel = built
    venv = wheel.parent / "venv"
    subprocess.run([*uv(), "venv", "--python", sys.executable, str(venv)], check=True, capture_output=True, timeout=300)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run(
        [*uv(), "pip", "install", "--python", str(python), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    script = python.with_name("agents-context.exe" if os.name == "nt" else "agents-context")
    return wheel, script


def test_the_wheel_holds_exactly_our_modules(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    ours = {n for n in names if ".dist-info/" not in n}
    assert ours == {"server.py"} | {
        str(p.relative_to(REPO).as_posix())
        for d in ("protocol", "cli", "hook", "shared", "clients", "live", "retrieval", "corpus", "writes")
        for p in (REPO / d).rglob("*")
        if p.suffix in (".py", ".typed")
    }
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    for field in (
        "Version: ",
        "License-Expression: MIT",
        "Project-URL: Repository",
        "Classifier: Programming Language :: Python :: 3.10",
        "Requires-Python: >=3.10",
    ):
        assert field in metadata
    assert "# agents-context" in metadata  # the README is the long description


def test_the_installed_script_answers_version_and_help(installed: tuple[Path, Path]) -> None:
    _, script = installed
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True, timeout=60)
    assert version.stdout.startswith("agents-context 0.")
    helptext = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True, timeout=60)
    assert "--root" in helptext.stdout and "--transport" in helptext.stdout


@pytest.mark.anyio
async def test_the_installed_script_serves_over_stdio(
    installed: tuple[Path, Path], make_tree: Callable[..., Path]
) -> None:
    _, script = installed
    agents = make_tree({"rules.md": "# Rules\n\n## Tabs\n\nIndent with four spaces.\n"})
    # The SDK starts servers with a filtered environment: name the test cache explicitly.
    params = StdioServerParameters(command=str(script), args=["--root", str(agents), "--cache-dir", str(TEST_CACHE)])
    async with Client(params) as client:
        assert "Indent with four spaces" in await search(client, "indent spaces")


def test_neither_the_sdist_nor_the_wheel_carries_the_development_sets_documents(built: tuple[Path, Path]) -> None:
    sdist, wheel = built
    with tarfile.open(sdist) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    sets = [n for n in names if n.startswith("bench/devsets/")]
    assert "bench/devsets/httpx/questions.jsonl" in sets and "bench/devsets/httpx/LICENSE" in sets
    assert all(n.endswith((".md", ".jsonl", "LICENSE")) and n.count("/") <= 3 for n in sets), sets
    assert not any("devsets" in n for n in zipfile.ZipFile(wheel).namelist())


def test_from_the_sdist_the_tests_of_the_sets_documents_skip_and_the_benchmark_says_why(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    sdist, _ = built
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp_path, filter="data")
        else:
            tar.extractall(tmp_path)
    (tree,) = tmp_path.glob("agents_context-*")
    tests = ["tests/bench/test_devsets.py", "tests/bench/test_links.py", "tests/bench/test_devsets_archive.py"]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(tmp_path / "t"),
            *tests,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    skipped = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 5 and all("are in a clone, not in the sdist" in line for line in skipped), run.stdout
    bench = subprocess.run(
        [sys.executable, "-m", "bench.devsets", "--only", "httpx"], cwd=tree, capture_output=True, text=True, timeout=60
    )
    assert bench.returncode == 2 and "no documents for httpx" in bench.stderr
