"""The `.AGENTS` folder the command tests run on (a secret beside it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def agents(make_tree: Callable[..., Path]) -> Path:
    return make_tree(
        {
            "overview.md": "# Overview\n\nCLI tests.\n",
            "security.md": "# Security\n\nThe security rules for secrets.\n\n## Secrets\n\nNever print secrets or tokens.\n",
            "deploy.md": "# Deploy\n\nHow a deploy ships.\n\n## Rollback\n\nRoll back with the zebra switch.\n",
            ".env": "TOKEN=x\n",
        }
    )
