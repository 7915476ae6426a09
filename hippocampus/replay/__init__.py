"""Replay and the quality report (issue 21).

Every model call of a sleep and a redraft is kept in a replay packet for its draft (capture.py), beside
the state file (packets.py). A purge reaches the packets (scrub.py). A packet's prompts can be sent again
to a candidate model and both sides compared (run.py, checks.py); the reviewer's verdicts in Memory make
a standing report per model name and voice-card version (quality.py, read in the background by watch.py).
"""
