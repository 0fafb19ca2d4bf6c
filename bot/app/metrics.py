"""Prometheus metrics of one running app, served at ``GET /metrics``.

Each app gets its own :class:`prometheus_client.CollectorRegistry`, so several apps in
one process (tests, or a CLI next to a server) never share or clash on counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

#: Job durations, in seconds: a small PR is well under a second, a 3,000-file one many.
JOB_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


@dataclass(frozen=True, slots=True)
class Metrics:
    """The app's metrics, all in :attr:`registry`.

    - ``deliveries``: ``prguide_webhook_deliveries_total{event, outcome}`` where outcome is
      ``queued``, ``duplicate``, ``ignored``, ``pong``, ``handled``, ``unavailable`` or the
      refusal (``unauthorized``, ``bad_request``, ``too_large``, ``unsupported_media_type``).
    - ``jobs``: ``prguide_jobs{state}``, the queue depth by job state, set at scrape time.
    - ``job_duration``: ``prguide_job_duration_seconds{event, outcome}``, seconds per run.
    - ``api_requests``: ``prguide_github_api_requests_total{status}``, GitHub REST calls
      by HTTP status (``error`` when no answer came).
    - ``api_errors``: ``prguide_github_api_errors_total{status}``, calls that failed
      (4xx/5xx or no answer), except answers the caller expected.
    - ``api_expected``: ``prguide_github_api_expected_errors_total{status}``, 4xx answers
      the caller expected and handled as normal (the 404 of a repository without
      ``.github/prguide.yml``, of a label already removed, of a non-collaborator's
      permission); also counted in ``api_requests``.
    - ``rate_limit_remaining``: ``prguide_github_rate_limit_remaining``, the last
      ``x-ratelimit-remaining`` GitHub sent ("Rate limits for the REST API").
    """

    registry: CollectorRegistry
    deliveries: Counter
    jobs: Gauge
    job_duration: Histogram
    api_requests: Counter
    api_errors: Counter
    rate_limit_remaining: Gauge
    api_expected: Counter
    #: ``prguide_info{version, backend, role}`` = 1: which database (``sqlite``/``postgresql``) and role this replica runs.
    info: Gauge
    # States ever reported, so a state that emptied reads 0 rather than its last value.
    job_states: set[str] = field(default_factory=set)

    def observe_api_response(self, status: int | None, remaining: int | None = None, *, expected: bool = False) -> None:
        """Count one GitHub API answer and its rate-limit headroom.

        ``status`` 0 or ``None`` means no answer came (time-out, connection error) and is
        counted as ``status="none"``; ``remaining`` is ``x-ratelimit-remaining``;
        ``expected``: the caller expected this error status (see ``api_expected``).
        """
        label = str(status) if status else "none"
        self.api_requests.labels(status=label).inc()
        if status and status >= 400 and expected:
            self.api_expected.labels(status=label).inc()
        elif not status or status >= 400:
            self.api_errors.labels(status=label).inc()
        if remaining is not None:
            self.rate_limit_remaining.set(remaining)

    def github_hook(self, method: str, path: str, status: int, remaining: int | None) -> None:
        """The ``on_response`` hook of :class:`bot.app.github.GitHubClient`, feeding these metrics."""
        from bot.app.github import expected_status  # the client module is heavier; metrics stay importable alone

        self.observe_api_response(status, remaining, expected=bool(status) and expected_status(status))

    def set_job_counts(self, counts: Mapping[str, int]) -> None:
        """Set the queue-depth gauge from ``{state: count}``; states absent from ``counts`` go to 0."""
        self.job_states.update(counts)
        for state in self.job_states:
            self.jobs.labels(state=state).set(int(counts.get(state, 0)))

    def render(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def create_metrics(registry: CollectorRegistry | None = None) -> Metrics:
    """Create every metric in ``registry`` (a fresh one when ``None``)."""
    registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
    return Metrics(
        registry=registry,
        deliveries=Counter(
            "prguide_webhook_deliveries", "Webhook deliveries received, by event and outcome.",
            ("event", "outcome"), registry=registry,
        ),
        jobs=Gauge("prguide_jobs", "Jobs in the durable queue, by state.", ("state",), registry=registry),
        job_duration=Histogram(
            "prguide_job_duration_seconds", "Time to run one job, by event and outcome.",
            ("event", "outcome"), buckets=JOB_BUCKETS, registry=registry,
        ),
        api_requests=Counter(
            "prguide_github_api_requests", "GitHub REST API requests, by HTTP status.", ("status",), registry=registry
        ),
        api_errors=Counter(
            "prguide_github_api_errors", "GitHub REST API requests that failed, by HTTP status.", ("status",),
            registry=registry,
        ),
        rate_limit_remaining=Gauge(
            "prguide_github_rate_limit_remaining", "Requests left in the current GitHub rate-limit window.",
            registry=registry,
        ),
        api_expected=Counter(
            "prguide_github_api_expected_errors",
            "GitHub REST API error answers the caller expected (a missing optional file), by HTTP status.",
            ("status",), registry=registry,
        ),
        info=Gauge(
            "prguide_info", "Always 1; the labels say the version, the database backend and the role.",
            ("version", "backend", "role"), registry=registry,
        ),
    )

