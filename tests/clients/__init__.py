"""Tests of `clients/`: what each client loads itself, and how it is told apart."""
