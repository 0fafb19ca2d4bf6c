"""Webhook deliveries: signature verification, header and payload checks, routing keys."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from bot.app.webhook import (
    MAX_BODY_BYTES,
    BadDelivery,
    SignatureError,
    UnsupportedMediaType,
    parse_delivery,
    sign,
    verify_signature,
)

SECRET = "It's a Secret to Everybody"


def headers_for(body: bytes, event: str = "pull_request", *, secret: str = SECRET, **extra: str) -> dict[str, str]:
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(secret, body),
    }
    headers.update(extra)
    return headers


def test_sign_matches_githubs_documented_example():
    # The worked example in GitHub's "Validating webhook deliveries".
    assert sign(SECRET, b"Hello, World!") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )


def test_good_signature_passes():
    body = b'{"zen": "Keep it logically awesome."}'
    verify_signature(SECRET, body, sign(SECRET, body))
    verify_signature(SECRET, body, sign(SECRET, body).upper().replace("SHA256=", "sha256="))


def test_body_with_emoji_and_non_ascii_verifies():
    body = json.dumps({"title": "修复 🚀 naïve"}, ensure_ascii=False).encode("utf-8")
    assert not body.isascii()
    verify_signature(SECRET, body, sign(SECRET, body))


@pytest.mark.parametrize(
    "header, reason",
    [
        (None, "missing"),
        ("", "missing"),
        ("sha256=" + "0" * 64, "does not match"),
        ("sha256=abc", "64 hex digits"),
        ("sha1=" + hmac.new(SECRET.encode(), b"{}", hashlib.sha1).hexdigest(), "64 hex digits"),
        ("sha256=" + "é" * 64, "not ASCII"),
        ("sha256=" + "０" * 64, "not ASCII"),
    ],
)
def test_bad_signatures_are_refused(header, reason):
    with pytest.raises(SignatureError, match=reason) as info:
        verify_signature(SECRET, b"{}", header)
    assert info.value.status == 401


def test_signature_with_another_secret_is_refused():
    with pytest.raises(SignatureError):
        verify_signature(SECRET, b"{}", sign("other", b"{}"))


def test_sha1_only_delivery_is_refused():
    body = b'{"zen": "x"}'
    headers = headers_for(body, "ping")
    del headers["X-Hub-Signature-256"]
    headers["X-Hub-Signature"] = "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest()
    with pytest.raises(SignatureError, match="missing"):
        parse_delivery(headers, body, secret=SECRET)


def test_empty_secret_refuses_everything():
    with pytest.raises(SignatureError):
        verify_signature("", b"{}", sign("", b"{}"))


def test_signature_is_checked_before_anything_else():
    body = b"not json"
    with pytest.raises(SignatureError):
        parse_delivery({"Content-Type": "text/plain"}, body, secret=SECRET)


def test_merged_pull_request_delivery(webhook_payload):
    payload = webhook_payload("pull_request", "closed.payload.json")
    body = json.dumps(payload).encode()
    delivery = parse_delivery(headers_for(body), body, secret=SECRET)
    assert delivery.event == "pull_request"
    assert delivery.action == "closed"
    assert delivery.id == "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    assert delivery.installation_id == 1
    assert delivery.key == "Codertocat/Hello-World#2"
    assert delivery.repository == "Codertocat/Hello-World"
    assert delivery.sender_login == "Codertocat" and not delivery.sender_is_bot
    assert delivery.body == body
    assert delivery.payload["pull_request"]["number"] == 2


def test_header_names_are_case_insensitive(webhook_payload):
    body = json.dumps(webhook_payload("ping", "payload.json")).encode()
    headers = {k.lower(): v for k, v in headers_for(body, "ping").items()}
    delivery = parse_delivery(headers, body, secret=SECRET)
    assert (delivery.event, delivery.action, delivery.key) == ("ping", None, None)


def test_issue_comment_key_uses_the_issue_number(webhook_payload):
    payload = webhook_payload("issue_comment", "created.with-installation.payload.json")
    body = json.dumps(payload).encode()
    delivery = parse_delivery(headers_for(body, "issue_comment"), body, secret=SECRET)
    assert delivery.key == f"{payload['repository']['full_name']}#{payload['issue']['number']}"


@pytest.mark.parametrize("missing", ["X-GitHub-Event", "X-GitHub-Delivery"])
def test_missing_github_headers_are_400(missing):
    body = b"{}"
    headers = headers_for(body)
    del headers[missing]
    with pytest.raises(BadDelivery, match=missing) as info:
        parse_delivery(headers, body, secret=SECRET)
    assert info.value.status == 400


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", None])
def test_other_content_types_are_415(content_type):
    body = b"payload=%7B%7D"
    headers = headers_for(body, "ping")
    if content_type is None:
        del headers["Content-Type"]
    else:
        headers["Content-Type"] = content_type
    with pytest.raises(UnsupportedMediaType, match="application/json") as info:
        parse_delivery(headers, body, secret=SECRET)
    assert info.value.status == 415


def test_content_type_with_charset_is_json():
    body = b'{"zen": "x"}'
    delivery = parse_delivery(headers_for(body, "ping", **{"Content-Type": "application/json; charset=utf-8"}), body, secret=SECRET)
    assert delivery.payload == {"zen": "x"}


@pytest.mark.parametrize(
    "body, message",
    [
        (b'{"action": "closed", "pull_request": {', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"[1, 2]", "JSON list, not an object"),
        (b'"text"', "JSON str, not an object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"action": 5}', "'action' is not a string"),
    ],
)
def test_malformed_bodies_are_400(body, message):
    with pytest.raises(BadDelivery, match=message):
        parse_delivery(headers_for(body, "ping"), body, secret=SECRET)


@pytest.mark.parametrize("field", ["pull_request", "repository", "installation"])
def test_pull_request_without_what_prguide_reads_is_400(webhook_payload, field):
    payload = webhook_payload("pull_request", "closed.payload.json")
    del payload[field]
    body = json.dumps(payload).encode()
    with pytest.raises(BadDelivery, match=field):
        parse_delivery(headers_for(body), body, secret=SECRET)


def test_pull_request_without_number_or_repository_name_is_400(webhook_payload):
    payload = webhook_payload("pull_request", "closed.payload.json")
    del payload["pull_request"]["number"]
    body = json.dumps(payload).encode()
    with pytest.raises(BadDelivery, match="number"):
        parse_delivery(headers_for(body), body, secret=SECRET)
    payload = webhook_payload("pull_request", "closed.payload.json")
    payload["repository"]["full_name"] = None
    body = json.dumps(payload).encode()
    with pytest.raises(BadDelivery, match="full_name"):
        parse_delivery(headers_for(body), body, secret=SECRET)


def test_installation_id_must_be_a_number(webhook_payload):
    payload = webhook_payload("pull_request", "closed.payload.json")
    payload["installation"]["id"] = "1"
    body = json.dumps(payload).encode()
    with pytest.raises(BadDelivery, match="installation.id"):
        parse_delivery(headers_for(body), body, secret=SECRET)


def test_unknown_events_are_parsed_without_field_checks():
    body = b'{"action": "created", "starred_at": null}'
    delivery = parse_delivery(headers_for(body, "star"), body, secret=SECRET)
    assert (delivery.event, delivery.action, delivery.installation_id, delivery.key) == ("star", "created", None, None)


def test_oversized_body_is_refused():
    body = b" " * (MAX_BODY_BYTES + 1)
    with pytest.raises(BadDelivery, match="cap"):
        parse_delivery(headers_for(body, "ping"), body, secret=SECRET)


def test_bot_senders_are_recognised(webhook_payload):
    payload = webhook_payload("pull_request", "closed.payload.json")
    payload["sender"] = {"login": "renovate[bot]", "type": "Bot"}
    body = json.dumps(payload).encode()
    assert parse_delivery(headers_for(body), body, secret=SECRET).sender_is_bot


def test_signed_but_absurdly_nested_json_is_a_bad_delivery_not_a_crash():
    body = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(BadDelivery, match="nested too deeply"):
        parse_delivery(headers_for(body), body, secret=SECRET)
