"""What the project knows of each coding agent that connects to the server or runs its hook: one
module per client (`claude_code`, `codex`, `gemini_cli`, `cursor`, `vscode`, `claude_desktop`,
`cline`), each one `Client`; `known` lists them. The names a client gives when it connects, what
it loads itself, whether its model reads structured content, its hook's payloads, answers and
limits, and its config files: everything else asks a `Client`, never a client's name."""
