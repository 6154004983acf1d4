"""Benchmarks: scripts that print figures (never test assertions). See docs/speed.md."""
