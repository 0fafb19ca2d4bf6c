"""Asking an OpenAI-compatible server (vLLM, llama.cpp, Ollama, a hosted API) for a narration.

Uses the official ``openai`` client with the server's base URL. The answer's shape is
asked for with ``response_format`` as a JSON schema; a server that refuses it (HTTP 400)
is asked once more with ``{"type": "json_object"}``. Whatever comes back is checked
again here (:func:`bot.narrator.validate.parse_answer`). The API key is only handed to
the client; it is never logged or put in an error message.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from bot.narrator.facts import FactSheet
from bot.narrator.prompt import ANSWER_TOKENS, Prompt
from bot.narrator.render import Narration, failed, narration_from
from bot.narrator.validate import SCHEMA, SchemaError, check_answer, parse_answer

log = logging.getLogger("prguide.narrator")

#: Seconds to wait for an answer before the engine's guide simply stays.
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where the model is: ``url`` (base URL, e.g. ``http://127.0.0.1:8000/v1``),
    ``model`` (its name on that server), ``api_key`` (never shown), ``timeout`` seconds,
    ``budget`` prompt tokens per guide."""

    url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout: float = DEFAULT_TIMEOUT
    budget: int = 3000


@dataclass(frozen=True, slots=True)
class Outcome:
    """One narration attempt: the ``narration``, tokens used (prompt + completion), seconds, calls made."""

    narration: Narration
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    calls: int = 0


def _schema_format() -> dict:
    return {"type": "json_schema", "json_schema": {"name": "narration", "strict": True, "schema": SCHEMA}}


class BadAnswer(ValueError):
    """A 200 answer that is not a chat completion (HTML, ``choices`` not a list, ``content`` not a string...)."""


def _completion(text: str) -> tuple[str, tuple[int, int] | None]:
    """``(content, (prompt_tokens, completion_tokens) or None)`` of a chat completion body.

    Read here rather than by the client's typed models, which take any shape without
    checking it. Raises :class:`BadAnswer` for anything that is not a completion with a
    string ``content``; ``usage`` that is absent, negative or not integers gives ``None``.
    """
    try:
        body = json.loads(text)
    except ValueError:
        raise BadAnswer("the body is not JSON") from None
    if not isinstance(body, dict):
        raise BadAnswer("the body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadAnswer("choices is not a list of objects")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise BadAnswer("the message content is not a string")
    usage = body.get("usage")
    counts = None
    if isinstance(usage, dict):
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if all(type(n) is int and 0 <= n < 10**9 for n in (prompt, completion)):
            counts = (prompt, completion)
    return content, counts


#: The ``openai`` module once :func:`_openai` has imported it whole.
_OPENAI: Any = None


async def _openai() -> Any:
    """The ``openai`` module, imported on first use in a worker thread.

    The client costs about 20 MiB and 1.5 s of CPU to import, and every command imports
    this module for :class:`LLMConfig`: a process without a narrator never pays it, and a
    server with one keeps answering deliveries meanwhile. The import is done before a
    call's deadline starts.
    """
    global _OPENAI
    if _OPENAI is None:
        # Never sys.modules: while one job's thread imports the module it is there half
        # initialised, and a second job took it then (no AsyncOpenAI yet). import_module
        # waits for an import under way in another thread.
        _OPENAI = await asyncio.to_thread(importlib.import_module, "openai")
    return _OPENAI


async def narrate(sheet: FactSheet, prompt: Prompt, config: LLMConfig) -> Outcome:
    """Ask the model for a narration of ``sheet`` and keep only its grounded sentences.

    ``config.timeout`` is a deadline for the whole call (both requests, when the server
    refuses a JSON schema, and every byte of their answers), not a time per read: a
    server that trickles its answer is stopped when the deadline passes.

    Never raises for the server's faults: a time-out, a refused call (429, 5xx), a
    connection error, a 200 that is not a chat completion or an answer that fails the
    schema gives a narration with ``fallback_reason`` set (``timeout``, ``rate_limited``,
    ``server_error``, ``unreachable``, ``bad_answer``, ``schema``) and nothing kept, so
    the engine's guide stays. Tokens: the answer's ``usage`` when it is valid, else the
    prompt's estimate for every call the server took (an answer came, or the deadline
    passed while it was answering); nothing for a call it refused or never got.
    """
    openai = await _openai()
    client = openai.AsyncOpenAI(base_url=config.url, api_key=config.api_key or "unused", timeout=config.timeout, max_retries=0)
    started = time.perf_counter()
    calls = 0
    usage_in = usage_out = 0
    taken = 0  # calls the server took (answered 200 or was still answering)

    async def ask() -> str:
        nonlocal calls, taken
        formats = (_schema_format(), {"type": "json_object"})
        for i, response_format in enumerate(formats):
            calls += 1
            taken += 1  # until the server refuses it or cannot be reached
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    model=config.model, messages=prompt.messages, temperature=0, max_tokens=ANSWER_TOKENS,
                    response_format=response_format,  # type: ignore[arg-type]
                )
            except openai.APITimeoutError:
                raise
            except (openai.APIStatusError, openai.APIConnectionError):
                taken -= 1
                if i + 1 < len(formats) and isinstance(sys.exc_info()[1], openai.BadRequestError):
                    continue  # the server does not take a JSON schema: ask for JSON alone
                raise
            return raw.http_response.text
        raise AssertionError("unreachable")  # pragma: no cover

    try:
        async with asyncio.timeout(config.timeout):
            text = await ask()
        content, counts = _completion(text)
        if counts is not None:
            usage_in, usage_out = counts
            taken = 0
        narration = narration_from(check_answer(parse_answer(content), sheet), sheet, config.model)
    except (openai.APITimeoutError, TimeoutError):
        narration = failed(config.model, "timeout")
    except openai.RateLimitError:
        narration = failed(config.model, "rate_limited")
    except openai.APIStatusError as exc:
        log.warning("narrator: the model server answered %s", exc.status_code)
        narration = failed(config.model, "server_error")
    except openai.APIConnectionError:
        narration = failed(config.model, "unreachable")
    except BadAnswer as exc:
        log.warning("narrator: the model server answered 200 with something else: %s", exc)
        narration = failed(config.model, "bad_answer")
    except SchemaError as exc:
        log.info("narrator: the answer failed the schema: %s", exc)
        narration = failed(config.model, "schema")
    except openai.OpenAIError as exc:  # the client's own checks of an answer (response validation...)
        log.warning("narrator: the model client refused the answer: %s", type(exc).__name__)
        narration = failed(config.model, "bad_answer")
    except Exception:  # never a crashed job: it would be retried, and each retry paid for
        log.exception("narrator: narrating failed")
        narration = failed(config.model, "error")
    finally:
        await client.close()
    usage_in += taken * prompt.tokens  # no valid usage: the request's estimate, per call taken
    return Outcome(narration, usage_in, usage_out, time.perf_counter() - started, calls)
