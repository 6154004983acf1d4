"""Runs an MCP server over stdio and writes each line it sends and receives to a log, so a test
can read the protocol a real client spoke with it (the `tools/list` it received, the name it
gave): `python record.py LOG COMMAND...`. It imports nothing of the project and passes every byte
on unchanged."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO


def _copy(source: IO[bytes], target: IO[bytes], log: IO[bytes], lock: threading.Lock, tag: bytes) -> None:
    for line in iter(source.readline, b""):
        target.write(line)
        target.flush()
        with lock:
            log.write(tag + line)
            log.flush()
    target.close()


def main(argv: list[str]) -> int:
    log_path, command = argv[0], argv[1:]
    lock = threading.Lock()
    with open(log_path, "ab") as log:  # noqa: PTH123 - a plain file, before anything else runs
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert server.stdin is not None and server.stdout is not None
        inbound = threading.Thread(target=_copy, args=(sys.stdin.buffer, server.stdin, log, lock, b"> "), daemon=True)
        inbound.start()
        _copy(server.stdout, sys.stdout.buffer, log, lock, b"< ")
        return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
