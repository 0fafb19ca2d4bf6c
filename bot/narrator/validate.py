"""The deterministic validator: only grounded sentences of a narration are kept.

The model answers ``{"summary": str, "why_it_matters": [str, ...], "focus_reasons":
{"P1": str, ...}}`` and names things only through placeholders: ``{S3}`` for a symbol,
file, number or version of the fact sheet, ``{F2}`` to cite a fact. A sentence is
rejected when it

- uses an id the sheet does not have,
- carries, outside placeholders, an identifier-like token (snake_case, CamelCase,
  dotted, path-like, backticked), a URL, a mention or HTML,
- carries a number or version that is not in the text of a fact it cites,
- is empty, too long, or not one line.

The same rules hold for Chinese: CJK text is prose; Latin tokens are checked the same
way. A rejected part falls back to the engine's own sentence (see :mod:`.render`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.narrator.facts import FactSheet

#: Longest sentence kept, in characters.
MAX_SENTENCE = 320
#: At most this many "why it matters" sentences.
MAX_WHY = 3

#: The JSON schema the server is asked to enforce (``response_format``), and that
#: :func:`parse_answer` checks again here.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": MAX_SENTENCE},
        "why_it_matters": {"type": "array", "items": {"type": "string", "maxLength": MAX_SENTENCE}, "maxItems": MAX_WHY},
        "focus_reasons": {"type": "object", "additionalProperties": {"type": "string", "maxLength": MAX_SENTENCE}},
    },
    "required": ["summary", "why_it_matters", "focus_reasons"],
    "additionalProperties": False,
}

PLACEHOLDER = re.compile(r"\{([SF]\d{1,4})\}")
_NUMBER = re.compile(r"v?\d+(?:[.,]\d+)*%?")
_ABBREVIATIONS = re.compile(r"(?i)\b(?:e\.g|i\.e|etc|vs)\.")
#: Tokens a sentence may not carry outside placeholders.
_CODEISH = re.compile(
    r"`|<|>|@\w|https?:|www\.|\]\("
    r"|[A-Za-z_][\w.-]*/[\w./-]*\w"  # path-like
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # dotted
    r"|[A-Za-z0-9]*_\w*"  # snake_case, _private, __dunder__
    r"|[A-Za-z]*[a-z][A-Z]\w*"  # camelCase, CamelCase
    r"|[A-Z]+[a-z]+[A-Z]\w*"
    r"|\w+\(\)"  # call
    r"|::|->|=>|==|\$\{"
)


class SchemaError(ValueError):
    """The model's answer is not the JSON object :data:`SCHEMA` describes."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A narration that passed the schema (its sentences not yet validated)."""

    summary: str
    why_it_matters: tuple[str, ...]
    focus_reasons: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One sentence judged: ``text`` (with placeholders), ``kept``, the ``reason`` it was
    rejected (``unknown_id``, ``identifier``, ``number``, ``shape``), the fact ids it cites."""

    part: str
    text: str
    kept: bool
    reason: str = ""
    cites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Checked:
    """Every sentence of an answer judged, in order: summary, why..., focus reasons."""

    verdicts: tuple[Verdict, ...] = field(default_factory=tuple)

    @property
    def kept(self) -> int:
        return sum(v.kept for v in self.verdicts)

    @property
    def rejected(self) -> int:
        return sum(not v.kept for v in self.verdicts)


def parse_answer(text: str) -> Answer:
    """Parse and check the model's reply against :data:`SCHEMA`.

    Accepts the object alone or inside a Markdown code fence (some local servers add one
    when they ignore ``response_format``). Raises :class:`SchemaError` saying what is wrong.
    """
    body = text.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", body, re.DOTALL)
    if fence:
        body = fence.group(1)
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise SchemaError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SchemaError("not a JSON object")
    extra = set(data) - set(SCHEMA["properties"])
    if extra:
        raise SchemaError(f"unknown keys {sorted(extra)}")
    summary, why, reasons = data.get("summary"), data.get("why_it_matters"), data.get("focus_reasons", {})
    if not isinstance(summary, str):
        raise SchemaError("summary must be a string")
    if isinstance(why, str):
        why = [why]
    if not isinstance(why, list) or not all(isinstance(s, str) for s in why) or len(why) > MAX_WHY:
        raise SchemaError(f"why_it_matters must be a list of at most {MAX_WHY} strings")
    if not isinstance(reasons, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in reasons.items()):
        raise SchemaError("focus_reasons must map point ids to strings")
    return Answer(summary, tuple(why), dict(reasons))


def check_sentence(text: str, sheet: FactSheet, part: str = "summary") -> Verdict:
    """Judge one sentence against the fact sheet (see the module docstring)."""
    text = " ".join(text.split())
    if not text or len(text) > MAX_SENTENCE:
        return Verdict(part, text, False, "shape")
    ids = PLACEHOLDER.findall(text)
    cites = tuple(dict.fromkeys(i for i in ids if i.startswith("F")))
    symbols = [i for i in ids if i.startswith("S")]
    if any(i not in sheet.symbols for i in symbols) or any(sheet.fact(i) is None for i in cites):
        return Verdict(part, text, False, "unknown_id", cites)
    prose = PLACEHOLDER.sub(" ", text)
    if "{" in prose or "}" in prose:
        return Verdict(part, text, False, "unknown_id", cites)
    prose = _ABBREVIATIONS.sub(" ", prose)
    if _CODEISH.search(prose):
        return Verdict(part, text, False, "identifier", cites)
    numbers = _NUMBER.findall(prose)
    if numbers:
        allowed = " ".join(f.text for f in sheet.facts if f.id in cites)
        grounded = set(_NUMBER.findall(allowed))
        if any(n not in grounded for n in numbers):
            return Verdict(part, text, False, "number", cites)
    return Verdict(part, text, True, "", cites)


def check_answer(answer: Answer, sheet: FactSheet) -> Checked:
    """Judge every sentence of ``answer``; a focus reason for an unknown point is rejected."""
    verdicts = [check_sentence(answer.summary, sheet, "summary")]
    verdicts += [check_sentence(s, sheet, f"why.{i}") for i, s in enumerate(answer.why_it_matters, start=1)]
    for pid, reason in answer.focus_reasons.items():
        if pid not in sheet.points:
            verdicts.append(Verdict(f"focus.{pid}", reason, False, "unknown_id"))
        else:
            verdicts.append(check_sentence(reason, sheet, f"focus.{pid}"))
    return Checked(tuple(verdicts))
