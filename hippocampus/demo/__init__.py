"""What the demo runs on, and the test harness with it (the package never imports tests/): a free port
and a poll (waiting), the offline embedder (embedder), a throwaway SerenMemory (memory_server), the hand
that reviews through Memory's routes (hand) and a stand-in for the small model (fake_model).
SerenMemory, chromadb and uvicorn come with the [dev] extra; nothing here imports them until used.
"""
