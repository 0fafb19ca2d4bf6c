"""The hidden, versioned marker at the top of prguide's comment.

The marker is how prguide recognises its own comment and remembers, on GitHub
itself, what it decided for a pull request: the rules that fired, the labels it
added, the language, and the labels a human added or removed with a command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MARKER_PREFIX = "<!-- prguide:v1 "
_MARKER_RE = re.compile(r"<!-- prguide:v1 (\{.*?\}) -->", re.DOTALL)


@dataclass(frozen=True, slots=True)
class MarkerState:
    """Machine-readable state kept in the comment.

    ``rules``: ids of rules that fired; ``labels``: labels prguide itself applied;
    ``lang``: the language it was written in; ``human_lang``: the language someone asked
    for with ``/prguide lang`` (kept across refreshes; otherwise the configured language
    applies); ``human_added``/``human_removed``: labels a maintainer decided with
    ``/prguide label``, which later refreshes must not undo;
    ``engine``: the engine version that wrote it.
    """

    rules: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    lang: str = "en"
    human_added: tuple[str, ...] = ()
    human_removed: tuple[str, ...] = ()
    human_lang: str | None = None
    engine: str = "1"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON-ready dict."""
        data: dict[str, Any] = {
            "engine": self.engine,
            "lang": self.lang,
            "rules": list(self.rules),
            "labels": list(self.labels),
            "human": {"added": list(self.human_added), "removed": list(self.human_removed)},
        }
        if self.human_lang:
            data["human"]["lang"] = self.human_lang
        data.update(self.extra)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MarkerState:
        """Read a state written by :meth:`to_json`; unknown keys are kept in ``extra``."""
        human = data.get("human") or {}
        known = {"engine", "lang", "rules", "labels", "human"}
        return cls(
            rules=tuple(str(x) for x in data.get("rules") or ()),
            labels=tuple(str(x) for x in data.get("labels") or ()),
            lang=str(data.get("lang") or "en"),
            human_added=tuple(str(x) for x in human.get("added") or ()),
            human_removed=tuple(str(x) for x in human.get("removed") or ()),
            human_lang=str(human["lang"]) if human.get("lang") else None,
            engine=str(data.get("engine") or "1"),
            extra={k: v for k, v in data.items() if k not in known},
        )


def render_marker(state: MarkerState) -> str:
    """Return the HTML comment line holding ``state``.

    ``<`` and ``>`` are escaped inside the JSON so no text can close the comment early.
    """
    text = json.dumps(state.to_json(), ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"{MARKER_PREFIX}{text} -->"


def parse_marker(body: str | None) -> MarkerState | None:
    """Return the state in a comment body, or ``None`` when it has no valid prguide marker."""
    if not body or MARKER_PREFIX not in body:
        return None
    match = _MARKER_RE.search(body)
    if not match:
        return None
    try:
        data = json.loads(match.group(1))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return MarkerState.from_json(data)


def has_marker(body: str | None) -> bool:
    """True when ``body`` carries a prguide marker (of any state)."""
    return bool(body) and MARKER_PREFIX in body


def replace_marker(body: str, state: MarkerState) -> str:
    """``body`` with its marker line holding ``state`` instead; unchanged when it has no marker."""
    match = _MARKER_RE.search(body or "")
    if not match:
        return body
    return body[: match.start()] + render_marker(state) + body[match.end() :]
