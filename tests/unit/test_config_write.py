"""model.write (free | extractive | auto): read from the file and the environment, a bad value named with its
fix, and auto's choice by the model's measured size, with its reason in words."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import requests

from hippocampus import config
from hippocampus.model import size
from hippocampus.model.learned import Learned


def _load(tmp_path, text: str, environ=None):
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    return config.load(str(p), environ=environ or {}, announce=False)


@pytest.mark.parametrize("given, used", [("free", "free"), ("extractive", "extractive"), ("auto", "auto"),
                                         ("Extractive", "extractive"), ("extract", "extractive")])
def test_model_write_takes_its_three_values(tmp_path, given, used):
    cfg = _load(tmp_path, f"model:\n  write: {given}\n")
    assert cfg.warnings == [] and cfg.model.write == used


def test_model_write_defaults_to_auto(tmp_path):
    assert _load(tmp_path, "model:\n  name: x\n").model.write == "auto"


def test_a_bad_model_write_is_named_with_the_values_it_takes(tmp_path):
    cfg = _load(tmp_path, "model:\n  write: copy\n")
    assert cfg.warnings == ["'model.write' = 'copy' must be one of 'free', 'extractive', 'auto'; "
                            "using the default 'auto'"]
    assert cfg.model.write == "auto"


def test_model_write_from_the_environment(tmp_path):
    cfg = _load(tmp_path, "model:\n  write: free\n", environ={"SEREN_HIPPOCAMPUS_MODEL_WRITE": "extractive"})
    assert cfg.model.write == "extractive"


def test_the_sample_config_names_model_write():
    from pathlib import Path
    sample = (Path(__file__).resolve().parents[2] / "deploy" / "seren-hippocampus.yaml.sample").read_text()
    assert "  write: auto" in sample


@pytest.mark.parametrize("setting, n_params, mode, said", [
    ("free", 134_515_008, "free", "model.write: free: the model writes"),
    ("extractive", None, "extractive", "model.write: extractive: the model chooses fragments"),
    ("auto", 134_515_008, "extractive", "the model has 135M parameters, below 1.5B, so it chooses fragments"),
    ("auto", 268_098_176, "extractive", "the model has 268M parameters, below 1.5B"),
    ("auto", 1_500_000_000, "free", "the model has 1.5B parameters, 1.5B or more, so it writes"),
    ("auto", 7_241_732_096, "free", "the model has 7.2B parameters"),
    ("auto", None, "free", "does not say its size (no n_params in /v1/models or /props), so the model writes "
                           "(free); set model.write: extractive for a model below 1.5B parameters"),
])
def test_auto_chooses_by_the_models_size_and_says_why(setting, n_params, mode, said):
    pick = size.choose(setting, n_params)
    assert pick["mode"] == mode and said in pick["why"], pick


class Server:
    """What a model server answers to GET: path -> body (200), else 404."""

    def __init__(self, bodies: dict):
        self.bodies, self.asked = bodies, []

    def get(self, url, timeout):
        path = url.split(":9", 1)[1][3:]         # after http://127.0.0.1:9999
        self.asked.append(path)
        body = self.bodies.get(path)
        return SimpleNamespace(status_code=200 if body is not None else 404, json=lambda: body or {})


@pytest.mark.parametrize("bodies, n", [
    ({"/v1/models": {"data": [{"id": "smol", "meta": {"n_params": 134515008, "n_vocab": 49152}}]}}, 134515008),
    ({"/v1/models": {"data": [{"id": "smol"}]}, "/props": {"n_params": 268098176}}, 268098176),
    ({"/v1/models": {"data": [{"id": "smol"}]}, "/props": {"model_path": "x.gguf"}}, None),
    ({"/v1/models": {"data": [{"id": "smol", "meta": {"n_params": True}}]}}, None),
    ({}, None),
])
def test_the_size_is_read_from_v1_models_else_props(bodies, n):
    assert size.read_n_params("http://127.0.0.1:9999/v1", Server(bodies)) == n


def test_auto_measures_once_per_client_and_a_server_not_reached_is_asked_again():
    url, learned = "http://127.0.0.1:9999/v1", Learned()

    class Down:
        def get(self, url, timeout):
            raise requests.ConnectionError("refused")

    assert size.mode_for("auto", url, learned, Down())["mode"] == "free"
    assert size.view("auto", learned.chosen)["mode"] is None    # not remembered: asked again
    server = Server({"/v1/models": {"data": [{"id": "smol", "meta": {"n_params": 134515008}}]}})
    assert size.mode_for("auto", url, learned, server)["mode"] == "extractive"
    assert size.mode_for("auto", url, learned, server)["mode"] == "extractive"
    assert server.asked == ["/v1/models"]
    assert size.view("auto", learned.chosen)["mode"] == "extractive"
