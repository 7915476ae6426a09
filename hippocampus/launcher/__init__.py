"""Installed as the top-level package `seren_hippocampus`, the name every Seren installer and service wrapper
starts (`<venv python> -m seren_<name> --config <cfg>`); it runs exactly what `python -m hippocampus` runs."""
