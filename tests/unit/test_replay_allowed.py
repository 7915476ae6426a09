"""replay.candidates as the loader reads it, the candidate a replay chooses, the timeout's cap, and the CLI's
refusals (issue 28, item 2). The listener is a real loopback socket counting connections: none are made."""
from __future__ import annotations

import io
import socket
import threading

import pytest

from hippocampus import config as cm
from hippocampus.__main__ import build_parser
from hippocampus.cli import commands as replay_cli
from hippocampus.config.replay_endpoints import NotAllowed, choose, listed, same_service
from hippocampus.store.capture import store_for
from hippocampus.replay.run import ReplayEnv, replay

REFUSED = "replay reaches only the configured model and the candidates listed in replay.candidates; "


@pytest.fixture
def listener():
    """A loopback socket that counts every connection made to it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    seen = {"connections": 0, "port": sock.getsockname()[1]}

    def accept():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            seen["connections"] += 1
            conn.close()
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield seen
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
    t.join(5)


def build(tmp_path, memory_url="http://127.0.0.1:7420", **replay_block):
    return cm.build({"memory": {"url": memory_url}, "model": {"url": "http://127.0.0.1:8090/v1", "name": "small"},
                     "sleep": {"state_path": str(tmp_path / "state" / "state.json")},
                     "replay": replay_block}, environ={})


def test_memorys_own_address_is_never_a_candidate_even_listed_and_the_config_says_so(tmp_path, listener):
    port = listener["port"]
    cfg = build(tmp_path, memory_url=f"http://127.0.0.1:{port}", candidates={
        "memory": {"url": f"http://localhost:{port}/short?x="},
        "memory6": {"url": f"http://[::1]:{port}/v1"},
        "small2": {"url": "http://127.0.0.1:8091/v1", "model": "qwen"}})
    assert cfg.warnings == [
        f"'replay.candidates.memory.url' = 'http://localhost:{port}/short?x=' is SerenMemory's own address "
        "(memory.url): Memory is never a replay candidate, so it is left out",
        f"'replay.candidates.memory6.url' = 'http://[::1]:{port}/v1' is SerenMemory's own address (memory.url): "
        "Memory is never a replay candidate, so it is left out"]
    assert sorted(listed(cfg)) == ["small2"]
    env = ReplayEnv(cfg=cfg, store=store_for(cfg))
    for name in ("memory", "memory6"):
        with pytest.raises(NotAllowed) as exc:
            replay(env, "any-draft", candidate=name)
        assert str(exc.value) == REFUSED + f"'{name}' is not one of them (listed: small2)"
    cfg.model.url = f"http://localhost:{port}/v1"           # the configured model pointed at Memory: refused too
    with pytest.raises(NotAllowed, match="replay never sends to SerenMemory's own address"):
        replay(env, "any-draft")
    assert listener["connections"] == 0


def test_a_bad_entry_is_left_out_with_its_reason_and_a_listed_one_is_chosen_by_name(tmp_path):
    cfg = build(tmp_path, candidates={"nourl": {"model": "x"}, "ftp": {"url": "ftp://box/v1"}, "flat": "http://a/v1",
                                      "ok": {"url": "http://127.0.0.1:8091/v1/", "model": "qwen", "extra": 1,
                                             "extra_body": {"top_k": 5}, "timeout_seconds": 900}})
    assert cfg.warnings == [
        "'replay.candidates.nourl.url' = None is not an http:// or https:// base URL (like http://127.0.0.1:8091/v1); "
        "the candidate is left out",
        "'replay.candidates.ftp.url' = 'ftp://box/v1' is not an http:// or https:// base URL (like "
        "http://127.0.0.1:8091/v1); the candidate is left out",
        "'replay.candidates.flat' should be a block with url (and model, extra_body, timeout_seconds), not "
        "'http://a/v1'; it is left out",
        "'replay.candidates.ok.extra' is not a candidate setting (they are url, model, extra_body, timeout_seconds); "
        "it is ignored",
        "'replay.candidates.ok.timeout_seconds' = 900 is above 300, the most one replay call may take; using 300"]
    c = choose(cfg, "ok")
    assert (c.label, c.url, c.name, c.extra_body, c.timeout_seconds, c.managed) == \
        ("ok", "http://127.0.0.1:8091/v1", "qwen", {"top_k": 5}, 300.0, False)
    assert choose(cfg, "ok", model="other").name == "other"
    default = choose(cfg)
    assert (default.label, default.url, default.name, default.managed) == \
        ("model", "http://127.0.0.1:8090/v1", "small", True)
    with pytest.raises(NotAllowed) as exc:
        choose(cfg, "http://127.0.0.1:8091/v1")              # a URL is no name, even a listed one's
    assert str(exc.value) == REFUSED + "'http://127.0.0.1:8091/v1' is not one of them (listed: ok)"


def test_a_timeout_above_the_cap_is_capped_and_the_result_says_so(tmp_path):
    cfg = build(tmp_path)
    capped = choose(cfg, timeout_seconds=3600)
    assert capped.timeout_seconds == 300.0 and capped.timeout_note == (
        "timeout_seconds 3600 is above the cap: each replay call may take at most 300 s, so 300 s was used")
    kept = choose(cfg, timeout_seconds=30)
    assert kept.timeout_seconds == 30.0 and kept.timeout_note is None
    cfg.model.timeout_seconds = 1000                          # a slow configured model: its calls are capped too
    assert choose(cfg).timeout_seconds == 300.0 and choose(cfg).timeout_note is None


def test_same_service_counts_every_loopback_name_as_one_host():
    assert same_service("http://localhost:7420/short?x=", "http://127.0.0.1:7420")
    assert same_service("http://127.0.0.2:7420/v1", "http://[::1]:7420")
    assert same_service("http://box.lan/v1", "http://BOX.lan:80")
    assert not same_service("http://127.0.0.1:7421/v1", "http://127.0.0.1:7420")
    assert not same_service("http://box.lan:7420/v1", "http://127.0.0.1:7420")


def test_the_cli_refuses_a_url_and_an_unlisted_candidate_and_sends_nothing(tmp_path, listener, capsys):
    conf = tmp_path / "hippocampus.yaml"
    conf.write_text(f"memory:\n  url: http://127.0.0.1:9\nsleep:\n  state_path: {tmp_path / 'state.json'}\n"
                    "replay:\n  candidates:\n    small2:\n      url: http://127.0.0.1:8091/v1\n", encoding="utf-8")
    url = f"http://127.0.0.1:{listener['port']}/v1"
    args = build_parser().parse_args(["replay", "d1", "--model-url", url, "--config", str(conf)])
    assert replay_cli.replay_command(args, io.StringIO()) == 2
    err = capsys.readouterr().err
    assert ("--model-url is no longer taken: replay reaches only the configured model and the candidates listed "
            f"in replay.candidates; list '{url}' there under a name and pass --candidate NAME") in err
    args = build_parser().parse_args(["replay", "--last", "3", "--candidate", "elsewhere", "--config", str(conf)])
    assert replay_cli.replay_command(args, io.StringIO()) == 1
    assert REFUSED + "'elsewhere' is not one of them (listed: small2)" in capsys.readouterr().err
    assert listener["connections"] == 0


def test_a_candidate_timeout_that_is_not_a_number_is_named_and_the_model_timeout_used(tmp_path):
    cfg = build(tmp_path, candidates={"nan": {"url": "http://127.0.0.1:8091/v1", "timeout_seconds": float("nan")}})
    assert cfg.warnings == ["'replay.candidates.nan.timeout_seconds' = nan is not a number of seconds above 0; "
                            "using model.timeout_seconds"]
    assert choose(cfg, "nan").timeout_seconds == cfg.model.timeout_seconds      # NaN: every call past its deadline


def test_a_candidate_extra_body_json_cannot_carry_is_named_and_the_models_used(tmp_path):
    """Found: NaN inside a candidate's extra_body was kept, and every replay to it sent a body no JSON reader takes."""
    cfg = build(tmp_path, candidates={"hot": {"url": "http://127.0.0.1:8091/v1", "extra_body": {"top_p": float("nan")}}})
    assert cfg.warnings == ["'replay.candidates.hot.extra_body' is not a mapping of finite numbers and text (no .nan "
                            "or .inf, which JSON cannot carry); using model.extra_body"]
    assert choose(cfg, "hot").extra_body == cfg.model.extra_body

def test_a_candidate_listed_as_model_is_named_not_shadowed_by_the_configured_model(tmp_path):
    """'model' is the configured model's name in a replay: a listed entry of that name could never be reached."""
    cfg = build(tmp_path, candidates={"model": {"url": "http://127.0.0.1:8091/v1", "model": "qwen"}})
    assert cfg.warnings == ["'replay.candidates.model': 'model' names the configured model (model.url) in a "
                            "replay, so this entry could never be chosen; it is left out: give it another name"]
    assert listed(cfg) == {}
    chosen = choose(cfg, "model")
    assert (chosen.url, chosen.name) == ("http://127.0.0.1:8090/v1", "small")       # what 'model' reaches


TIMEOUT_RULE = "a number of seconds above 0 (at most 300: a larger one is capped)"


@pytest.mark.parametrize("given, shown", [("inf", "inf"), ("1e400", "inf"), ("nan", "nan"), ("-1", "-1"),
                                          ("0", "0"), ("-inf", "-inf")])
def test_the_cli_refuses_a_timeout_that_is_no_number_of_seconds_in_the_http_bodys_words(tmp_path, capsys, given,
                                                                                         shown):
    """Found: `replay --timeout inf` was taken (capped to 300 with a note), where check-ripple's --timeout, every
    other seconds flag and the loader refuse infinity; the refusal named no range."""
    conf = tmp_path / "hippocampus.yaml"
    conf.write_text(f"memory:\n  url: http://127.0.0.1:9\nsleep:\n  state_path: {tmp_path / 'state.json'}\n",
                    encoding="utf-8")
    args = build_parser().parse_args(["replay", "--last", "1", f"--timeout={given}", "--config", str(conf)])
    assert replay_cli.replay_command(args, io.StringIO()) == 2
    assert capsys.readouterr().err == f"seren-hippocampus replay: --timeout is {TIMEOUT_RULE}, not {shown}\n"
    args = build_parser().parse_args(["replay", "--last", "1", "--timeout=3600", "--config", str(conf)])
    assert replay_cli.replay_command(args, io.StringIO()) == 1        # taken (capped): no packets to replay
    assert "no replay packets" in capsys.readouterr().err


def test_a_candidate_timeout_of_infinity_is_named_and_the_model_timeout_used(tmp_path):
    cfg = build(tmp_path, candidates={"inf": {"url": "http://127.0.0.1:8091/v1", "timeout_seconds": float("inf")}})
    assert cfg.warnings == ["'replay.candidates.inf.timeout_seconds' = inf is not a number of seconds above 0; "
                            "using model.timeout_seconds"]
    assert choose(cfg, "inf").timeout_seconds == cfg.model.timeout_seconds


def test_a_candidates_name_and_model_are_held_to_the_name_rule_a_replays_caller_is_held_to(tmp_path):
    """Found: POST /replay, replay_draft and the CLI refuse a candidate or model name that is not one line of at
    most 200 characters, but replay.candidates took one: a candidate named past 200 characters was listed yet no
    door could ask for it, and a model: 'a\\nb' (or a list, sent as "['q', 'w']") was the name sent to the model."""
    long = "x" * 201
    cfg = build(tmp_path, candidates={long: {"url": "http://127.0.0.1:8091/v1"},
                                      "two": {"url": "http://127.0.0.1:8092/v1", "model": "a\nb"},
                                      "lst": {"url": "http://127.0.0.1:8093/v1", "model": ["q", "w"]}})
    assert cfg.warnings == [
        f"'replay.candidates.{long}': its name is not {NAME_RULE}, so no replay could ask for it; it is left out: "
        "rename it",
        f"'replay.candidates.two.model' = 'a\\nb' is not {NAME_RULE}; the candidate's name 'two' is sent instead",
        f"'replay.candidates.lst.model' = ['q', 'w'] is not {NAME_RULE}; the candidate's name 'lst' is sent instead"]
    assert {name: entry.model for name, entry in listed(cfg).items()} == {"two": "two", "lst": "lst"}


NAME_RULE = "a name (text on one line, at most 200 characters)"


def test_a_candidate_timeout_written_as_text_is_read_as_every_seconds_setting_in_the_yaml_reads_one(tmp_path):
    """Found: `timeout_seconds: "30"` (quoted) left the candidate on model.timeout_seconds with 'is not a number of
    seconds above 0', while every other seconds setting of the yaml (model.timeout_seconds: "30") takes it."""
    from hippocampus.config.replay_endpoints import seconds_above_zero

    cfg = build(tmp_path, candidates={"q": {"url": "http://127.0.0.1:8091/v1", "timeout_seconds": " 30 "},
                                      "big": {"url": "http://127.0.0.1:8092/v1", "timeout_seconds": "900"},
                                      "word": {"url": "http://127.0.0.1:8093/v1", "timeout_seconds": "soon"},
                                      "nan": {"url": "http://127.0.0.1:8094/v1", "timeout_seconds": "nan"}})
    assert cm.build({"model": {"timeout_seconds": "30"}}, environ={}).model.timeout_seconds == 30.0   # the yaml's rule
    assert cfg.warnings == [
        "'replay.candidates.big.timeout_seconds' = 900 is above 300, the most one replay call may take; using 300",
        "'replay.candidates.word.timeout_seconds' = 'soon' is not a number of seconds above 0; using "
        "model.timeout_seconds",
        "'replay.candidates.nan.timeout_seconds' = 'nan' is not a number of seconds above 0; using "
        "model.timeout_seconds"]
    assert choose(cfg, "q").timeout_seconds == 30.0 and choose(cfg, "big").timeout_seconds == 300.0
    assert not seconds_above_zero("30")         # a request's body stays JSON numbers only (POST /replay's rule)


def test_a_timeout_that_is_no_number_is_refused_in_the_words_of_the_other_seconds_flags(capsys):
    """Found: `replay --timeout soon` said argparse's "invalid float value: 'soon'", where every other seconds flag
    (check-ripple --timeout, --tend-every, --budget-seconds) says "expected a number of seconds"."""
    for argv in (["replay", "--last", "1", "--timeout", "soon"], ["check-ripple", "--timeout", "soon"]):
        with pytest.raises(SystemExit) as stopped:
            build_parser().parse_args(argv)
        assert stopped.value.code == 2
        assert "--timeout: expected a number of seconds, not 'soon'" in capsys.readouterr().err


def test_a_candidate_model_written_as_a_number_is_read_as_text_as_model_name_is(tmp_path):
    """Found: `model.name: 2024` is the model name '2024' (a text setting reads a number as its text), but
    `replay.candidates.X.model: 2024` was 'not a name' and the candidate's own name was sent instead."""
    assert cm.build({"model": {"name": 2024}}, environ={}).model.name == "2024"      # the yaml's rule
    cfg = build(tmp_path, candidates={"a": {"url": "http://127.0.0.1:8091/v1", "model": 2024},
                                      "b": {"url": "http://127.0.0.1:8092/v1", "model": ["x"]}})
    assert cfg.warnings == ["'replay.candidates.b.model' = ['x'] is not a name (text on one line, at most 200 "
                            "characters); the candidate's name 'b' is sent instead"]
    assert choose(cfg, "a").name == "2024" and choose(cfg, "b").name == "b"
