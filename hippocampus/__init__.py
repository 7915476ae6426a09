"""seren-hippocampus: the sleep cycle for SerenMemory."""
try:
    from importlib.metadata import version as _v

    __version__ = _v("seren-hippocampus")
except Exception:  # noqa: BLE001 - a source checkout without an install
    __version__ = "0.0.0.dev0"

SERVICE = "seren-hippocampus"
