"""Installed as the top-level package `seren_hippocampus` (see pyproject.toml's package-dir).

Every Seren installer and service wrapper starts a service as `<venv python> -m seren_<name> --config
<cfg>` (NSSM's AppParameters, the systemd ExecStart, the Starwright launcher), so this package answers
to that name and runs exactly what `python -m hippocampus` runs.
"""
