"""`agents-context-hook`, the surface a coding agent's host runs before or after every file its
model touches, and at a session's start: it adds the rules that apply, each once a session. A
process per event, so it loads none of the server's packages (`tests/promises/test_light.py`)."""
