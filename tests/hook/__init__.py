"""Tests of the hook surface."""
