"""The quick loop's list of slow tests stays true: each entry of `tests.conftest.SLOW` names a
module, folder or test that exists, so a moved test is never silently taken into the quick loop."""

from __future__ import annotations

import pytest

from tests.conftest import SLOW
from tests.helpers import REPO


@pytest.mark.parametrize("entry", SLOW)
def test_each_slow_entry_names_a_test_that_exists(entry: str) -> None:
    where, _, test = entry.partition("::")
    path = REPO / where
    assert path.exists(), f"{where} does not exist"
    if test:
        assert f"def {test}" in path.read_text(encoding="utf-8"), f"no test in {where} starts {test}"
