"""GET /metrics: what an operator alerts on, in the Prometheus text format (prometheus_client's own writer).

Read from the door at scrape time, from what is already counted or published: a scrape never calls Memory or
waits on a busy actor. Behind the bearer like every route.
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

SLEEP_OUTCOMES = ("drafted", "quiet", "budget", "failed", "interrupted")
CHAIN_OUTCOMES = ("landed", "partly", "denied")
VERDICTS = ("approved", "denied")


def _labelled(name: str, what: str, label: str, values: tuple, counts: dict) -> CounterMetricFamily:
    family = CounterMetricFamily(name, what, labels=[label])
    for value in values:
        family.add_metric([value], counts.get(value, 0))
    return family


class Metrics:
    """The route, and the registry's one collector: each scrape reads the door afresh."""

    def __init__(self, front) -> None:
        self.front = front
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    def collect(self):
        m = self.front.metrics()
        c = m["counts"]
        yield _labelled("hippocampus_sleeps", "sleeps since the service started, by outcome (drafted; quiet: "
                        "nothing drafted; budget: sleep.budget stopped the night before it drafted anything, raise "
                        "it; failed; interrupted)", "outcome", SLEEP_OUTCOMES, c["sleeps"])
        yield _labelled("hippocampus_chains", "chains closed since the service started, by outcome (landed: every "
                        "operation approved; partly: some still denied; denied: none landed)", "outcome",
                        CHAIN_OUTCOMES, c["chains"])
        yield _labelled("hippocampus_operations", "operations of closed chains, by the reviewer's verdict", "verdict",
                        VERDICTS, c["operations"])
        yield CounterMetricFamily("hippocampus_drafts_submitted", "drafts and redrafts submitted to Memory",
                                  value=c["drafts"])
        yield _labelled("hippocampus_model_starts", "starts of the small model's server this service made",
                        "result", ("started", "failed"), c["model_starts"])
        yield CounterMetricFamily("hippocampus_model_up_seconds", "seconds the small model's server this service "
                                  "started has been up", value=m["model_up_seconds"])
        yield GaugeMetricFamily("hippocampus_last_successful_sleep_timestamp_seconds",
                                "when the last sleep that succeeded ended (0: none yet)",
                                value=m["last_sleep_ok_at"] or 0)
        yield GaugeMetricFamily("hippocampus_memory_reachable", "1 when SerenMemory answered the last health check",
                                value=1 if m["memory_reachable"] else 0)
        yield GaugeMetricFamily("hippocampus_chain_open", "1 while a draft's chain is open in Memory",
                                value=1 if m["chain_open"] else 0)

    def on_get(self, req, resp) -> None:
        resp.content_type = CONTENT_TYPE_LATEST
        resp.data = generate_latest(self.registry)
