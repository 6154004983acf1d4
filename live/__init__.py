"""Keeping the index equal to the disk: the store everyone reads one generation of, finding and
reading what changed (settled, never half-written), applying it as one generation, the watcher
and which roots it covers, the persistent cache, and the status report. Every thread the server
starts is started here (the surfaces only hand blocking calls to anyio's worker threads).
"""
