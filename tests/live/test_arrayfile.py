"""The array file: integer and boolean arrays round-trip exactly; damaged, truncated or foreign files are refused."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from live import arrayfile

Arrays = dict[str, npt.NDArray[Any]]

STORABLE: list[np.dtype[Any]] = [np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8), np.dtype(np.bool_)]

SAMPLE: Arrays = {
    "ints": np.arange(-5, 7, dtype=np.int32).reshape(3, 4),
    "longs": np.array([0, -1, 2**40, -(2**62)], dtype=np.int64),
    "bytes": np.frombuffer(b"hello\x00\xff", dtype=np.uint8),
    "flags": np.array([[True, False, True]], dtype=np.bool_),
    "none": np.zeros((0, 3), dtype=np.int64),
}


def arrays_of(dtype: np.dtype[Any]) -> st.SearchStrategy[npt.NDArray[Any]]:
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))


def save(path: Path, arrays: Arrays) -> Path:
    with path.open("wb") as out:
        arrayfile.write(out, arrays)
    return path


def assert_same(got: Arrays, want: Arrays) -> None:
    assert list(got) == list(want)
    for name, a in want.items():
        assert got[name].dtype == a.dtype, name
        assert got[name].shape == a.shape, name
        assert np.array_equal(got[name], a), name


def forged(table: list[dict[str, Any]], payload: bytes) -> bytes:
    """A file laid out as `write` lays it out, with a correct checksum, holding any header."""
    header = json.dumps(table).encode()
    head = arrayfile.MAGIC + len(header).to_bytes(8, "little") + header
    body = head + bytes(-len(head) % 64) + payload
    return body + zlib.crc32(body).to_bytes(4, "little")


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.sampled_from(STORABLE).flatmap(arrays_of),
        max_size=5,
    )
)
def test_integer_and_boolean_arrays_of_any_shape_come_back_exactly(tmp_path: Path, arrays: Arrays) -> None:
    assert_same(arrayfile.read(save(tmp_path / "a.arrays", arrays)), arrays)


def test_arrays_of_each_kind_and_shape_come_back_under_their_names(tmp_path: Path) -> None:
    assert_same(arrayfile.read(save(tmp_path / "a.arrays", SAMPLE)), SAMPLE)


def test_a_file_of_no_arrays_comes_back_empty(tmp_path: Path) -> None:
    assert arrayfile.read(save(tmp_path / "a.arrays", {})) == {}


def test_big_endian_and_strided_arrays_come_back_with_their_values(tmp_path: Path) -> None:
    grid = np.arange(24, dtype=np.int64).reshape(4, 6)
    arrays: Arrays = {
        "big": np.array([1, -2, 70000], dtype=">i4"),
        "columns": grid[:, ::2],
        "transposed": grid.T,
    }
    got = arrayfile.read(save(tmp_path / "a.arrays", arrays))
    assert got["big"].tolist() == [1, -2, 70000] and got["big"].dtype == np.dtype("<i4")
    assert np.array_equal(got["columns"], grid[:, ::2]) and np.array_equal(got["transposed"], grid.T)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint32", "complex64", "object", "<U3"])
def test_an_array_of_another_dtype_is_refused(tmp_path: Path, dtype: str) -> None:
    with (tmp_path / "a.arrays").open("wb") as out, pytest.raises(ValueError, match="cannot be stored"):
        arrayfile.write(out, {"ok": np.arange(3, dtype=np.int64), "bad": np.zeros(3, dtype=dtype)})


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_flipped_byte_anywhere_in_the_file_is_caught(tmp_path: Path, data: st.DataObject) -> None:
    pristine = save(tmp_path / "pristine.arrays", SAMPLE).read_bytes()
    at = data.draw(st.integers(0, len(pristine) - 1), label="position")
    mask = data.draw(st.integers(1, 255), label="xor mask")
    damaged = bytearray(pristine)
    damaged[at] ^= mask
    path = tmp_path / "damaged.arrays"
    path.write_bytes(bytes(damaged))
    with pytest.raises(ValueError):
        arrayfile.read(path)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_truncated_file_is_refused(tmp_path: Path, data: st.DataObject) -> None:
    pristine = save(tmp_path / "pristine.arrays", SAMPLE).read_bytes()
    cut = data.draw(st.integers(0, len(pristine) - 1), label="length kept")
    path = tmp_path / "truncated.arrays"
    path.write_bytes(pristine[:cut])
    with pytest.raises(ValueError):
        arrayfile.read(path)


def test_a_file_with_bytes_appended_is_refused(tmp_path: Path) -> None:
    path = save(tmp_path / "a.arrays", SAMPLE)
    path.write_bytes(path.read_bytes() + b"\x00\x00\x00\x00")
    with pytest.raises(ValueError, match="checksum"):
        arrayfile.read(path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not an array file at all, just some text that is long enough",
        b"\x93NUMPY\x01\x00v\x00{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
        b"PK\x03\x04" + bytes(60),
        arrayfile.MAGIC[:-1],
    ],
    ids=["empty", "text", "npy", "zip", "short magic"],
)
def test_a_file_that_is_not_an_array_file_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "foreign.arrays"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not an agents-context array file"):
        arrayfile.read(path)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"name": "x", "dtype": "<f8", "shape": [2], "offset": 0}, "bad dtype"),
        ({"name": "x", "dtype": "|O", "shape": [2], "offset": 0}, "bad dtype"),
        ({"name": "x", "dtype": "<i8", "shape": [-2], "offset": 0}, "bad dtype, shape or offset"),
        ({"name": "x", "dtype": "<i8", "shape": [2], "offset": -64}, "bad dtype, shape or offset"),
        ({"name": "x", "dtype": "<i8", "shape": [9], "offset": 0}, "runs past the end"),
        ({"name": "x", "dtype": "<i8", "shape": [2], "offset": 64}, "runs past the end"),
        ({"name": "x", "dtype": "<i8", "shape": [2**31, 2**31], "offset": 0}, "runs past the end"),
    ],
)
def test_an_intact_file_whose_header_disagrees_with_its_size_or_kinds_is_refused(
    tmp_path: Path, entry: dict[str, Any], why: str
) -> None:
    path = tmp_path / "forged.arrays"
    path.write_bytes(forged([entry], np.arange(8, dtype=np.int64).tobytes()))  # 64 bytes of data
    with pytest.raises(ValueError, match=why):
        arrayfile.read(path)


def test_a_forged_file_laid_out_correctly_is_read(tmp_path: Path) -> None:
    """The forgery helper writes what `read` accepts, so the refusals above are about the header."""
    path = tmp_path / "forged.arrays"
    path.write_bytes(
        forged([{"name": "x", "dtype": "<i8", "shape": [2, 4], "offset": 0}], np.arange(8, dtype=np.int64).tobytes())
    )
    assert arrayfile.read(path)["x"].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
