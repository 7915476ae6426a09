"""Replay and the quality report.

Every model call of a sleep and a redraft is kept in its draft's replay packet (store/capture.py, packets.py).
Its prompts can be sent again to an allowed candidate on the replay worker and both sides compared (run.py,
checks.py); the reviewer's verdicts make a standing report per model and voice card (quality.py, watch.py).
"""
