"""Tests of the shared server: the relay and its sessions."""
