"""A file of named numpy arrays, read with one `readinto` and no copies, checked by a CRC.

Layout: `MAGIC`, the header length (8 bytes, little-endian), a JSON header listing each array's
name, dtype, shape and offset, the arrays themselves (each 64-byte aligned), then a CRC-32 of
everything before it. Only plain integer and boolean dtypes are accepted, every offset and shape
is checked against the file's size, and nothing in the file is ever executed (no pickles), so a
damaged or foreign file fails to load with `ValueError` instead of being trusted.

Why not `.npz`: it reads each array through `zipfile` (a copy and a CRC per member); loading a
38k-file docs root took about twice as long that way.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

MAGIC = b"AGENTSCTX-ARRAYS\x01"
_ALIGN = 64
_DTYPES = frozenset({"<i4", "<i8", "<u2", "|u1", "|b1"})


def write(out: IO[bytes], arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    table = []
    offset = 0
    contiguous = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    for name, a in contiguous.items():
        dtype = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        if dtype.str not in _DTYPES:
            raise ValueError(f"{name}: dtype {a.dtype} cannot be stored")
        table.append({"name": name, "dtype": dtype.str, "shape": list(a.shape), "offset": offset})
        offset += -(-a.nbytes // _ALIGN) * _ALIGN
    header = json.dumps(table).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    crc = 0
    for chunk in (MAGIC, len(header).to_bytes(8, "little"), header, bytes(start - len(MAGIC) - 8 - len(header))):
        out.write(chunk)
        crc = zlib.crc32(chunk, crc)
    for entry, a in zip(table, contiguous.values(), strict=True):
        data = a.astype(entry["dtype"], copy=False).reshape(-1).view(np.uint8).data  # its bytes, no copy
        padding = bytes(-len(data) % _ALIGN)
        out.write(data)
        out.write(padding)
        crc = zlib.crc32(padding, zlib.crc32(data, crc))
    out.write(crc.to_bytes(4, "little"))


_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every array of the file, as views into one buffer; `ValueError` if it is not intact, or
    not a plain file of this user's (a link, a pipe, a device, another user's file are never read:
    one would hang the read, or hand this process an index of someone else's making)."""
    try:
        fd = os.open(path, _OPEN)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError("a link, not an array file") from None
        raise
    with os.fdopen(fd, "rb") as f:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise ValueError("not a plain file")
        if hasattr(os, "geteuid") and found.st_uid != os.geteuid():
            raise ValueError("another user's file")
        size = found.st_size
        buffer = f.read(size + 1)  # bytes, not a zero-filled bytearray: 64 MB is 25 ms less
    if len(buffer) != size:
        raise ValueError("the file changed size while it was read")
    view = memoryview(buffer)
    if size < len(MAGIC) + 12 or view[: len(MAGIC)] != MAGIC:
        raise ValueError("not an agents-context array file")
    if zlib.crc32(view[:-4]) != int.from_bytes(view[-4:], "little"):
        raise ValueError("checksum mismatch: the file is damaged")
    header_len = int.from_bytes(view[len(MAGIC) : len(MAGIC) + 8], "little")
    header_end = len(MAGIC) + 8 + header_len
    if header_end > size - 4:
        raise ValueError("header longer than the file")
    table = json.loads(bytes(view[len(MAGIC) + 8 : header_end]))
    start = -(-header_end // _ALIGN) * _ALIGN
    arrays: dict[str, npt.NDArray[Any]] = {}
    for entry in table:
        dtype, shape, offset = np.dtype(entry["dtype"]), tuple(entry["shape"]), int(entry["offset"])
        if entry["dtype"] not in _DTYPES or any(not isinstance(n, int) or n < 0 for n in shape) or offset < 0:
            raise ValueError(f"{entry.get('name')}: bad dtype, shape or offset")
        count = int(np.prod(shape, dtype=np.int64))
        if start + offset + count * dtype.itemsize > size - 4:
            raise ValueError(f"{entry['name']}: runs past the end of the file")
        arrays[entry["name"]] = np.frombuffer(buffer, dtype, count, start + offset).reshape(shape)
    return arrays
