"""seren-hippocampus: the sleep cycle for SerenMemory.

The version is said here once (pyproject.toml reads it from this line), so nothing asks the installed
package's metadata at start-up (importlib.metadata cost about 30 ms of the start's imports).
It sorts after 5.4.0, the earlier program published under the same name.
"""
__version__ = "6.0.0"

SERVICE = "seren-hippocampus"
