"""seren-hippocampus: the sleep cycle for SerenMemory.

The version is said here once: pyproject.toml reads it, and nothing asks importlib.metadata at start-up (~30 ms).
It sorts after 5.4.0, the earlier program published under the same name.
"""
__version__ = "6.0.0"

SERVICE = "seren-hippocampus"
