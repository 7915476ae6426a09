"""What the demo runs on, and the test harness with it (the package never imports tests/):

- waiting: a free loopback port, and polling until something is true;
- embedder: the offline hash embedder SerenMemory stores with (no model download);
- memory_server: a throwaway SerenMemory (the real app under uvicorn, in this process);
- hand: calls Memory's routes as the main model (or a person) reviewing does;
- fake_model: a local OpenAI-compatible server standing in for the small model, answering from a script;
- model_script: the demo's script for it (a small model that follows the prompt contract).

SerenMemory, chromadb and uvicorn come with the [dev] extra; nothing here imports them until used.
"""
