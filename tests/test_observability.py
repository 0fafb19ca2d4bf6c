"""What operators see: JSON log lines, ``/metrics`` and ``/healthz``, and never a secret.

A day's worth of traffic runs through the real app and the GitHub sandbox on loopback
(a guide, a GitHub outage, an expired token, a forged delivery, a job that keeps
failing and is retried by hand, an uninstall) while every log record, at DEBUG, is
captured. The credentials in play are then looked for, by value, in what was logged.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
import pytest_asyncio
from conftest import CORPUS
from loopback import ADMIN_TOKEN, REPO, SECRET, SMALL_PR, app_private_key, start_loopback  # noqa: F401

from bot.app.logging import JsonFormatter, RedactSecrets
from bot.app.server import wait_idle

# The day runs once; every test reads what it left behind.
pytestmark = [pytest.mark.corpus, pytest.mark.asyncio(loop_scope="module")]

FILES = rf"^/repos/{REPO}/pulls/{SMALL_PR}/files"


class Capture:
    """Every log record of the process (the sandbox's own excepted), as the server writes them."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.records: list[logging.LogRecord] = []
        self.raw: list[str] = []
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(JsonFormatter())
        self.handler.addFilter(self._keep)
        self.handler.addFilter(RedactSecrets())

    def _keep(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("bot.sandbox"):
            return False
        # What the code logged, before the redaction filter had a chance to mask anything.
        text = JsonFormatter().format(logging.makeLogRecord(vars(record)))
        self.raw.append(text)
        self.records.append(record)
        return True

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]


@pytest.fixture(scope="module")
def capture() -> Iterator[Capture]:
    cap = Capture()
    root = logging.getLogger()
    level = root.level
    root.addHandler(cap.handler)
    root.setLevel(logging.DEBUG)
    try:
        yield cap
    finally:
        root.removeHandler(cap.handler)
        root.setLevel(level)


def read_json(path) -> dict:
    if not path.exists():
        pytest.skip(f"{path} not found (set PRGUIDE_SHARED to the shared/ folder)")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def day(app_private_key, tmp_path_factory, capture):  # noqa: F811
    """Run the day's traffic; yield the loopback, the capture and the secrets that were in play."""
    numbers = (SMALL_PR, 7422, 7404, 7358)
    bundles = {n: read_json(CORPUS / f"{n}.json") for n in numbers}
    tmp_path = tmp_path_factory.mktemp("day")
    pool = {"max_attempts": 2, "backoff": lambda attempt: 0.0}
    async with start_loopback(app_private_key, tmp_path, bundles, pool_options=pool) as lb:
        await lb.merged(SMALL_PR, delivery="day-guide")

        lb.sandbox.add_faults([{"method": "GET", "path": rf"/pulls/7422/files", "status": 502}])
        await lb.merged(7422, delivery="day-outage")

        lb.sandbox.expire_tokens()
        await lb.merged(7404, delivery="day-expired")

        forged = await lb.deliver(lb.payload(7358), delivery="day-forged", secret="forged")
        assert forged.status == 401

        lb.sandbox.add_faults([{"method": "GET", "path": rf"/pulls/7358/files", "status": 500, "times": None}])
        await lb.merged(7358, delivery="day-doomed")
        parked_health = await (await lb.client.get("/healthz")).json()
        lb.sandbox.clear_faults()
        retried = await lb.client.post("/admin/jobs/retry", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert await retried.json() == {"retried": 1}
        await wait_idle(lb.app)

        uninstall = lb.sandbox.state.installation_event(1, "deleted")
        assert (await lb.deliver(uninstall, delivery="day-uninstall", event="installation")).status == 202
        await wait_idle(lb.app)  # the installation's work is cancelled (none is left)

        auth = lb.state.services.auth
        secrets = {
            "webhook secret": SECRET,
            "admin token": ADMIN_TOKEN,
            "app JWT": auth.app_jwt(),
            **{f"installation token {i}": token for i, token in enumerate(lb.sandbox.state.tokens)},
            **{
                f"private key line {i}": line
                for i, line in enumerate(app_private_key.decode().splitlines())
                if "PRIVATE KEY" not in line
            },
        }
        assert len(lb.sandbox.state.tokens) >= 2  # the expired token and its replacement
        lb.parked_health = parked_health
        yield lb, capture, secrets


async def test_no_token_secret_jwt_or_key_is_ever_logged(day):
    lb, capture, secrets = day
    assert len(capture.records) > 20
    everything = capture.stream.getvalue()
    raw = "\n".join(capture.raw)
    for name, value in secrets.items():
        assert value not in everything, f"the {name} was logged"
        assert value not in raw, f"the {name} was logged (before redaction)"
    # The deliveries themselves are not logged either: only their ids and facts.
    assert "sha256=" not in everything


def job_lines(capture: Capture) -> dict[str, list[dict]]:
    by_delivery: dict[str, list[dict]] = {}
    for line in capture.lines():
        if line["logger"] == "prguide.jobs":
            by_delivery.setdefault(line["delivery"], []).append(line)
    return by_delivery


async def test_every_job_line_says_who_what_state_calls_and_duration(day):
    lb, capture, _ = day
    jobs = job_lines(capture)
    assert set(jobs) == {"day-guide", "day-outage", "day-expired", "day-doomed", "day-uninstall"}
    (uninstall,) = jobs.pop("day-uninstall")  # about the installation, not a pull request; no API call
    assert (uninstall["installation"], uninstall["outcome"], uninstall["state"]) == (1, "cancelled_0", "done")
    for lines in jobs.values():
        for line in lines:
            assert line["installation"] == 1
            assert line["repository"] == REPO
            assert isinstance(line["number"], int)
            assert line["state"] in ("done", "queued", "parked")
            assert isinstance(line["api_calls"], int) and line["api_calls"] > 0
            assert line["duration_ms"] > 0
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["ts"])

    (guide,) = jobs["day-guide"]
    assert (guide["number"], guide["outcome"], guide["state"], guide["level"]) == (SMALL_PR, "created", "done", "info")
    # The outage cost a retried request inside the job, not another job run.
    (outage,) = jobs["day-outage"]
    assert (outage["attempt"], outage["outcome"], outage["state"]) == (1, "created", "done")
    doomed = [(line["attempt"], line["outcome"], line["state"]) for line in jobs["day-doomed"]]
    assert doomed == [(1, "retry_later", "queued"), (2, "retry_later", "parked"), (1, "created", "done")]
    assert "500" in jobs["day-doomed"][0]["reason"]


async def test_the_pool_logs_each_change_of_job_state(day):
    lb, capture, _ = day
    pool_lines = [line for line in capture.lines() if line["logger"] == "bot.app.jobs" and "state" in line]
    doomed = [(line["attempt"], line["state"]) for line in pool_lines if line["delivery"] == "day-doomed"]
    assert doomed == [(1, "queued"), (2, "parked"), (1, "done")]
    parked = next(line for line in pool_lines if line["state"] == "parked")
    assert parked["level"] == "error" and "500" in parked["error"] and parked["key"] == f"{REPO}#7358"
    assert parked["installation"] == 1


async def test_delivery_lines_say_what_came_in_and_what_became_of_it(day):
    lb, capture, _ = day
    server = [line for line in capture.lines() if line["logger"] == "prguide.server"]
    by_delivery = {line.get("delivery"): line for line in server}
    assert by_delivery["day-guide"]["outcome"] == "queued"
    assert by_delivery["day-guide"]["installation"] == 1 and by_delivery["day-guide"]["event"] == "pull_request"
    assert by_delivery["day-forged"]["status"] == 401 and by_delivery["day-forged"]["level"] == "warning"
    assert by_delivery["day-uninstall"]["outcome"] == "queued"  # its token dropped, its work to be cancelled


async def test_healthz_shows_parked_jobs(day):
    lb, _, _ = day
    assert lb.parked_health["ok"] is True
    assert lb.parked_health["parked"] == 1 and lb.parked_health["queue"]["parked"] == 1
    after = await (await lb.client.get("/healthz")).json()
    assert after["parked"] == 0 and after["queue"] == {"queued": 0, "running": 0, "done": 5, "parked": 0}


def samples(text: str) -> dict[str, float]:
    """Prometheus text exposition -> ``{"name{labels}": value}``."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


async def test_metrics_cover_deliveries_queue_latency_api_calls_and_rate_limit(day):
    lb, _, _ = day
    resp = await lb.client.get("/metrics")
    assert resp.status == 200 and resp.content_type == "text/plain"
    m = samples(await resp.text())

    # Deliveries by event and outcome.
    assert m['prguide_webhook_deliveries_total{event="pull_request",outcome="queued"}'] == 4
    assert m['prguide_webhook_deliveries_total{event="unverified",outcome="unauthorized"}'] == 1
    assert m['prguide_webhook_deliveries_total{event="installation",outcome="queued"}'] == 1
    # Queue depth by state.
    assert m['prguide_jobs{state="done"}'] == 5  # four merges and the uninstall
    assert m['prguide_jobs{state="parked"}'] == 0 and m['prguide_jobs{state="queued"}'] == 0
    # Job latency: a histogram per event and outcome.
    assert m['prguide_job_duration_seconds_count{event="pull_request",outcome="created"}'] == 4
    assert m['prguide_job_duration_seconds_count{event="pull_request",outcome="retry_later"}'] == 2
    assert m['prguide_job_duration_seconds_bucket{event="pull_request",le="+Inf",outcome="created"}'] == 4
    assert m['prguide_job_duration_seconds_sum{event="pull_request",outcome="created"}'] > 0
    # GitHub API calls and errors by status, and the rate limit left.
    requests = lb.sandbox.requests
    by_status: dict[int, int] = {}
    for r in requests:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    by_status[200] += 1  # the start-up GET /app, which the harness left out of the log
    for status, count in by_status.items():
        assert m[f'prguide_github_api_requests_total{{status="{status}"}}'] == count
    assert m['prguide_github_api_errors_total{status="502"}'] == 1
    assert m['prguide_github_api_errors_total{status="500"}'] == by_status[500]
    assert m['prguide_github_api_errors_total{status="401"}'] == by_status[401] >= 1
    assert not any(k.startswith("prguide_github_api_errors_total") and '"20' in k for k in m)
    remaining = m["prguide_github_rate_limit_remaining"]
    assert 0 < remaining < 5000
