"""The sandbox's headers, rate limits, planned faults, inspection state and runtime control."""

from __future__ import annotations

import aiohttp
import pytest
from sandbox_helpers import app_private_key, make_app_jwt, http, start_sandbox, synthetic_bundle  # noqa: F401

REPO = "octo-org/demo"
API = f"/repos/{REPO}"
PULL = f"{API}/pulls/7"
HEADERS = (
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-ratelimit-used",
    "x-ratelimit-resource",
    "x-github-request-id",
    "x-github-api-version-selected",
)


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


class SleepRecorder:
    """Stands in for asyncio.sleep so latency is checked without waiting."""

    def __init__(self):
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
async def sandbox(app_private_key, clock, sleeps):
    async with start_sandbox(app_private_key, bundles=[synthetic_bundle(7)], clock=clock, sleep=sleeps) as sb:
        yield sb


@pytest.fixture
async def auth(http, app_private_key, clock) -> dict[str, str]:
    jwt = make_app_jwt(app_private_key, now=clock())
    resp = await http.post("/app/installations/1/access_tokens", headers={"Authorization": f"Bearer {jwt}"})
    return {"Authorization": f"token {(await resp.json())['token']}"}


async def faults(http, *items) -> None:
    resp = await http.post("/_sandbox/faults", json=list(items))
    assert resp.status == 201, await resp.text()


# ----- headers and the primary rate limit ----------------------------------------------


async def test_every_answer_carries_githubs_headers(http, auth):
    answers = [
        await http.get(PULL, headers=auth),
        await http.post(f"{API}/issues/7/comments", json={"body": "x"}, headers=auth),
        await http.get(f"{API}/pulls/404", headers=auth),
        await http.get(PULL),
    ]
    assert [r.status for r in answers] == [200, 201, 404, 401]
    for resp in answers:
        assert all(name in resp.headers for name in HEADERS), resp.headers
        assert resp.headers["x-ratelimit-resource"] == "core"
        assert resp.headers["x-github-api-version-selected"] == "2022-11-28"
    assert len({r.headers["x-github-request-id"] for r in answers}) == 4
    assert "ETag" in answers[0].headers and "ETag" not in answers[1].headers


async def test_api_version_is_echoed(http, auth):
    resp = await http.get(PULL, headers={**auth, "X-GitHub-Api-Version": "2026-03-10"})
    assert resp.headers["x-github-api-version-selected"] == "2026-03-10"


async def test_remaining_counts_down_and_used_counts_up(http, auth, clock):
    seen = []
    for _ in range(3):
        resp = await http.get(PULL, headers=auth)
        seen.append((int(resp.headers["x-ratelimit-remaining"]), int(resp.headers["x-ratelimit-used"])))
    assert seen == [(4999, 1), (4998, 2), (4997, 3)]
    assert int(resp.headers["x-ratelimit-limit"]) == 5000
    assert int(resp.headers["x-ratelimit-reset"]) == int(clock()) + 3600


async def test_primary_limit_is_403_until_the_hour_has_passed(app_private_key, clock):
    async with start_sandbox(
        app_private_key, bundles=[synthetic_bundle(7)], clock=clock, rate_limit=2, token_lifetime=7200
    ) as sb:
        async with aiohttp.ClientSession(sb.base_url) as http:
            jwt = make_app_jwt(app_private_key, now=clock())
            token = (
                await (
                    await http.post("/app/installations/1/access_tokens", headers={"Authorization": f"Bearer {jwt}"})
                ).json()
            )["token"]
            auth = {"Authorization": f"token {token}"}
            assert [(await http.get(PULL, headers=auth)).status for _ in range(2)] == [200, 200]
            limited = await http.get(PULL, headers=auth)
            assert limited.status == 403
            assert limited.headers["x-ratelimit-remaining"] == "0"
            assert (await limited.json())["message"] == "API rate limit exceeded for installation ID 1."
            clock.now += 3600
            refreshed = await http.get(PULL, headers=auth)
            assert refreshed.status == 200
            assert refreshed.headers["x-ratelimit-remaining"] == "1"


# ----- faults -----------------------------------------------------------------------------


async def test_502_once_then_200(http, auth):
    await faults(http, {"method": "GET", "path": r"/pulls/7$", "status": 502})
    first = await http.get(PULL, headers=auth)
    assert first.status == 502
    body = await first.json()
    assert body["message"] == "Bad Gateway" and "documentation_url" in body
    assert (await http.get(PULL, headers=auth)).status == 200


async def test_secondary_limit_with_retry_after(http, auth):
    await faults(http, {"path": "/issues/7/comments", "method": "POST", "status": 403, "retry_after": 60})
    resp = await http.post(f"{API}/issues/7/comments", json={"body": "x"}, headers=auth)
    assert resp.status == 403
    assert resp.headers["retry-after"] == "60"
    assert resp.headers["x-ratelimit-remaining"] != "0"
    body = await resp.json()
    assert body["message"].startswith("You have exceeded a secondary rate limit")
    assert resp.headers["x-github-request-id"] in body["message"]
    assert (await http.post(f"{API}/issues/7/comments", json={"body": "x"}, headers=auth)).status == 201


@pytest.mark.parametrize("status", [403, 429])
async def test_primary_limit_fault(http, auth, status):
    await faults(http, {"path": "/pulls/7", "status": status, "rate_limit_remaining": 0})
    resp = await http.get(PULL, headers=auth)
    assert resp.status == status
    assert resp.headers["x-ratelimit-remaining"] == "0"
    assert (await resp.json())["message"].startswith("API rate limit exceeded")


async def test_times_counts_matching_requests_and_null_means_forever(http, auth):
    await faults(http, {"path": "/pulls/7$", "status": 500, "times": 2})
    assert [(await http.get(PULL, headers=auth)).status for _ in range(3)] == [500, 500, 200]
    await faults(http, {"path": "/pulls/7$", "status": 503, "times": None})
    assert [(await http.get(PULL, headers=auth)).status for _ in range(4)] == [503] * 4
    listed = await (await http.get("/_sandbox/faults")).json()
    assert listed["faults"][-1]["times"] is None
    assert (await http.delete("/_sandbox/faults")).status == 204
    assert (await http.get(PULL, headers=auth)).status == 200


async def test_fault_matches_method_and_path(http, auth):
    await faults(http, {"method": "POST", "path": "/pulls/7", "status": 500})
    assert (await http.get(PULL, headers=auth)).status == 200
    await faults(http, {"path": r"page=2", "status": 500})
    assert (await http.get(f"{PULL}/files?page=1", headers=auth)).status == 200
    assert (await http.get(f"{PULL}/files?page=2", headers=auth)).status == 500


async def test_rate_limit_remaining_alone_sets_the_count(http, auth):
    await faults(http, {"path": "/pulls/7", "rate_limit_remaining": 1})
    last = await http.get(PULL, headers=auth)
    assert (last.status, last.headers["x-ratelimit-remaining"]) == (200, "0")
    limited = await http.get(PULL, headers=auth)
    assert limited.status == 403
    assert (await limited.json())["message"].startswith("API rate limit exceeded")


async def test_latency_waits_before_answering(http, auth, sleeps):
    await faults(http, {"path": "/pulls/7", "latency_ms": 250})
    assert (await http.get(PULL, headers=auth)).status == 200
    assert (await http.get(PULL, headers=auth)).status == 200
    assert sleeps.calls == [0.25]


async def test_global_latency(app_private_key, clock, sleeps):
    async with start_sandbox(
        app_private_key, bundles=[synthetic_bundle(7)], clock=clock, sleep=sleeps, latency_ms=20
    ) as sb:
        async with aiohttp.ClientSession(sb.base_url) as http:
            await http.get(PULL)
            await http.get("/_sandbox/state")
    assert sleeps.calls == [0.02]


@pytest.mark.parametrize(
    "item",
    [
        {"path": "("},
        {"path": "x", "status": 700},
        {"path": "x", "status": 500, "times": 0},
        {"path": "x"},
        {"path": "x", "status": 500, "colour": "red"},
        "not an object",
    ],
)
async def test_bad_fault_is_400_and_adds_nothing(http, item):
    resp = await http.post("/_sandbox/faults", json=[item])
    assert resp.status == 400
    assert (await resp.json())["message"]
    assert (await (await http.get("/_sandbox/faults")).json())["faults"] == []


# ----- inspection state and control ----------------------------------------------------


async def test_state_has_exactly_the_documented_shape(http, auth):
    comment = await (await http.post(f"{API}/issues/7/comments", json={"body": "guide"}, headers=auth)).json()
    await http.post(f"{API}/issues/7/labels", json={"labels": ["docs"]}, headers=auth)
    await http.post(f"{API}/issues/comments/{comment['id']}/reactions", json={"content": "rocket"}, headers=auth)
    await http.get(f"{PULL}/files?per_page=2&page=1", headers=auth)
    state = await (await http.get("/_sandbox/state")).json()
    assert state == {
        "comments": {f"{REPO}#7": [{"id": comment["id"], "user": "prguide[bot]", "body": "guide"}]},
        "labels": {f"{REPO}#7": ["docs"]},
        "requests": [
            {"method": "POST", "path": "/app/installations/1/access_tokens", "status": 201},
            {"method": "POST", "path": f"{API}/issues/7/comments", "status": 201},
            {"method": "POST", "path": f"{API}/issues/7/labels", "status": 200},
            {"method": "POST", "path": f"{API}/issues/comments/{comment['id']}/reactions", "status": 201},
            {"method": "GET", "path": f"{PULL}/files?per_page=2&page=1", "status": 200},
        ],
        "reactions": {str(comment["id"]): [{"user": "prguide[bot]", "content": "rocket"}]},
    }


async def test_state_of_a_fresh_sandbox_is_empty(http):
    assert await (await http.get("/_sandbox/state")).json() == {
        "comments": {},
        "labels": {},
        "requests": [],
        "reactions": {},
    }


async def test_faulted_requests_are_recorded_with_their_status(http, auth, sandbox):
    await faults(http, {"path": "/pulls/7$", "status": 502})
    await http.get(PULL, headers=auth)
    assert sandbox.requests[-1] == {"method": "GET", "path": PULL, "status": 502}


async def test_reset_clears_comments_labels_reactions_and_requests(http, auth, sandbox):
    await http.post(f"{API}/issues/7/comments", json={"body": "x"}, headers=auth)
    await http.post(f"{API}/issues/7/labels", json={"labels": ["docs"]}, headers=auth)
    assert (await http.post("/_sandbox/reset")).status == 204
    assert sandbox.snapshot() == {"comments": {}, "labels": {}, "requests": [], "reactions": {}}
    assert (await http.get(PULL, headers=auth)).status == 200


async def test_pull_requests_added_at_runtime(http, auth):
    bundle = synthetic_bundle(21, repo="other-org/tool")
    resp = await http.post("/_sandbox/pulls", json={"bundle": bundle})
    assert (resp.status, await resp.json()) == (201, {"repo": "other-org/tool", "number": 21})
    pull = await (await http.get("/repos/other-org/tool/pulls/21", headers=auth)).json()
    assert pull["title"] == "Change number 21"
    moved = await http.post(
        "/_sandbox/pulls", json={"repo": "octo-org/demo", "bundle": synthetic_bundle(22, repo="x/y")}
    )
    assert (await moved.json())["repo"] == "octo-org/demo"
    assert (await http.get(f"{API}/pulls/22", headers=auth)).status == 200
    broken = await http.post("/_sandbox/pulls", json={"bundle": {"pull": {"number": 1}}})
    assert broken.status == 400
    assert "repository" in (await broken.json())["message"]


async def test_unknown_control_path_is_404(http):
    assert (await http.get("/_sandbox/nothing")).status == 404
