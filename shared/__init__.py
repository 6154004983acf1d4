"""The shared server: `agents-context-shared`, the stdio command a client starts, relays its
session to the one server its project's sessions share (`relay`), and that server serves each
relayed connection as a session of its own (`sessions`). Both halves of the handshake are here."""
