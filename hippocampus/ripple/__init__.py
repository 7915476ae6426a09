"""Telling the outside: waking the main model (fire, check, Claude Code setup) and the webhook."""
