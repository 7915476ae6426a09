"""What this service keeps on disk: the state, the events, the voice card, the replay packets, private files."""
