"""Asking an OpenAI-compatible server (vLLM, llama.cpp, Ollama, a hosted API) for a narration.

Uses the official ``openai`` client with the server's base URL. The answer's shape is
asked for with ``response_format`` as a JSON schema; a server that refuses it (HTTP 400)
is asked once more with ``{"type": "json_object"}``. Whatever comes back is checked
again here (:func:`bot.narrator.validate.parse_answer`). The API key is only handed to
the client; it is never logged or put in an error message.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import openai

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


async def narrate(sheet: FactSheet, prompt: Prompt, config: LLMConfig) -> Outcome:
    """Ask the model for a narration of ``sheet`` and keep only its grounded sentences.

    Never raises for the server's faults: a time-out, a refused call (429, 5xx), a
    connection error or an answer that fails the schema gives a narration with
    ``fallback_reason`` set (``timeout``, ``rate_limited``, ``server_error``,
    ``unreachable``, ``schema``) and nothing kept, so the engine's guide stays.
    """
    client = openai.AsyncOpenAI(base_url=config.url, api_key=config.api_key or "unused", timeout=config.timeout, max_retries=0)
    started = time.perf_counter()
    calls = 0
    usage_in = usage_out = 0
    try:
        formats = (_schema_format(), {"type": "json_object"})
        for i, response_format in enumerate(formats):
            calls += 1
            try:
                reply = await client.chat.completions.create(
                    model=config.model, messages=prompt.messages, temperature=0, max_tokens=ANSWER_TOKENS,
                    response_format=response_format,  # type: ignore[arg-type]
                )
            except openai.BadRequestError:
                if i + 1 < len(formats):
                    continue  # the server does not take a JSON schema: ask for JSON alone
                raise
            break
        usage = reply.usage
        usage_in, usage_out = (usage.prompt_tokens, usage.completion_tokens) if usage else (prompt.tokens, 0)
        text = reply.choices[0].message.content or "" if reply.choices else ""
        answer = parse_answer(text)
        narration = narration_from(check_answer(answer, sheet), sheet, config.model)
    except openai.APITimeoutError:
        narration = failed(config.model, "timeout")
    except openai.RateLimitError:
        narration = failed(config.model, "rate_limited")
    except openai.APIStatusError as exc:
        log.warning("narrator: the model server answered %s", exc.status_code)
        narration = failed(config.model, "server_error")
    except openai.APIConnectionError:
        narration = failed(config.model, "unreachable")
    except SchemaError as exc:
        log.info("narrator: the answer failed the schema: %s", exc)
        narration = failed(config.model, "schema")
    finally:
        await client.close()
    return Outcome(narration, usage_in, usage_out, time.perf_counter() - started, calls)
