"""Configuration keys added, removed or changed in YAML, TOML, INI and JSON files.

Keys are dotted paths (``actor_rollout_ref.rollout.mode``). A diff shows only part of
a file, so a key's path holds the parents the hunk lets us see: the lines of the hunk
itself and the hunk header's section text, which for YAML is the top-level key above
the hunk. When the hunk starts deeper than one level below that top-level key, the
levels in between are unknown and the path starts at the innermost parent visible in
the hunk (``rollout.mode``) rather than guessing.

A key on the removed and the added side with the same path (a new value, or moved
within the hunk's view) is *changed*, not added and removed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.engine.analysis.model import BehaviourFact
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, Hunk


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class KeyChanges:
    """Dotted key paths added, removed and changed (on both sides), in first-seen order."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def pair_keys(old: Iterable[str], new: Iterable[str]) -> KeyChanges:
    """Split keys seen on the removed (``old``) and added (``new``) side into added/removed/changed."""
    old_keys = dict.fromkeys(old)
    new_keys = dict.fromkeys(new)
    return KeyChanges(
        added=tuple(k for k in new_keys if k not in old_keys),
        removed=tuple(k for k in old_keys if k not in new_keys),
        changed=tuple(k for k in new_keys if k in old_keys),
    )


#: A key with its value on one side: (dotted path, value text as written, line, hunk index).
_Value = tuple[str, str, int, int]

# --- indentation-nested formats (YAML, JSON) -------------------------------------------

#: A stack entry: (indent, key or None for a YAML list item, seen in the hunk's lines).
_Entry = tuple[int, "str | None", bool]


def _path(stack: Sequence[_Entry], key: str, indent: int, unit: int) -> str:
    parts = [key]
    inner = indent
    for entry_indent, name, seen in reversed(stack):
        # Lines of one side of a hunk are contiguous, so parents seen in the hunk are
        # complete; only the section-text parent may sit several levels up.
        if not seen and inner - entry_indent > unit:
            break
        if name is not None:
            parts.append(name)
        inner = entry_indent
    parts.reverse()
    return ".".join(parts)


#: A key seen on a changed line: (side, parents, key, indent, value text, line number, hunk index).
_Event = tuple[str, Sequence[_Entry], str, int, str, int, int]


def _finish(events: list[_Event], steps: list[int]) -> tuple[KeyChanges, list[_Value], list[_Value]]:
    unit = min(steps) if steps else 2
    old: list[_Value] = []
    new: list[_Value] = []
    for side, stack, key, indent, value, number, hunk in events:
        (new if side == ADDED else old).append((_path(stack, key, indent, unit), value, number, hunk))
    return pair_keys([v[0] for v in old], [v[0] for v in new]), old, new


_YAML_KEY = re.compile(
    r"""(?:"((?:[^"\\]|\\.){0,200})"|'((?:[^']|''){0,200})'|([^\s#'"{}\[\],&*!|>%@`][^:#]{0,200}?))\s*:(?:\s+(.*))?$"""
)
_YAML_BLOCK = re.compile(r"[|>][-+0-9]*\s*(?:#.*)?$")


def _yaml_key_of(m: re.Match[str]) -> str | None:
    return m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)


#: A YAML line read once: (indent, dash, content indent, key or None, opens a block scalar),
#: or ``None`` for blank and comment lines, ``()`` for a document marker.
_YamlLine = tuple[int, bool, int, "str | None", bool, str]


def _read_yaml_line(text: str) -> _YamlLine | tuple[()] | None:
    stripped = text.lstrip(" ")
    if not stripped or stripped[0] == "#" or not stripped.strip():
        return None
    indent = len(text) - len(stripped)
    stripped = stripped.rstrip()
    if stripped in ("---", "...") or stripped.startswith("--- "):
        return ()
    content, content_indent, dash = stripped, indent, False
    if stripped[0] == "-" and (len(stripped) == 1 or stripped[1] == " "):
        dash = True
        content = stripped[1:].lstrip(" ")
        content_indent = indent + (len(stripped) - len(content))
    m = _YAML_KEY.match(content) if content else None
    if m is None:
        return indent, dash, content_indent, None, False, ""
    value = m.group(4)
    return indent, dash, content_indent, _yaml_key_of(m), bool(value and _YAML_BLOCK.match(value)), value or ""


class _YamlSide:
    __slots__ = ("stack", "block")

    def __init__(self, stack: list[_Entry]):
        self.stack = list(stack)
        self.block = -1  # indent of the key owning a block scalar being read, or -1

    def apply(self, line: _YamlLine | tuple[()] | None) -> tuple[str, int, int] | None:
        """Follow one read line; return (key, content indent, parent step) when it holds a key."""
        if line is None:
            return None
        if not line:
            self.stack.clear()
            self.block = -1
            return None
        indent, dash, content_indent, key, opens_block, _value = line
        if self.block >= 0:
            if indent > self.block:
                return None
            self.block = -1
        stack = self.stack
        if dash:
            while stack and (stack[-1][0] > indent or (stack[-1][0] == indent and stack[-1][1] is None)):
                stack.pop()
            stack.append((indent, None, True))
        if key is None:
            return None
        while stack and stack[-1][0] >= content_indent:
            stack.pop()
        top = stack[-1] if stack else None
        step = content_indent - top[0] if top is not None and top[1] is not None and top[2] else 0
        if opens_block:
            self.block = content_indent
        stack.append((content_indent, key, True))
        return key, content_indent, step


def _yaml_root(section: str) -> list[_Entry]:
    m = _YAML_KEY.match(section)
    if m is None or section[:1] in (" ", "-"):
        return []
    value = (m.group(4) or "").strip()
    if value and not value.startswith(("#", "&")):
        return []
    key = _yaml_key_of(m)
    return [(0, key, False)] if key else []


def yaml_keys(hunks: Iterable[Hunk]) -> KeyChanges:
    """Keys added/removed/changed in a YAML file's hunks, as dotted paths (see :func:`yaml_changes`)."""
    return yaml_changes(hunks)[0]


def yaml_changes(hunks: Iterable[Hunk]) -> tuple[KeyChanges, list[_Value], list[_Value]]:
    """Keys added/removed/changed in a YAML file's hunks, as dotted paths.

    Items of lists add no path part (``steps.name``). Lines inside block scalars
    (``key: |``) and comments are not keys. Never raises.
    """
    events: list[_Event] = []
    steps: list[int] = []
    for hunk_index, hunk in enumerate(hunks):
        root = _yaml_root(hunk.section) if hunk.section else []
        old, new = _YamlSide(root), _YamlSide(root)
        for line in hunk.lines:
            read = _read_yaml_line(line.text)
            if line.kind == CONTEXT:
                for side in (old, new):
                    found = side.apply(read)
                    if found is not None and found[2] > 0:
                        steps.append(found[2])
                continue
            side = new if line.kind == ADDED else old
            found = side.apply(read)
            if found is None:
                continue
            key, indent, step = found
            if step > 0:
                steps.append(step)
            value = read[5] if read else ""  # type: ignore[misc]
            number = line.new_line if line.kind == ADDED else line.old_line
            events.append((line.kind, tuple(side.stack[:-1]), key, indent, value, number, hunk_index))  # the key's parents
    return _finish(events, steps)


_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(.*)$')


def json_keys(hunks: Iterable[Hunk]) -> KeyChanges:
    """Keys added/removed/changed in a pretty-printed JSON file's hunks (see :func:`json_changes`)."""
    return json_changes(hunks)[0]


def json_changes(hunks: Iterable[Hunk]) -> tuple[KeyChanges, list[_Value], list[_Value]]:
    """Keys added/removed/changed in a pretty-printed JSON file's hunks, as dotted paths.

    Nesting is read from indentation, as JSON formatters write it; keys inside arrays of
    objects take the array's key as parent. Never raises.
    """
    events: list[_Event] = []
    steps: list[int] = []
    for hunk_index, hunk in enumerate(hunks):
        stacks: dict[str, list[_Entry]] = {ADDED: [], REMOVED: []}
        for line in hunk.lines:
            stripped = line.text.lstrip()
            if not stripped.startswith('"'):
                continue
            m = _JSON_KEY.match(stripped)
            if m is None:
                continue
            indent = len(line.text) - len(stripped)
            key, value = m.group(1), m.group(2).strip()
            sides = (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,)
            for side in sides:
                stack = stacks[side]
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                if stack:
                    steps.append(indent - stack[-1][0])
                if line.kind != CONTEXT:
                    number = line.new_line if side == ADDED else line.old_line
                    events.append((side, tuple(stack), key, indent, value.rstrip(","), number, hunk_index))
                if value.startswith(("{", "[")) and not value.rstrip(",").endswith(("}", "]")):
                    stack.append((indent, key, True))
    return _finish(events, steps)


# --- table formats (TOML, INI) ---------------------------------------------------------

_TOML_TABLE = re.compile(r"\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"""((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=\s*(.*)$""")
_INI_KEY = re.compile(r"([^=:\s\[;#][^=:]{0,200}?)\s*[=:]\s*(.*)$")


@dataclass(slots=True)
class TomlState:
    """Where one side of a TOML hunk is: current table and open multi-line array.

    ``table`` is ``None`` while no ``[table]`` header has been seen in the hunk (the
    section text never shows one: git only takes lines that start with a letter).
    ``array_key`` is the key whose multi-line array value the line is inside, or ``""``.
    """

    table: str | None = None
    array_key: str = ""
    array_depth: int = 0
    in_string: bool = False


_TOML_KEY_PART = re.compile(r"\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+")


def _unquote(key: str) -> str:
    return ".".join(part.strip("\"'") for part in _TOML_KEY_PART.findall(key))


def toml_start(section: str) -> TomlState:
    """The state a hunk starts in, from its section text (``fsdp = [`` opens an array)."""
    state = TomlState()
    m = _TOML_KEY.match(section)
    if m is not None:
        value = m.group(2)
        depth = value.count("[") - value.count("]")
        if value.startswith("[") and depth > 0:
            state.array_key, state.array_depth = _unquote(m.group(1)), depth
    return state


def toml_step(state: TomlState, text: str) -> tuple[str, str, str] | None:
    """Follow one TOML line; return ``("table", name, "")``, ``("key", dotted key, value)``,
    ``("item", array key, line)`` for a line inside a multi-line array, or ``None``."""
    stripped = text.strip()
    if state.in_string:
        if '"""' in stripped or "'''" in stripped:
            state.in_string = False
        return None
    if not stripped or stripped[0] == "#":
        return None
    if state.array_depth > 0:
        state.array_depth += stripped.count("[") - stripped.count("]")
        key = state.array_key
        if state.array_depth <= 0:
            state.array_key, state.array_depth = "", 0
        return "item", key, stripped
    if stripped[0] == "[":
        m = _TOML_TABLE.match(stripped)
        if m is not None:
            state.table = _unquote(m.group(1))
            return "table", state.table, ""
        return None
    m = _TOML_KEY.match(stripped)
    if m is None:
        return None
    key, value = _unquote(m.group(1)), m.group(2)
    if value.startswith(('"""', "'''")) and value.count(value[:3]) == 1:
        state.in_string = True
    elif value.startswith("["):
        depth = value.split("#", 1)[0].count("[") - value.split("#", 1)[0].count("]")
        if depth > 0:
            state.array_key, state.array_depth = key, depth
    full = f"{state.table}.{key}" if state.table else key
    return "key", full, value


def toml_keys(hunks: Iterable[Hunk]) -> KeyChanges:
    """Keys added/removed/changed in a TOML file's hunks, qualified by the table header
    when the hunk shows it (``tool.ruff.line-length``). Never raises."""
    return toml_changes(hunks)[0]


def toml_changes(hunks: Iterable[Hunk]) -> tuple[KeyChanges, list[_Value], list[_Value]]:
    """:func:`toml_keys` with each changed key's value, line and hunk on each side."""
    old: list[_Value] = []
    new: list[_Value] = []
    for hunk_index, hunk in enumerate(hunks):
        sides = {ADDED: toml_start(hunk.section), REMOVED: toml_start(hunk.section)}
        for line in hunk.lines:
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                found = toml_step(sides[side], line.text)
                if found is not None and found[0] == "key" and line.kind != CONTEXT:
                    number = line.new_line if side == ADDED else line.old_line
                    (new if side == ADDED else old).append((found[1], found[2], number, hunk_index))
    return pair_keys([v[0] for v in old], [v[0] for v in new]), old, new


def ini_keys(hunks: Iterable[Hunk]) -> KeyChanges:
    """Keys added/removed/changed in an INI/CFG file's hunks, as ``section.key`` when the
    hunk shows the ``[section]`` header. Indented lines continue a value. Never raises."""
    old: list[str] = []
    new: list[str] = []
    for hunk in hunks:
        sections: dict[str, str | None] = {ADDED: None, REMOVED: None}
        for line in hunk.lines:
            text = line.text
            stripped = text.strip()
            if not stripped or stripped[0] in "#;" or text[:1] in (" ", "\t"):
                continue
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                if stripped[0] == "[" and stripped.endswith("]"):
                    sections[side] = stripped[1:-1].strip()
                    continue
                m = _INI_KEY.match(stripped)
                if m is None or line.kind == CONTEXT:
                    continue
                section = sections[side]
                key = f"{section}.{m.group(1)}" if section else m.group(1)
                (new if side == ADDED else old).append(key)
    return pair_keys(old, new)


_BY_LANGUAGE = {"yaml": yaml_keys, "json": json_keys, "toml": toml_keys, "ini": ini_keys}
_WITH_VALUES = {"yaml": yaml_changes, "json": json_changes, "toml": toml_changes}


def config_keys(hunks: Sequence[Hunk], language: str | None) -> KeyChanges:
    """Dispatch on ``language`` (``yaml``, ``json``, ``toml``, ``ini``); others give no keys."""
    handler = _BY_LANGUAGE.get(language or "")
    return handler(hunks) if handler is not None else KeyChanges()


def config_changes(hunks: Sequence[Hunk], language: str | None, path: str = "") -> tuple[KeyChanges, tuple[BehaviourFact, ...]]:
    """:func:`config_keys` plus behaviour facts for YAML, JSON and TOML files.

    Facts (``path`` put on each): ``default_changed`` when a key on both sides has a
    different scalar value (``old``/``new`` as written, comments dropped);
    ``key_renamed`` when a removed key and an added key of the same parent and hunk
    hold the same scalar value (``old``/``new`` the two paths, ``detail`` the value);
    ``key_removed`` for the other removed keys: the leaves, never a removed mapping
    whose removed children are seen (``trainer.some_flag``, not ``trainer``).
    ``user_facing`` is false for dot-files and files in dot-folders (``.github/``). Never raises.
    """
    handler = _WITH_VALUES.get(language or "")
    if handler is None:
        return config_keys(hunks, language), ()
    keys, old, new = handler(hunks)
    if language == "yaml":
        # Hydra's ``defaults:`` list picks which config files compose this one: its entries
        # (``defaults.actor@actor_rollout_ref.actor``) are no key a user sets, and a new entry
        # is no changed default ("default of `defaults.actor…` changes to `${model_engine}_actor`"
        # while every run resolves to the same file). The keys stay listed, so a reader can
        # still tell that the composition changed (bot.engine.breaking).
        old = [v for v in old if not _composition(v[0])]
        new = [v for v in new if not _composition(v[0])]
    if not old:
        return keys, ()
    return keys, tuple(value_facts(path, old, new))


def _composition(key: str) -> bool:
    """True for an entry of a Hydra ``defaults:`` list."""
    return key == "defaults" or key.startswith("defaults.")


_EMPTY_VALUES = frozenset({"", "{", "[", "|", ">", "|-", ">-", "|+", ">+"})


def _scalar(value: str) -> str:
    """A value as written without a trailing comment; ``""`` for an opening bracket or block."""
    value = value.strip()
    if " #" in value and '"' not in value and "'" not in value:
        value = value.split(" #", 1)[0].rstrip()
    if value in _EMPTY_VALUES or (value[:1] in "{[" and value[-1:] not in "}]"):
        return ""
    return value


#: Spaces beside a flow collection's punctuation: ``{ }`` is ``{}``, ``[ 'a', 'b' ]`` is
#: ``['a','b']`` (a re-spaced value is no new default, fresh-p #74).
_FLOW_SPACE = re.compile(r"\s*([\[\]{},:])\s*")


def value_facts(path: str, old: Sequence[_Value], new: Sequence[_Value]) -> list[BehaviourFact]:
    """``default_changed``, ``key_renamed`` and ``key_removed`` facts from keys seen on each side."""
    user_facing = "/." not in "/" + path
    old_by = {v[0]: v for v in old}
    new_by = {v[0]: v for v in new}
    out: list[BehaviourFact] = []
    fresh: list[_Value] | None = None
    parents: set[str] | None = None
    taken: set[str] = set()
    for key, value, number, hunk in old_by.values():
        other = new_by.get(key)
        if other is not None:
            if value != other[1]:
                before, after = _scalar(value), _scalar(other[1])
                if before and after and before != after and _FLOW_SPACE.sub(r"\1", before) != _FLOW_SPACE.sub(r"\1", after):
                    out.append(BehaviourFact("default_changed", path, key, before, after, "", other[2], user_facing))
            continue
        parent = key.rpartition(".")[0]
        before = _scalar(value)
        if parents is None:
            parents = {k.rpartition(".")[0] for k in old_by}
        if not before and key in parents:
            # A mapping removed with its children: the children are what went (reported
            # one by one), not the parent, which a composed config (Hydra ``defaults``)
            # or another file may still define.
            continue
        twin = None
        if before:
            if fresh is None:
                fresh = [v for v in new if v[0] not in old_by]
            for cand in fresh:
                if cand[3] == hunk and cand[0] not in taken and cand[0].rpartition(".")[0] == parent and _scalar(cand[1]) == before:
                    twin = cand
                    break
        if twin is not None:
            taken.add(twin[0])
            out.append(BehaviourFact("key_renamed", path, twin[0], key, twin[0], before, twin[2], user_facing))
        else:
            out.append(BehaviourFact("key_removed", path, key, before, "", "", number, user_facing))
    return out
