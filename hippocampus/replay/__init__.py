"""Replay (a draft's saved prompts sent again to a candidate, both sides compared) and the quality report."""
