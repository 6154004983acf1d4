"""The files agents-context writes for itself or, with `setup`, for the user: each written whole
or not at all, keeping the mode of the file it replaces, and the locks that keep two processes
from writing the same file at once.

The lowest layer beside `corpus/`: it imports nothing of the project and nothing outside the
standard library, so the hook and the relay load it for a few hundred microseconds.
"""
