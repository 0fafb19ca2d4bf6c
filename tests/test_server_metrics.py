"""Prometheus metrics live in a registry per app and render in the text format."""

from __future__ import annotations

from prometheus_client import REGISTRY

from bot.app.metrics import create_metrics


def sample(metrics, name, labels):
    return metrics.registry.get_sample_value(name, labels)


def test_each_app_has_its_own_registry():
    a, b = create_metrics(), create_metrics()
    a.deliveries.labels(event="ping", outcome="pong").inc()
    assert sample(a, "prguide_webhook_deliveries_total", {"event": "ping", "outcome": "pong"}) == 1
    assert sample(b, "prguide_webhook_deliveries_total", {"event": "ping", "outcome": "pong"}) is None
    assert REGISTRY.get_sample_value("prguide_webhook_deliveries_total", {"event": "ping", "outcome": "pong"}) is None


def test_api_responses_count_calls_errors_and_rate_limit():
    m = create_metrics()
    m.observe_api_response(200, remaining=4999)
    m.github_hook("GET", "/repos/{owner}/{repo}", 404, 4998)
    m.observe_api_response(0)
    assert sample(m, "prguide_github_api_requests_total", {"status": "200"}) == 1
    assert sample(m, "prguide_github_api_errors_total", {"status": "404"}) == 1
    assert sample(m, "prguide_github_api_errors_total", {"status": "none"}) == 1
    assert sample(m, "prguide_github_api_errors_total", {"status": "200"}) is None
    assert sample(m, "prguide_github_rate_limit_remaining", None) == 4998


def test_job_counts_reset_states_that_emptied():
    m = create_metrics()
    m.set_job_counts({"queued": 3, "running": 1})
    m.set_job_counts({"done": 4})
    assert sample(m, "prguide_jobs", {"state": "queued"}) == 0
    assert sample(m, "prguide_jobs", {"state": "done"}) == 4


def test_render_is_prometheus_text():
    m = create_metrics()
    m.job_duration.labels(event="pull_request", outcome="done").observe(0.3)
    body, content_type = m.render()
    assert content_type.startswith("text/plain")
    assert b'prguide_job_duration_seconds_bucket{event="pull_request",le="0.5",outcome="done"} 1.0' in body
