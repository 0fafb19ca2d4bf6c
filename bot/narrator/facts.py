"""The fact sheet: every fact the engine found, with an id, and every name it may mention.

A narration may refer to a fact only as ``{F3}`` and to a symbol, file, number or
version only as ``{S7}``; the renderer fills the symbols in (as code spans) and keeps
the fact ids as citations. Built from :attr:`bot.engine.build.Guide.data` alone, so the CLI,
the app and the benchmark build the same sheet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Ranks, most important first: what the prompt packer keeps when it must drop facts.
RANKS = {"breaking": 0, "behaviour": 1, "focus": 2, "summary": 2, "dependency": 3, "review": 3,
         "description": 3, "follow_up": 4, "title": 4, "factor": 5, "area": 6}  # fmt: skip
#: Facts whose text people wrote (the PR's title, description, review comments and the
#: follow-ups taken from them): untrusted data. The prompt fences them as data, never
#: instructions; their words are not vocabulary a narration may use (only ordinary words).
UNTRUSTED = frozenset({"title", "description", "review", "follow_up"})
#: Facts whose words a narration may use besides ordinary prose: what the engine found in
#: the diff and the rules. The summary is left out: it may be the author's own sentence.
VOCABULARY = frozenset({"breaking", "behaviour", "focus", "dependency", "factor", "area"})

#: Behaviour facts that outrank the focus points; the rest rank with the follow-ups. A
#: large pull request has hundreds (environment reads in every example script, say),
#: and the points the narrator must word would otherwise never fit its budget.
RANKED_BEHAVIOUR = 12

#: Code-ish tokens inside a fact's text: backticked spans, paths, dotted names,
#: snake_case, CamelCase, versions and numbers. The validator uses the same shapes.
TOKEN = re.compile(
    r"`[^`]+`"
    r"|[A-Za-z_][\w.-]*/[\w./-]+"  # path-like
    r"|v?\d+(?:\.\d+)+[\w.+-]*"  # version
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"  # dotted
    r"|\w*_\w+(?:\(\))?"  # snake_case
    r"|[A-Z]?[a-z0-9]+[A-Z]\w*"  # CamelCase / camelCase
    r"|[A-Z]{2,}\w*\d\w*"  # FP8, H100-like
    r"|\d+(?:[.,]\d+)?%?"  # numbers
)
#: Control characters (tabs aside): no symbol's exact text holds one.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact: ``id`` (``F1``...), ``kind`` (a :data:`RANKS` key), its plain English
    ``text``, the symbol ids it names, and ``point`` (``P1``...) for focus points."""

    id: str
    kind: str
    text: str
    symbols: tuple[str, ...] = ()
    point: str | None = None
    #: Packed after the focus points (a behaviour fact past :data:`RANKED_BEHAVIOUR`).
    minor: bool = False

    @property
    def untrusted(self) -> bool:
        """True for text people wrote (see :data:`UNTRUSTED`)."""
        return self.kind in UNTRUSTED

    @property
    def rank(self) -> int:
        """Lower is more important (see :data:`RANKS`)."""
        return RANKS["follow_up"] if self.minor else RANKS.get(self.kind, 9)


@dataclass(frozen=True, slots=True)
class FactSheet:
    """Facts and symbols of one guide.

    ``symbols`` maps ``S1``... to the exact text (a path, an identifier, a number or a
    version); ``points`` maps focus point ids ``P1``... to the engine's reason for that
    point; ``summary`` is the engine's summary sentence (plain text), the fallback.
    """

    facts: tuple[Fact, ...]
    symbols: Mapping[str, str]
    points: Mapping[str, str] = field(default_factory=dict)
    summary: str = ""
    lang: str = "en"

    def fact(self, fact_id: str) -> Fact | None:
        """The fact with ``fact_id``, or ``None``."""
        for f in self.facts:
            if f.id == fact_id:
                return f
        return None


class _Builder:
    def __init__(self) -> None:
        self.facts: list[Fact] = []
        self.by_text: dict[str, str] = {}

    def symbol(self, text: Any) -> str | None:
        value = str(text or "").strip().strip("`")
        # A name with a line break (git allows one in a path) would stand on lines of its own
        # in the prompt, outside the fence for PR text: it gets no symbol, so it is never named.
        if not value or len(value) > 200 or len(value.splitlines()) > 1 or _CONTROL.search(value):
            return None
        if value not in self.by_text:
            self.by_text[value] = f"S{len(self.by_text) + 1}"
        return self.by_text[value]

    def add(self, kind: str, text: str, names: Iterable[Any] = (), point: str | None = None, *, minor: bool = False) -> None:
        text = " ".join(str(text).split())
        if not text:
            return
        ids = [self.symbol(n) for n in names]
        ids += [self.symbol(m.group(0)) for m in TOKEN.finditer(text)]
        unique = tuple(dict.fromkeys(i for i in ids if i))
        self.facts.append(Fact(f"F{len(self.facts) + 1}", kind, text, unique, point, minor))


def build_fact_sheet(data: Mapping[str, Any]) -> FactSheet:
    """The fact sheet of a guide's JSON data (:attr:`bot.engine.build.Guide.data`).

    Facts, in this order: the engine's summary, breaking reasons, behaviour changes,
    focus points (each also a point ``P1``...), dependency changes, follow-ups, the
    importance factors, the areas and the PR title. Texts are the English the engine
    wrote (the data's own language); symbol ids are given to every path, identifier,
    number and version the facts name.
    """
    b = _Builder()
    b.add("summary", str(data.get("summary") or ""))
    for reason in data.get("breaking_reasons") or ():
        b.add("breaking", reason.get("reason", ""), [reason.get("file")])
    # User-facing facts first: they are the ones that keep their rank (RANKED_BEHAVIOUR).
    behaviour = sorted(data.get("behaviour") or (), key=lambda f: not f.get("user_facing"))
    for n, fact in enumerate(behaviour):
        parts = [fact.get("kind", ""), fact.get("symbol") or "", "in", fact.get("path") or ""]
        if fact.get("old") or fact.get("new"):
            parts += [str(fact.get("old") or "-"), "->", str(fact.get("new") or "-")]
        if fact.get("detail"):
            parts.append(f"({fact['detail']})")
        b.add("behaviour", " ".join(str(p) for p in parts if p),
              [fact.get("path"), fact.get("symbol"), fact.get("old"), fact.get("new")], minor=n >= RANKED_BEHAVIOUR)  # fmt: skip
    points: dict[str, str] = {}
    for i, point in enumerate(data.get("focus") or (), start=1):
        pid = f"P{i}"
        points[pid] = str(point.get("reason") or "")
        where = " ".join(str(x) for x in (point.get("file"), point.get("symbol")) if x)
        b.add("focus", f"{where}: {point.get('reason', '')}".strip(": "), [point.get("file"), point.get("symbol")], pid)
    for dep in data.get("dependencies") or ():
        b.add("dependency", f"{dep.get('action', '')} {dep.get('name', '')} {dep.get('old') or ''} -> {dep.get('new') or ''} in {dep.get('file', '')}",
              [dep.get("name"), dep.get("old"), dep.get("new"), dep.get("file")])  # fmt: skip
    for line in data.get("follow_ups") or ():
        b.add("follow_up", str(line))
    for thread in data.get("review_highlights") or ():
        b.add("review", f"review thread on {thread.get('path')} ({thread.get('comments')} comments): {thread.get('opening', '')}", [thread.get("path")])
    description = data.get("description") or {}
    if description.get("purpose"):
        b.add("description", f"the author says: {description['purpose']}")
    for point in description.get("design_points") or ():
        b.add("description", f"design point from the description: {point}")
    for section, text in (description.get("sections") or {}).items():
        if section in ("why", "breaking", "api"):
            b.add("description", f"description section '{section}': {text}")
    for factor in data.get("importance_factors") or ():
        if isinstance(factor, Mapping) and factor.get("source") != "base":
            b.add("factor", str(factor.get("reason") or ""))
    for area in data.get("areas") or ():
        b.add("area", f"area {area}", [area])
    if data.get("title"):
        b.add("title", str(data["title"]))
    symbols = {sid: text for text, sid in b.by_text.items()}
    return FactSheet(tuple(b.facts), symbols, points, str(data.get("summary") or ""), str(data.get("lang") or "en"))
