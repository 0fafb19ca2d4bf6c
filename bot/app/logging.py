"""JSON-lines logging for the server, with a redaction filter as a last line of defence.

Each record becomes one JSON object on one line: ``ts`` (UTC ISO 8601), ``level``,
``logger``, ``msg``, every ``extra={...}`` field, and ``exc`` when an exception was
logged. Code must never log secrets; :class:`RedactSecrets` masks anything that still
looks like a GitHub token, a JWT, a PEM block or an ``Authorization`` value.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import IO, Any

REDACTED = "[REDACTED]"

#: What a credential looks like in text. GitHub token prefixes are documented in
#: "About authentication to GitHub" (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_).
SECRET_PATTERNS = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    re.compile(r"(?i)\b((?:authorization|x-hub-signature(?:-256)?)['\"]?\s*[:=]\s*['\"]?)(?:(?:bearer|token|basic)\s+)?[^\s,;'\"]+"),
    re.compile(r"(?i)\b(sha256=)[0-9a-f]{64}\b"),
)

# One pass over the text finds whether any pattern can match; most log values (ids,
# event names, repository names) hold none, and then no substitution runs.
_LEADING_FLAGS = re.compile(r"^\(\?[aiLmsux]+\)")
_SCOPED_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s", re.VERBOSE: "x"}


def _scoped(pattern: re.Pattern[str]) -> str:
    """``pattern`` as a group carrying its own flags, to sit in an alternation with others."""
    flags = "".join(letter for flag, letter in _SCOPED_FLAGS.items() if pattern.flags & flag)
    body = _LEADING_FLAGS.sub("", pattern.pattern)
    return f"(?{flags}:{body})" if flags else f"(?:{body})"


_ANY_SECRET = re.compile("|".join(_scoped(p) for p in SECRET_PATTERNS))

#: ``extra`` keys (and nested dict keys) whose values are masked whatever they look like.
SECRET_KEYS = re.compile(r"(?i)authorization|token|secret|password|private_key|signature|cookie|api_key")

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime", "taskName"}


#: Secret values known at start-up (e.g. the model server's API key, whose shape is anyone's).
_LITERALS: list[str] = []


def redact_value(secret: str | None) -> None:
    """Redact this exact value wherever it appears in a log record from now on (ignored when shorter than 8 characters)."""
    if secret and len(secret) >= 8 and secret not in _LITERALS:
        _LITERALS.append(secret)


def redact(text: str) -> str:
    """Return ``text`` with every :data:`SECRET_PATTERNS` match replaced by ``[REDACTED]``.

    For header-like patterns the header name is kept (``Authorization: [REDACTED]``).
    """
    for literal in _LITERALS:
        if literal in text:
            text = text.replace(literal, REDACTED)
    if not _ANY_SECRET.search(text):
        return text
    for pattern in SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: REDACTED if SECRET_KEYS.search(str(k)) and value[k] else _redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(v) for v in value]
    return value


class RedactSecrets(logging.Filter):
    """Mask credentials in a record's message, arguments and ``extra`` fields.

    Attach it to handlers (not loggers) so records from every library pass through it.
    Never drops a record.
    """

    def filter(self, record: logging.LogRecord) -> bool:  # noqa: A003 - logging's API
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        for name, value in list(vars(record).items()):
            if name not in _STANDARD_ATTRS:
                setattr(record, name, REDACTED if SECRET_KEYS.search(name) and value else _redact_value(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object on one line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:  # noqa: A003 - logging's API
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD_ATTRS and name not in data:
                data[name] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            data["exc"] = record.exc_text
        return json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))


def configure_logging(level: str | int = "INFO", *, stream: IO[str] | None = None) -> logging.Handler:
    """Send every log record, as JSON lines with secrets redacted, to ``stream`` (stderr).

    Replaces the root logger's handlers and returns the new handler. ``level`` is a
    name (``"INFO"``) or number. The JSON lines carry no caller, thread or process
    fields, so the records stop collecting them (the "Optimization" section of
    Python's Logging HOWTO): finding the caller alone walked the stack on every
    delivery.
    """
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactSecrets())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # aiohttp's access log repeats what the delivery log line says, with less.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    return handler
