"""check-config's reading of answers and URLs, as plain functions: what answers is told by the body's shape, never
by a status below 500; a URL's shape names the URL to set; the loader says where each value came from."""
from __future__ import annotations

from hippocampus import config
from hippocampus.cli import identify as ident
from hippocampus.cli.identify import Answer

MEMORY_ROOT = Answer(200, {"service": "SerenMemory", "version": "5.4.0"})
MEMORY_HEALTH = Answer(200, {"ok": True, "ts": 1.5, "features": []})
SELF_ROOT = Answer(200, {"service": "seren-hippocampus", "version": "6.0.0"})
SELF_HEALTH = Answer(200, {"ok": True, "memory_reachable": True})
LIST = Answer(200, {"object": "list", "data": [{"id": "small"}]})
NOT_FOUND = Answer(404, {"detail": "Not Found"})


def scripted(routes: dict):
    """A `get` answering from a table of URLs; anything else is a 404 (an answer below 500)."""
    return lambda url, bearer: routes.get(url, NOT_FOUND)


def test_the_shapes():
    assert ident.is_memory_health(MEMORY_HEALTH.body) and not ident.is_memory_health(SELF_HEALTH.body)
    assert not ident.is_memory_health({"ok": True, "ts": True}) and not ident.is_memory_health({"status": "ok"})
    assert ident.is_model_list(LIST.body) and not ident.is_model_list({"data": "x"}) and not ident.is_model_list([])
    assert ident.is_memory_root(MEMORY_ROOT.body) and ident.is_self_root(SELF_ROOT.body)


def test_url_shapes():
    assert ident.with_scheme("127.0.0.1:7420") == "http://127.0.0.1:7420"
    assert ident.with_scheme("https://m:1") == "https://m:1"
    assert ident.cut_route("http://h:8080/v1/chat/completions/") == ("http://h:8080/v1", "/chat/completions")
    assert ident.cut_route("http://h:8080/v1/completions") == ("http://h:8080/v1", "/completions")
    assert ident.cut_route("http://h:8080/v1") == ("http://h:8080/v1", "")
    assert ident.service_root("http://h:7424/v1") == "http://h:7424"


def test_a_404_is_not_a_model_and_the_root_names_who_answered():
    get = scripted({"http://m:7420/": MEMORY_ROOT, "http://m:7420/health": MEMORY_HEALTH})
    pr = ident.model("http://m:7420/v1", get=get)
    assert pr.answered_by == ident.MEMORY and pr.notes == []
    assert pr.warnings[0].startswith("model.url http://m:7420/v1 is SerenMemory, not a model server: ")


def test_a_route_and_a_missing_v1_are_one_warning_naming_the_v1_url():
    get = scripted({"http://h:8080/v1/models": LIST})
    pr = ident.model("http://h:8080/chat/completions", get=get)
    assert pr.warnings == ["model.url ends in /chat/completions: set it to http://h:8080/v1; the service adds the "
                           "route itself"] and pr.fix == "http://h:8080/v1"


def test_memory_at_this_service_or_a_model_server():
    me = ident.memory("http://s:7424", get=scripted({"http://s:7424/": SELF_ROOT, "http://s:7424/health": SELF_HEALTH}))
    assert me.answered_by == ident.SELF and "is this service (seren-hippocampus) itself" in me.warnings[0]
    llama = ident.memory("http://l:8080", get=scripted({"http://l:8080/health": Answer(200, {"status": "ok"}),
                                                        "http://l:8080/v1/models": LIST}))
    assert llama.answered_by == ident.MODEL
    assert llama.warnings[0].startswith("memory.url http://l:8080 is a model server (GET http://l:8080/v1/models "
                                        "lists models), not SerenMemory")
    real = ident.memory("http://m:7420", get=scripted({"http://m:7420/": MEMORY_ROOT,
                                                       "http://m:7420/health": MEMORY_HEALTH}))
    assert real.warnings == [] and real.notes == ["# reached: Memory at http://m:7420 (GET / names SerenMemory 5.4.0)"]


def test_sources_name_the_yaml_the_environment_and_the_default(tmp_path):
    p = tmp_path / "h.yaml"
    p.write_text("memory:\n  url: http://m:1\nsleep:\n  tick_seconds: 9\n", encoding="utf-8")
    cfg = config.load(str(p), environ={"SEREN_HIPPOCAMPUS_PORT": "7701", "SEREN_HIPPOCAMPUS_SLEEP_TICK_SECONDS": "5",
                                       "SEREN_HIPPOCAMPUS_SLEEP_PILE_MAX": "nope"}, announce=False)
    src = cfg.sources
    assert (src.of("memory.url"), src.of("server.port"), src.of("sleep.tick_seconds"), src.of("sleep.pile_max"),
            src.of("server.threads")) == ("yaml", "environment", "environment", "default", "default")
    assert src.from_environment() == {"server.port": "SEREN_HIPPOCAMPUS_PORT",
                                      "sleep.tick_seconds": "SEREN_HIPPOCAMPUS_SLEEP_TICK_SECONDS"}
    src.flagged(["server.port"])
    assert src.of("server.port") == "flag" and "server.port" not in src.from_environment()
    assert set(src.every()) == {p for p in config.loader.KNOWN_PATHS if p not in config.loader.KNOWN_BLOCKS}


def test_a_url_without_scheme_with_a_route_names_one_url_to_set():
    pr = ident.model_shape("localhost:8090/v1/chat/completions")
    assert pr.fix == "http://localhost:8090/v1"
    assert pr.warnings == ["model.url localhost:8090/v1/chat/completions has no scheme, so nothing can reach it: "
                           "set it to http://localhost:8090/v1 (http:// or https:// in front)",
                           "model.url ends in /chat/completions: set it to http://localhost:8090/v1; the service adds "
                           "the route itself"]
    bare = ident.model("h:8080/chat/completions", get=scripted({"http://h:8080/v1/models": LIST}))
    assert all("set it to http://h:8080/v1 " in w or "set it to http://h:8080/v1;" in w for w in bare.warnings), \
        bare.warnings
