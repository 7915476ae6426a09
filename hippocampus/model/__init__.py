"""The small model: its client, its server's lifecycle and process, the Observatory."""
