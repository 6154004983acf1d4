"""Where agents-context keeps what belongs to a user, not to a project: the hook's session records
and the shared servers' state files. Light on purpose: the hook and `agents-context-shared` start
once per event or session, and import it."""

from __future__ import annotations

import os
from pathlib import Path

STATE_ENV = "AGENTS_CONTEXT_STATE_DIR"
"""Names the state folder (default: the user's state folder)."""


def state_dir() -> Path:
    given = os.environ.get(STATE_ENV)
    if given:
        return Path(given)
    import platformdirs  # only when the environment names no folder

    return Path(platformdirs.user_state_dir("agents-context", appauthor=False))
