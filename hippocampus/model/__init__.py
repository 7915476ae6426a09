"""The small model: its client, the cancellable session, its server's lifecycle and process, the Observatory."""
