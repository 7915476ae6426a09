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


def _conf_with_a_packet(tmp_path):
    from hippocampus import config as cm
    from hippocampus.store.capture import store_for

    path = tmp_path / "h.yaml"
    path.write_text(f'sleep:\n  state_path: "{tmp_path / "state" / "state.json"}"\nmemory:\n  url: http://127.0.0.1:9\n'
                    "model:\n  url: http://127.0.0.1:11/v1\n", encoding="utf-8")
    (tmp_path / "state").mkdir(mode=0o700)
    store_for(cm.load(str(path), announce=False)).save({"version": 1, "draft_id": "d1", "created_at": 1.0,
                                                        "attempt": 1, "calls": [], "operations": []})
    return path


def test_the_draft_id_is_read_as_post_replay_and_replay_draft_read_it(tmp_path, capsys):
    """Found: POST /replay and the MCP tool replay_draft strip the draft id (" d1 " replays d1) and call a blank
    one missing; the CLI looked " d1 " up as it was ("no replay packet for draft ' d1 '") and a blank one too."""
    from hippocampus.__main__ import main

    path = _conf_with_a_packet(tmp_path)
    assert main(["replay", "--config", str(path), " d1 "]) == 0
    assert "Draft d1 (attempt 1) replayed on model" in capsys.readouterr().out
    assert main(["replay", "--config", str(path), "  "]) == 2
    assert capsys.readouterr().err == "seren-hippocampus replay: give a DRAFT_ID or --last N (one of them)\n"


def test_the_candidate_and_model_names_are_held_to_post_replays_rule(tmp_path, capsys):
    """Found: POST /replay and replay_draft refuse a candidate or model name that is not one line of at most 200
    characters (it is logged, and the model name is sent); the CLI sent it as it was."""
    from hippocampus.__main__ import main

    path = _conf_with_a_packet(tmp_path)
    for flag in ("--candidate", "--model-name"):
        for given in ("two\nlines", "x" * 201):
            assert main(["replay", "--config", str(path), "d1", flag, given]) == 2
            assert capsys.readouterr().err == (f"seren-hippocampus replay: {flag} is a name (text on one line, at "
                                               "most 200 characters)\n")


def test_last_is_read_by_the_whole_number_rule_of_the_other_flags(capsys):
    """Found: --last read N with int(), which takes "1_0" as 10 (and said "invalid int value" for others), where
    every whole-number flag refuses it in the same words."""
    import pytest

    from hippocampus.__main__ import build_parser

    for given in ("1_0", "two", "2.5"):
        with pytest.raises(SystemExit) as stopped:
            build_parser().parse_args(["replay", "--last", given])
        assert stopped.value.code == 2
        assert f"--last: expected a whole number, not {given!r}" in capsys.readouterr().err
    assert build_parser().parse_args(["replay", "--last", " 3.0 "]).last == 3
