"""``{placeholder}`` templates in rule effects (labels, areas, audience, focus notes).

Only plain ``{name}`` placeholders exist; ``{{`` and ``}}`` write a literal brace.
Labels and areas split each value on commas, so a title scope capture
``megatron, fsdp`` turns ``module/{scope}`` into ``module/megatron`` and
``module/fsdp``; their values are also lower-cased, trimmed, and inner spaces
become ``-``. Sentences (audience, focus) take values verbatim.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SPACES = re.compile(r"\s+")


class TemplateProblem(ValueError):
    """Raised by :func:`parse_template` for unbalanced braces or an unsupported placeholder."""


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: ``parts`` alternate literal text and placeholder names (``None`` for none)."""

    text: str
    parts: tuple[tuple[str, str | None], ...]

    @property
    def fields(self) -> frozenset[str]:
        """The placeholder names used."""
        return frozenset(name for _, name in self.parts if name)

    def render(self, values: Mapping[str, str]) -> str:
        """Fill every placeholder from ``values``; a missing value becomes the empty string."""
        return "".join(lit + (str(values.get(name, "")) if name else "") for lit, name in self.parts)

    def expand(self, values: Mapping[str, Sequence[str]]) -> list[str]:
        """Every name the template makes from multi-valued ``values`` (label/area style).

        Each value is split on commas and normalised (see the module docstring);
        several placeholders give every combination. A placeholder with no value
        gives no name at all.
        """
        choices: list[list[str]] = []
        for name in (n for _, n in self.parts if n):
            items = [slug(part) for v in values.get(name, ()) for part in str(v).split(",")]
            items = [i for i in dict.fromkeys(items) if i]
            if not items:
                return []
            choices.append(items)
        out = []
        for combo in itertools.product(*choices):
            it = iter(combo)
            out.append("".join(lit + (next(it) if name else "") for lit, name in self.parts))
        return list(dict.fromkeys(out))


def slug(value: str) -> str:
    """``" Megatron Core "`` -> ``"megatron-core"``: how a captured value appears in a label."""
    return _SPACES.sub("-", value.strip()).lower()


def parse_template(text: object) -> Template:
    """Parse ``text``; raises :class:`TemplateProblem` for a non-string, unbalanced braces, or ``{a.b}``/``{0}``/``{x:>3}``."""
    if not isinstance(text, str):
        raise TemplateProblem(f"expected text, got {type(text).__name__}")
    try:
        pieces = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise TemplateProblem(f"{text!r}: {exc} (write {{{{ or }}}} for a literal brace)") from None
    parts: list[tuple[str, str | None]] = []
    for literal, name, spec, conversion in pieces:
        if name is None:
            parts.append((literal, None))
            continue
        if not _NAME.match(name) or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise TemplateProblem(f"{text!r}: placeholder {shown} is not supported; use a plain name such as {{scope}}")
        parts.append((literal, name))
    return Template(text, tuple(parts))
