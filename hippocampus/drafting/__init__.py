"""The prompt contract, pure: clusters, hints, candidates, the prompt and the reading of an answer."""
