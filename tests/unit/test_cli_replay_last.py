"""`replay --last N` with an N past what any machine can count means every draft with a packet (it printed a
traceback: ValueError from itertools.islice)."""
from __future__ import annotations


def test_a_huge_last_is_every_draft_not_a_traceback(tmp_path, capsys):
    from hippocampus.__main__ import main

    path = tmp_path / "h.yaml"
    path.write_text(f'sleep:\n  state_path: "{tmp_path / "state.json"}"\nmemory:\n  url: http://127.0.0.1:9\n',
                    encoding="utf-8")
    assert main(["replay", "--config", str(path), "--last", "99999999999999999999"]) == 1
    assert f"seren-hippocampus replay: no replay packets in {tmp_path / 'replays'}" in capsys.readouterr().err
