"""Read YAML while remembering the line of every key and list item.

Rule-file problems are reported as ``FILE:LINE``, so the loader keeps PyYAML's node
marks: mappings become :class:`YMap` (a ``dict`` that also knows the line of each
key) and sequences :class:`YList` (a ``list`` that knows the line of each item).
Scalars are plain Python values, resolved the way ``yaml.safe_load`` resolves them.

Anchors and aliases (``&name``, ``*name``) are refused: rule files and repository
configs come from untrusted repositories, and a few hundred bytes of nested aliases
("billion laughs") expand to gigabytes when built. Refusing them at the first one
costs nothing, and no prguide file needs them.
"""

from __future__ import annotations

from typing import Any

import yaml

from bot.engine.rules.model import Problem


class YMap(dict):
    """A mapping read from YAML: ``line`` is where it starts, ``key_lines[key]`` where each key is (1-based)."""

    line: int
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        """The line of ``key``, or of the mapping itself when the key is absent."""
        return self.key_lines.get(key, self.line)


class YList(list):
    """A sequence read from YAML: ``line`` is where it starts, ``item_lines[i]`` where item ``i`` is (1-based)."""

    line: int
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        """The line of item ``index``, or of the sequence itself when out of range."""
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


def line_of(value: Any, default: int) -> int:
    """The line a YAML value starts on, or ``default`` for scalars (which carry none)."""
    return getattr(value, "line", default)


class _AliasRefused(yaml.YAMLError):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


class _NoAliasLoader(yaml.SafeLoader):
    """A safe loader that stops at the first anchor or alias, before anything is built."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _AliasRefused(
                event.start_mark.line + 1,
                f"YAML aliases are not allowed (*{event.anchor}); write the value out in full",
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _AliasRefused(
                event.start_mark.line + 1,
                f"YAML anchors and aliases are not allowed (&{anchor}); write the value out in full",
            )
        return super().compose_node(parent, index)


def load_yaml(text: str, source: str) -> tuple[Any, list[Problem]]:
    """Parse one YAML document, keeping line numbers.

    Returns ``(value, problems)``: ``value`` is ``None`` for an empty document, a
    syntax error or an anchor/alias; ``problems`` holds the syntax error (with PyYAML's
    line), the first anchor or alias (refused: see the module docstring) and any
    duplicate keys, which plain ``yaml.safe_load`` would silently let the last win.
    """
    problems: list[Problem] = []
    try:
        loader = _NoAliasLoader(text)
    except yaml.reader.ReaderError as exc:  # a control character, before any parsing
        line = text[: max(exc.position, 0)].count("\n") + 1
        problems.append(Problem(source, line, f"YAML error: control character #x{exc.character:04x} is not allowed"))
        return None, problems
    try:
        node = loader.get_single_node()
        if node is None:
            return None, problems
        return _build(loader, node, source, problems), problems
    except _AliasRefused as exc:
        problems.append(Problem(source, exc.line, exc.message))
        return None, problems
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        what = exc.problem or str(exc)
        if exc.context:
            what = f"{exc.context}, {what}"
        problems.append(Problem(source, line, f"YAML syntax error: {what}"))
        return None, problems
    except yaml.YAMLError as exc:
        problems.append(Problem(source, 1, f"YAML error: {exc}"))
        return None, problems
    finally:
        loader.dispose()


_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("map", "seq", "str", "int", "float", "bool", "null", "timestamp", "merge")
)


def _build(loader: yaml.SafeLoader, node: yaml.Node, source: str, problems: list[Problem]) -> Any:
    if node.tag not in _PLAIN_TAGS:
        # Say so rather than quietly read "!!python/object" as plain data.
        problems.append(Problem(source, node.start_mark.line + 1, f"unsupported YAML tag {node.tag!r}"))
        return None
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves "<<" merge keys the way safe_load does
        out = YMap()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for key_node, value_node in node.value:
            key = _build(loader, key_node, source, problems)
            line = key_node.start_mark.line + 1
            if isinstance(key, (dict, list)):
                problems.append(Problem(source, line, "a mapping key must be a plain value"))
                continue
            if key in out.key_lines:
                problems.append(Problem(source, line, f"duplicate key {key!r} (first on line {out.key_lines[key]})"))
                continue
            out.key_lines[key] = line
            out[key] = _build(loader, value_node, source, problems)
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = YList()
        seq.line = node.start_mark.line + 1
        seq.item_lines = []
        for item in node.value:
            seq.item_lines.append(item.start_mark.line + 1)
            seq.append(_build(loader, item, source, problems))
        return seq
    return loader.construct_object(node, deep=True)
