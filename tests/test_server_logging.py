"""JSON-lines logging and the last-line-of-defence secret redaction."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.app.logging import REDACTED, JsonFormatter, RedactSecrets, configure_logging, redact

TOKEN = "ghs_" + "A1b2C3d4" * 5
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjMiLCJpYXQiOjF9.c2lnbmF0dXJlLWJ5dGVz"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    "text, secret",
    [
        (f"token {TOKEN} used", TOKEN),
        (f"jwt={JWT}", JWT),
        (f"key:\n{PEM}\nafter", "MIIEowIBAAKCAQEA"),
        ("headers {'Authorization': 'token abc123secret'}", "abc123secret"),
        ("Authorization: Bearer abc.def.ghi", "abc.def.ghi"),
        ("X-Hub-Signature-256: sha256=" + "ab" * 32, "ab" * 32),
        ("github_pat_" + "x" * 30, "x" * 30),
    ],
)
def test_redact_masks_credentials(text, secret):
    out = redact(text)
    assert secret not in out
    assert REDACTED in out


def test_redact_leaves_ordinary_text_alone():
    text = "pull request octo/repo#12 merged; authorization failed once; sha256 of nothing"
    assert redact(text) == text


@pytest.fixture
def capture():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactSecrets())
    logger = logging.getLogger("prguide.test.logging")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_one_json_object_per_line_with_extra_fields(capture):
    logger, stream = capture
    logger.info("job %s done", "abc", extra={"delivery": "d-1", "repository": "o/r", "number": 7, "duration_ms": 12.5})
    logger.warning("second\nline")
    first, second = lines(stream)
    assert first["msg"] == "job abc done"
    assert first["level"] == "info"
    assert first["logger"] == "prguide.test.logging"
    assert (first["delivery"], first["repository"], first["number"], first["duration_ms"]) == ("d-1", "o/r", 7, 12.5)
    assert first["ts"].endswith("Z")
    assert second["msg"] == "second\nline"


def test_secrets_in_message_args_extra_and_exceptions_are_redacted(capture):
    logger, stream = capture
    try:
        raise RuntimeError(f"bad credentials {TOKEN}")
    except RuntimeError:
        logger.exception("call failed with %s", JWT, extra={"headers": {"authorization": f"token {TOKEN}"}})
    (record,) = lines(stream)
    dumped = json.dumps(record)
    assert TOKEN not in dumped and JWT not in dumped
    assert "RuntimeError" in record["exc"]
    assert record["headers"]["authorization"] == REDACTED


def test_configure_logging_installs_one_root_handler():
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    try:
        handler = configure_logging("WARNING", stream=stream)
        configure_logging("WARNING", stream=stream)
        assert len(root.handlers) == 1
        logging.getLogger("some.library").warning("leaked %s", TOKEN)
        logging.getLogger("some.library").info("too quiet")
        (record,) = lines(stream)
        assert TOKEN not in record["msg"]
        assert isinstance(handler.formatter, JsonFormatter)
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in saved[0]:
            root.addHandler(h)
        root.setLevel(saved[1])


def test_the_secret_prefilter_keeps_each_patterns_flags():
    import re

    from bot.app.logging import _scoped

    combined = re.compile("|".join(_scoped(p) for p in (re.compile(r"(?im)^token: \w+$"), re.compile("a.b", re.S))))
    assert combined.search("x\nTOKEN: abc\ny")  # IGNORECASE and MULTILINE survive
    assert combined.search("a\nb")  # DOTALL survives
