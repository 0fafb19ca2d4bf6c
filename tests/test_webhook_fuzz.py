"""Fuzzing ``POST /webhook`` with random headers and bodies (hypothesis).

Whatever arrives, the server answers 2xx or 4xx, never 5xx, and keeps serving; a
delivery without the right signature queues nothing and makes no GitHub call. The
real app runs on loopback against the GitHub sandbox; the examples are derandomised
so every run tries the same inputs.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import SECRET, app_private_key, delivery_headers, loopback, raw_post  # noqa: F401
from sandbox_helpers import comment_payload

from bot.app.server import wait_idle
from bot.app.webhook import sign
from bot.payloads import merged_pull_request

pytestmark = pytest.mark.corpus

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

EVENTS = ["pull_request", "issue_comment", "installation", "ping", "push", "pull_request_review", "star", ""]
ACTIONS = ["closed", "opened", "created", "edited", "deleted", "suspend", "submitted", ""]

printable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)
header_names = st.sampled_from(
    ["X-GitHub-Event", "X-GitHub-Delivery", "Content-Type", "X-Hub-Signature-256", "X-Hub-Signature", "X-GitHub-Hook-ID", "Content-Encoding"]
) | st.from_regex(r"X-[A-Za-z][A-Za-z0-9-]{0,20}", fullmatch=True)
content_types = st.sampled_from(
    ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "text/plain", "application/x-www-form-urlencoded", ""]
) | printable

# JSON shaped like what prguide reads, with the wrong types and values mixed in.
# Lone surrogates are legal in JSON text ("\\udcff") but not in UTF-8, SQLite or our logs.
texts = st.text(max_size=30) | st.text(st.characters(categories=["Cs"]) | st.characters(max_codepoint=0x7F), max_size=8)
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False) | texts
keys = st.sampled_from(
    ["action", "pull_request", "repository", "installation", "sender", "issue", "comment", "number", "merged",
     "full_name", "id", "login", "type", "body", "title", "user", "head", "base", "repo", "labels", "changes"]
) | st.text(max_size=10)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=6), max_leaves=25)


@st.composite
def payloads(draw) -> dict:
    """A payload with prguide's fields present, absent or of any type."""
    payload = draw(st.dictionaries(keys, json_values, max_size=6))
    if draw(st.booleans()):
        payload["action"] = draw(st.sampled_from(ACTIONS) | texts | json_values)
    if draw(st.booleans()):
        payload["installation"] = draw(st.just({"id": 1}) | json_values)
    if draw(st.booleans()):
        payload["repository"] = draw(
            st.just({"full_name": "verl-project/verl", "default_branch": "main"})
            | st.builds(lambda name: {"full_name": name}, texts)
            | json_values
        )
    if draw(st.booleans()):
        pull = draw(st.dictionaries(keys, json_values, max_size=4))
        pull.update(draw(st.fixed_dictionaries({}, optional={"number": st.integers(-5, 10**6) | json_values, "merged": json_values})))
        payload["pull_request"] = pull
    if draw(st.booleans()):
        payload["issue"] = draw(st.just({"number": 7491, "pull_request": {}}) | json_values)
        payload["comment"] = draw(st.just({"id": 1, "body": "/prguide help", "user": {"login": "x"}}) | json_values)
    return payload


VALID = {
    "pull_request": merged_pull_request(
        {
            "number": 7491, "title": "Fix", "body": "Why.", "user": {"login": "alice", "type": "User"},
            "labels": [], "changed_files": 2, "head": {"sha": "0" * 40}, "base": {"ref": "main"},
        },
        {"full_name": "verl-project/verl", "default_branch": "main", "private": False},
        installation_id=1,
    ),  # fmt: skip
    "issue_comment": comment_payload("/prguide refresh", repo="verl-project/verl", number=7491),
}
PATHS = {
    "pull_request": [
        ("action",), ("number",), ("pull_request",), ("pull_request", "number"), ("pull_request", "merged"),
        ("pull_request", "title"), ("pull_request", "body"), ("pull_request", "user"), ("pull_request", "labels"),
        ("pull_request", "changed_files"), ("pull_request", "head"), ("pull_request", "base"), ("repository",),
        ("repository", "full_name"), ("repository", "default_branch"), ("repository", "private"), ("installation",),
        ("installation", "id"), ("sender",), ("sender", "login"), ("sender", "type"),
    ],
    "issue_comment": [
        ("action",), ("issue",), ("issue", "number"), ("issue", "pull_request"), ("issue", "state"), ("comment",),
        ("comment", "id"), ("comment", "body"), ("comment", "user"), ("repository", "full_name"),
        ("installation", "id"), ("sender",), ("sender", "type"), ("changes",),
    ],
}
_DELETE = object()
SERIAL = itertools.count(1)


@st.composite
def mutated(draw) -> tuple[str, dict]:
    """A valid delivery of a routed event with one to three fields replaced or removed."""
    event = draw(st.sampled_from(sorted(VALID)))
    payload = json.loads(json.dumps(VALID[event]))
    for path in draw(st.lists(st.sampled_from(PATHS[event]), min_size=1, max_size=3)):
        parent = payload
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        value = draw(st.just(_DELETE) | texts | json_values | st.sampled_from(["/prguide lang zh", "a/b", True, 7491]))
        if value is _DELETE:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
    return event, payload


async def quiet(lb) -> tuple[dict, int]:
    """Wait for running jobs; return the job counts and the number of GitHub requests so far."""
    await wait_idle(lb.app)
    return lb.jobs(), len(lb.sandbox.requests)


@FUZZ
@given(
    headers=st.dictionaries(header_names, printable, max_size=6),
    body=st.binary(max_size=512) | json_values.map(lambda v: json.dumps(v).encode()),
    signing=st.sampled_from(["right", "wrong", "sha1", "none", "keep"]),
)
async def test_random_headers_and_bodies_get_2xx_or_4xx(loopback, headers, body, signing):
    before = await quiet(loopback)
    sent = dict(headers)
    if signing == "right":
        sent["X-Hub-Signature-256"] = sign(SECRET, body)
    elif signing == "wrong":
        sent["X-Hub-Signature-256"] = sign("not the secret", body)
    elif signing == "sha1":
        sent.pop("X-Hub-Signature-256", None)
        sent["X-Hub-Signature"] = "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest()
    elif signing == "none":
        sent.pop("X-Hub-Signature-256", None)
    resp = await loopback.post(body, sent)
    assert 200 <= resp.status < 500, (resp.status, await resp.text())
    if signing != "right" and sent.get("X-Hub-Signature-256") != sign(SECRET, body):
        assert resp.status == 401
        assert await quiet(loopback) == before  # nothing queued, nothing called


@FUZZ
@given(
    event=st.sampled_from(EVENTS[:-1]) | st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
    payload=payloads(),
    content_type=content_types,
    delivery=st.uuids().map(str) | printable,
)
async def test_signed_payloads_of_any_shape_get_2xx_or_4xx(loopback, event, payload, content_type, delivery):
    body = json.dumps(payload).encode()
    headers = delivery_headers(body, event=event, delivery=delivery)
    headers["Content-Type"] = content_type
    resp = await loopback.post(body, headers)
    assert 200 <= resp.status < 500, (resp.status, await resp.text())
    await wait_idle(loopback.app)
    assert loopback.jobs()["running"] == 0


@FUZZ
@given(case=mutated())
async def test_mutated_deliveries_are_refused_ignored_or_done(loopback, case):
    event, payload = case
    body = json.dumps(payload).encode()
    delivery = f"mutated-{next(SERIAL)}"
    resp = await loopback.post(body, delivery_headers(body, event=event, delivery=delivery))
    assert resp.status in (200, 202, 400), (resp.status, await resp.text())
    await wait_idle(loopback.app)
    # A queued delivery finished or was given up; none is failing and waiting to retry.
    store = loopback.state.store
    row = store.conn.execute("SELECT state, error FROM jobs WHERE delivery_id = ?", (delivery,)).fetchone()
    assert (row is not None) == (resp.status == 202)
    if row is not None:
        assert row["state"] == "done", row["error"]


@FUZZ
@given(
    header=st.binary(max_size=60).filter(lambda b: b"\r" not in b and b"\n" not in b),
    where=st.sampled_from(["X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery", "Content-Type"]),
    signed=st.booleans(),
)
async def test_raw_header_bytes_get_2xx_or_4xx(loopback, header, where, signed):
    before = await quiet(loopback)
    body = json.dumps(loopback.payload()).encode()
    fields = {
        "X-GitHub-Event": b"pull_request",
        "X-GitHub-Delivery": b"raw-1",
        "Content-Type": b"application/json",
        "X-Hub-Signature-256": sign(SECRET if signed else "wrong", body).encode(),
    }
    fields[where] = header
    lines = b"".join(name.encode() + b": " + value + b"\r\n" for name, value in fields.items())
    status = await raw_post(loopback.client.host, loopback.client.port, lines, body)
    assert 200 <= status < 500
    if not signed or where == "X-Hub-Signature-256":
        assert status in (400, 401)  # aiohttp itself answers 400 to bytes HTTP does not allow
        assert await quiet(loopback) == before
