"""Replay and the quality report.

Every model call of a sleep and a redraft is kept in a replay packet for its draft (store/capture.py),
beside the state file (store/packets.py); a purge reaches the packets (store/scrub.py). A packet's prompts
can be sent again to an allowed candidate (config/candidates.py) on the replay worker (worker.py, session.py) and
both sides compared (run.py, checks.py); the reviewer's verdicts in Memory make a standing report per model
name and voice-card version (quality.py, read in the background by watch.py).
"""
