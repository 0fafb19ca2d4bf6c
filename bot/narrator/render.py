"""Filling a checked narration into the engine's guide.

Kept sentences get their ``{S..}`` placeholders replaced by code spans of the sheet's
exact text and their ``{F..}`` citations removed (they are kept for ``/prguide why``);
the rest of the sentence is neutralised (:func:`bot.engine.render.sanitize.neutralize`). A
rejected summary or focus reason falls back to the engine's own sentence (which the
guide already has); a rejected "why it matters" sentence is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.engine.marker import parse_marker, replace_marker
from bot.narrator.facts import FactSheet
from bot.narrator.validate import PLACEHOLDER, Checked
from bot.engine.render import sanitize
from bot.engine.render.messages import t


@dataclass(frozen=True, slots=True)
class Narration:
    """A narration ready to show: Markdown sentences, and what the model was.

    ``summary`` is ``None`` when the model's summary was rejected; ``why`` holds the
    kept sentences; ``focus`` maps point ids to kept reasons; ``cites`` maps each
    shown part (``summary``, ``why.1``, ``focus.P2``) to the fact ids it cites.
    """

    model: str
    summary: str | None
    why: tuple[str, ...]
    focus: Mapping[str, str]
    cites: Mapping[str, tuple[str, ...]]
    kept: int
    rejected: int
    fallback_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The narration as stored in the cache (and reloaded by :func:`from_json`)."""
        return {"model": self.model, "summary": self.summary, "why": list(self.why), "focus": dict(self.focus),
                "cites": {k: list(v) for k, v in self.cites.items()}, "kept": self.kept, "rejected": self.rejected,
                "fallback_reason": self.fallback_reason}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Narration:
        """Inverse of :meth:`to_json`."""
        return cls(
            model=str(data.get("model") or ""),
            summary=data.get("summary"),
            why=tuple(data.get("why") or ()),
            focus=dict(data.get("focus") or {}),
            cites={k: tuple(v) for k, v in (data.get("cites") or {}).items()},
            kept=int(data.get("kept") or 0),
            rejected=int(data.get("rejected") or 0),
            fallback_reason=data.get("fallback_reason"),
        )

    def report(self) -> dict[str, Any]:
        """``{model, kept, rejected, fallback_reason}`` for JSON output."""
        return {"model": self.model, "kept": self.kept, "rejected": self.rejected, "fallback_reason": self.fallback_reason}


def fill(text: str, sheet: FactSheet) -> str:
    """A kept sentence as Markdown: symbols as code spans, citations removed, prose neutralised."""
    out: list[str] = []
    start = 0
    for match in PLACEHOLDER.finditer(text):
        out.append(sanitize.neutralize(text[start : match.start()]))
        ident = match.group(1)
        if ident.startswith("S"):
            out.append(sanitize.code(sheet.symbols[ident]))
        start = match.end()
    out.append(sanitize.neutralize(text[start:]))
    filled = re.sub(r"[ \t]+([,.;:!?，。；：])", r"\1", "".join(out))
    return " ".join(filled.split())


def narration_from(checked: Checked, sheet: FactSheet, model: str) -> Narration:
    """The kept parts of ``checked``, filled in."""
    summary, why, focus, cites = None, [], {}, {}
    for v in checked.verdicts:
        if not v.kept:
            continue
        text = fill(v.text, sheet)
        if v.part == "summary":
            summary = text
        elif v.part.startswith("why."):
            why.append(text)
        else:
            focus[v.part.split(".", 1)[1]] = text
        cites[v.part] = v.cites
    return Narration(model, summary, tuple(why), focus, cites, checked.kept, checked.rejected)


def failed(model: str, reason: str) -> Narration:
    """A narration that did not happen (``reason``: ``timeout``, ``error``, ``schema``, ``budget``...)."""
    return Narration(model, None, (), {}, {}, 0, 0, reason)


#: The engine's summary line: ``**{summary}** {scale}`` (``guide.md.j2``), the first line
#: that opens with bold. The summary may be the author's sentence with bold of its own,
#: so the bold closes at the line's last ``**`` followed by a space or the line's end
#: (the scale part after it carries no ``**``).
_SUMMARY_LINE = re.compile(r"^\*\*(.+)\*\*(?=[ \t]|$)", re.MULTILINE)
_FOCUS_ITEM = re.compile(r"^(\d+)\. .*$", re.MULTILINE)


def narrate_markdown(markdown: str, narration: Narration, lang: str, *, key: str = "") -> str:
    """The engine's guide ``markdown`` with ``narration`` worked in.

    The summary line's bold sentence is replaced by the narrated summary (when kept); the
    kept "why it matters" sentences follow it as a paragraph; a kept focus reason is
    added under its numbered point; a line at the end says the guide was narrated and by
    which model; the marker records ``narrated: {model, key}``. Without anything kept the
    markdown is returned unchanged.
    """
    if narration.summary is None and not narration.why and not narration.focus:
        return markdown
    body = markdown
    summary = _SUMMARY_LINE.search(body)
    if summary is not None:
        head = f"**{narration.summary}**" if narration.summary else summary.group(0)
        why = ""
        if narration.why:
            why = "\n\n" + t("narrator.why", lang) + " " + " ".join(narration.why)
        end = body.find("\n", summary.end())
        end = len(body) if end < 0 else end
        body = body[: summary.start()] + head + body[summary.end() : end] + why + body[end:]
    if narration.focus:
        focus_start = body.find(f"#### {t('h.focus', lang)}")

        def add(match: re.Match[str]) -> str:
            reason = narration.focus.get(f"P{match.group(1)}")
            label = t("narrator.focus", lang)
            return f"{match.group(0)}\n   {label} {reason}" if reason else match.group(0)

        if focus_start >= 0:
            stop = body.find("\n#### ", focus_start + 1)
            stop = len(body) if stop < 0 else stop
            body = body[:focus_start] + _FOCUS_ITEM.sub(add, body[focus_start:stop]) + body[stop:]
    body = body.rstrip("\n") + "\n\n<sub>" + t("narrator.footer", lang, {"model": narration.model}) + "</sub>\n"
    state = parse_marker(body)
    if state is not None:
        extra = {**state.extra, "narrated": {"model": narration.model, "key": key}}
        body = replace_marker(body, replace(state, extra=extra))
    return body


def explain(narration: Narration, sheet: FactSheet, lang: str) -> list[str]:
    """Lines for ``/prguide why``: each shown narrated part and the facts it cites (their texts)."""
    lines = [t("cmd.why.narration", lang)]
    for part, fact_ids in narration.cites.items():
        texts = [f"{fid} ({sanitize.quote(f.text, 120)})" for fid in fact_ids if (f := sheet.fact(fid)) is not None]
        if texts:
            lines.append(t("narrator.cites", lang, {"part": part, "facts": "; ".join(texts)}, raw=True))
        else:
            lines.append(t("narrator.cites.none", lang, {"part": part}))
    return lines
