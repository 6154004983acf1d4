"""Keeping the index equal to the disk: the store everyone reads one generation of, finding and
reading what changed (settled, never half-written), applying it as one generation, the watcher
and which roots it covers, the persistent cache, and the status report. Every thread of the
server lives here.
"""
