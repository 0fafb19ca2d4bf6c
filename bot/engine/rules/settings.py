"""Shipped defaults from ``config/settings.yml``: language, label colour and rule limits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.paths import config_dir
from bot.engine.rules.model import LANGUAGES, Problem, RuleError
from bot.engine.rules.yamlsrc import YMap, load_yaml

_KEYS = ("language", "label_color", "max_focus_per_rule", "regex_timeout_ms")


@dataclass(frozen=True, slots=True)
class Settings:
    """Defaults every repository starts from.

    ``language``: ``en`` or ``zh``, the guide's language unless a repository says
    otherwise. ``label_color``: 6 hex digits for labels no rule file describes.
    ``max_focus_per_rule``: focus notes one rule may write. ``regex_timeout``:
    seconds one rule condition may spend on regexes.
    """

    language: str = "en"
    label_color: str = "ededed"
    max_focus_per_rule: int = 5
    regex_timeout: float = 0.1


def load_settings(path: str | Path | None = None) -> Settings:
    """Read ``path`` (default: ``settings.yml`` in :func:`bot.paths.config_dir`).

    A missing default file gives :class:`Settings` defaults; raises
    :class:`~bot.engine.rules.model.RuleError` listing every bad or unknown key.
    """
    file = Path(path) if path is not None else config_dir() / "settings.yml"
    if path is None and not file.exists():
        return Settings()
    source = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError([Problem(source, 1, f"cannot read settings: {exc}")]) from None
    doc, problems = load_yaml(text, source)
    if doc is None and not problems:
        return Settings()
    if not problems and not isinstance(doc, YMap):
        problems.append(Problem(source, 1, "settings must be a mapping"))
    if problems:
        raise RuleError(problems)
    values: dict = {}
    for key, value in doc.items():
        line = doc.line_of(key)
        if key == "language" and value in LANGUAGES:
            values["language"] = value
        elif key == "label_color" and isinstance(value, str) and len(value.lstrip("#")) == 6:
            try:
                int(value.lstrip("#"), 16)
                values["label_color"] = value.lstrip("#").lower()
            except ValueError:
                problems.append(Problem(source, line, f"label_color: expected 6 hex digits, got {value!r}"))
        elif (
            key == "max_focus_per_rule" and isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 50
        ):
            values["max_focus_per_rule"] = value
        elif (
            key == "regex_timeout_ms"
            and isinstance(value, int)
            and not isinstance(value, bool)
            and 1 <= value <= 10_000
        ):
            values["regex_timeout"] = value / 1000
        elif key in _KEYS:
            problems.append(Problem(source, line, f"{key}: invalid value {value!r}"))
        else:
            problems.append(Problem(source, line, f"unknown key {key!r}; settings are {', '.join(_KEYS)}"))
    if problems:
        raise RuleError(problems)
    return Settings(**values)
