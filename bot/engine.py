"""The guide engine: snapshot -> analysis -> classification -> rendering.

Pure: no network, no aiohttp, no gidgethub. Every caller (CLI, GitHub App, commands,
benchmarks) goes through :func:`build_guide`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.marker import MarkerState
from bot.rules.model import LabelSpec
from bot.snapshot import PullRequestSnapshot


@dataclass(frozen=True, slots=True)
class Overrides:
    """Decisions a human made with commands, which the engine must honour.

    ``lang`` replaces the configured language; ``labels_added``/``labels_removed`` are
    applied after the rules, so a refresh never undoes them.
    """

    lang: str | None = None
    labels_added: tuple[str, ...] = ()
    labels_removed: tuple[str, ...] = ()

    @classmethod
    def from_marker(cls, state: MarkerState | None) -> Overrides:
        """The overrides remembered in an earlier comment's marker (none when ``state`` is None)."""
        if state is None:
            return cls()
        return cls(lang=state.lang, labels_added=state.human_added, labels_removed=state.human_removed)


@dataclass(frozen=True, slots=True)
class Guide:
    """A rendered reading guide and the labels that go with it.

    ``markdown`` is the whole comment body (marker included, at most 60,000 characters);
    ``labels`` the label names prguide wants on the PR after human overrides;
    ``label_specs`` their colour/description for labels that must be created;
    ``state`` what the marker records; ``data`` the JSON form (``prguide guide --format json``).
    """

    repository: str
    number: int
    lang: str
    markdown: str
    labels: tuple[str, ...]
    label_specs: Mapping[str, LabelSpec]
    state: MarkerState
    data: Mapping[str, Any] = field(default_factory=dict)
    skipped: bool = False


def build_guide(snapshot: PullRequestSnapshot, rules: Any, *, lang: str = "en", overrides: Overrides | None = None) -> Guide:
    """Analyse, classify and render one pull request.

    ``rules`` is a loaded :class:`bot.rules.RuleSet`. ``lang`` is ``"en"`` or ``"zh"``
    (``overrides.lang`` wins). Never raises on odd PR content; raises ``ValueError``
    for an unknown language.
    """
    raise NotImplementedError
