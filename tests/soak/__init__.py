"""The unattended soak: many nights of the whole loop in thread mode, a scripted main model, faults, and
the invariants checked after every night (see tests/soak/README.md)."""
