"""Benchmarks: scripts that print figures (never test assertions). See README, "Speed"."""
