"""Real coding-agent clients (Claude Code, Codex, Gemini CLI) run against local stand-ins for
their model APIs: scripted turns out, every request recorded, so a test reads exactly what
reached the model."""
