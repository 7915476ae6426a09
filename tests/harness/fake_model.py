"""The fake small model tests run against: the demo's (hippocampus/demo/fake_model.py)."""
from hippocampus.demo.fake_model import FakeModel, Reply  # noqa: F401 - the names tests import from here
