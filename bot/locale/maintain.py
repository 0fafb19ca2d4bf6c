"""Keep the message catalogue in step with the code: ``python -m bot.locale.maintain COMMAND``.

``extract``
    Extract message ids from the code and the Jinja2 templates (``babel.cfg``, the
    keywords in :data:`KEYWORDS`), write ``bot/locale/prguide.pot`` (each id with its
    English text as a translator comment) and bring every ``.po`` file in line: new
    ids are added untranslated, ids the code no longer uses are dropped. Exit status 1
    when an id has no English text.
``check``
    Report what the tests refuse: a message without a translation in a shipped
    language, placeholders that differ from the English ones, a ``.pot`` that is not
    what extraction gives. Exit status 1 when anything is wrong.
``absorb [FILE...]``
    Move hand-written message tables (a module-level ``MESSAGES``
    ``{key: {lang: text}}`` or ``_CATALOG`` ``{lang: {key: text}}`` dict, default:
    every one under ``bot/``) into the ``.po`` files, ``KEY``/``KEY.one`` (or
    ``KEY_one``) pairs becoming one plural message, then delete the tables from the
    source and run ``extract``. Ids the extraction cannot see (passed around as data
    or composed at run time) are declared in :mod:`bot.locale.indirect`.

The ``pybabel`` command line does the same with the same configuration (see the
README, "How to add a language").
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import re
import string
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.locale import DOMAIN, LOCALE_DIR, SOURCE_LANGUAGE, languages, po_path

#: The repository (or installed tree) the catalogue is extracted from.
ROOT = LOCALE_DIR.parent.parent
PACKAGE = LOCALE_DIR.parent
POT_PATH = LOCALE_DIR / f"{DOMAIN}.pot"
MAPPING_PATH = ROOT / "babel.cfg"
INDIRECT_PATH = LOCALE_DIR / "indirect.py"
#: Call names whose string arguments are message ids (Babel's keyword syntax: argument positions).
KEYWORDS: dict[str, Any] = {"t": None, "Reason": None, "N_": None, "NP_": (1, 2), "gettext": None, "ngettext": (1, 2), "_": None}
#: Names of module-level message tables ``absorb`` takes in.
TABLE_NAMES = ("MESSAGES", "_CATALOG")
#: Suffixes of the singular half of a hand-rolled plural pair.
SINGULAR_SUFFIXES = (".one", "_one")
_LANG = re.compile(r"^[a-z]{2,3}(_[A-Z]{2})?$")


@dataclass
class Extracted:
    """Ids found by extraction: ``ids`` in order of first appearance, ``plurals`` those marked plural."""

    ids: dict[str, list[str]] = field(default_factory=dict)
    plurals: set[str] = field(default_factory=set)


def _mapping() -> tuple[list[tuple[str, str]], dict[str, dict[str, str]]]:
    from babel.messages.frontend import parse_mapping_cfg

    with MAPPING_PATH.open(encoding="utf-8") as handle:
        return parse_mapping_cfg(handle)


def extract() -> Extracted:
    """Every message id the code and the templates use (see ``babel.cfg``)."""
    from babel.messages.extract import extract_from_dir

    method_map, options_map = _mapping()
    found = Extracted()
    # Babel warns about every f-string it skips; ids composed that way are declared in indirect.py.
    with contextlib.redirect_stderr(io.StringIO()):
        extracted = list(
            extract_from_dir(str(ROOT), method_map, options_map, keywords=KEYWORDS, comment_tags=(), strip_comment_tags=True)
        )
    for filename, lineno, message, _comments, _context in extracted:
        if isinstance(message, tuple):
            msgid = message[0]
            found.plurals.add(msgid)
        else:
            msgid = message
        if msgid:
            found.ids.setdefault(msgid, []).append(f"{filename}:{lineno}")
    return found


def placeholders(text: str) -> set[str]:
    """The ``str.format`` field names of ``text`` (``{count}`` -> ``count``)."""
    names = set()
    for _literal, name, _spec, _conversion in string.Formatter().parse(text):
        if name is not None:
            names.add(re.split(r"[.\[]", name, maxsplit=1)[0])
    return names


def _read(lang: str) -> Any:
    from bot.locale import read_catalog

    return read_catalog(lang)


def _write(catalog: Any, path: Path) -> None:
    from babel.messages.pofile import write_po

    for message in catalog:
        if not message.id:
            continue
        forms = message.string if isinstance(message.string, tuple) else (message.string,)
        if any("{" in f for f in forms if f):
            message.flags.add("python-brace-format")
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=0, no_location=True, sort_output=True, ignore_obsolete=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


def _new_catalog(lang: str) -> Any:
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale=lang, domain=DOMAIN, project="prguide", fuzzy=False)
    catalog.msgid_bugs_address = ""
    return catalog


def _english(catalog: Any) -> dict[str, Any]:
    return {m.id[0] if isinstance(m.id, tuple) else m.id: m.string for m in catalog if m.id}


def write_template(found: Extracted, english: Mapping[str, Any]) -> None:
    """Write the ``.pot``: every extracted id, plural where marked, its English text as a comment."""
    from babel.messages.catalog import Catalog

    pot = Catalog(domain=DOMAIN, project="prguide", fuzzy=False)
    pot.msgid_bugs_address = ""
    for msgid in sorted(found.ids):
        source = english.get(msgid)
        forms = source if isinstance(source, tuple) else (source,) if source else ()
        pot.add((msgid, msgid) if msgid in found.plurals else msgid, auto_comments=[f for f in forms if f])
    _write_pot(pot)


def _write_pot(pot: Any) -> None:
    from babel.messages.pofile import write_po

    buffer = io.BytesIO()
    write_po(buffer, pot, width=0, no_location=True, sort_output=True, omit_header=False)
    # The creation date would change the file on every run; the ids are what matters.
    text = re.sub(rb'"POT-Creation-Date: [^"]*\\n"\n', b"", buffer.getvalue())
    POT_PATH.write_bytes(text)


def sync(found: Extracted) -> list[str]:
    """Bring every ``.po`` file in line with ``found``; returns the problems (ids without English)."""
    problems = []
    for lang in languages():
        catalog = _read(lang)
        current = {m.id[0] if isinstance(m.id, tuple) else m.id: m for m in catalog if m.id}
        for msgid in list(current):
            if msgid not in found.ids:
                print(f"{lang}: dropped {msgid!r}, no longer used", file=sys.stderr)
                del catalog[msgid]
        for msgid in found.ids:
            plural = msgid in found.plurals
            message = current.get(msgid)
            if message is None:
                catalog.add((msgid, msgid) if plural else msgid, ("",) * catalog.num_plurals if plural else "")
            elif plural and not message.pluralizable:
                string_ = message.string or ""
                del catalog[msgid]
                catalog.add((msgid, msgid), (string_,) * catalog.num_plurals)
        _write(catalog, po_path(lang))
    english = _english(_read(SOURCE_LANGUAGE))
    for msgid in found.ids:
        value = english.get(msgid)
        if not value or (isinstance(value, tuple) and not all(value)):
            problems.append(f"{msgid}: no English text ({', '.join(found.ids[msgid][:2])})")
    write_template(found, english)
    return problems


def template_ids() -> tuple[set[str], set[str]]:
    """``(ids, plural ids)`` of the committed ``.pot``."""
    from babel.messages.pofile import read_po

    with POT_PATH.open("rb") as handle:
        pot = read_po(handle)
    ids = {m.id[0] if isinstance(m.id, tuple) else m.id for m in pot if m.id}
    return ids, {m.id[0] for m in pot if m.id and m.pluralizable}


def stale_template(found: Extracted) -> list[str]:
    """How the committed ``.pot`` differs from what extraction gives now (empty: up to date)."""
    ids, plurals = template_ids()
    problems = []
    if ids != set(found.ids):
        problems.append(
            f"{POT_PATH.name} is out of date: new {sorted(set(found.ids) - ids)[:10]}, gone {sorted(ids - set(found.ids))[:10]};"
            " run `python -m bot.locale.maintain extract`"
        )
    if plurals != found.plurals:
        problems.append(f"{POT_PATH.name}: plural messages differ: {sorted(plurals ^ found.plurals)[:10]}")
    return problems


def forms_of(catalog: Any) -> dict[str, tuple[str, ...] | None]:
    """``{id: translated forms}`` of a catalogue; ``None`` for a fuzzy message (not shipped)."""
    out: dict[str, tuple[str, ...] | None] = {}
    for m in catalog:
        if not m.id:
            continue
        key = m.id[0] if isinstance(m.id, tuple) else m.id
        forms = m.string if isinstance(m.string, tuple) else (m.string or "",)
        out[key] = None if "fuzzy" in m.flags else tuple(forms)
    return out


def translation_problems(
    lang: str, messages: Mapping[str, tuple[str, ...] | None], english: Mapping[str, tuple[str, ...] | None], plurals: set[str]
) -> list[str]:
    """What is wrong with ``lang``'s ``messages`` against the ``english`` source.

    A message is missing, empty or fuzzy; a plural message is not one (or the other
    way round); its placeholders differ from the English ones. A single form of a
    plural message may leave out ``{count}`` ("1 rule"); the set over all forms may
    not differ.
    """
    problems = []
    for msgid in sorted(english):
        forms = messages.get(msgid)
        if not forms or not all(forms):
            problems.append(f"{lang}: {msgid} has no translation")
            continue
        plural = msgid in plurals
        if lang == SOURCE_LANGUAGE and plural != (len(forms) > 1):
            # English has two forms; how many another language has is its Plural-Forms' business.
            problems.append(f"{lang}: {msgid} should {'' if plural else 'not '}be a plural message")
            continue
        expected = set().union(*(placeholders(f) for f in english[msgid] or ("",)))
        got = set().union(*(placeholders(f) for f in forms))
        if got != expected:
            problems.append(f"{lang}: {msgid} has placeholders {sorted(got)}, English has {sorted(expected)}")
    for msgid in sorted(set(messages) - set(english)):
        problems.append(f"{lang}: {msgid} is not a message of the source catalogue")
    return problems


def check() -> list[str]:
    """Everything the tests refuse: a stale ``.pot``, a message a language lacks, placeholders that differ."""
    problems = stale_template(extract())
    english = forms_of(_read(SOURCE_LANGUAGE))
    _ids, plurals = template_ids()
    for lang in languages():
        problems += translation_problems(lang, forms_of(_read(lang)), english, plurals)
    return problems


# --- absorbing hand-written tables -----------------------------------------------------------


def find_tables(paths: Iterable[Path]) -> list[tuple[Path, ast.stmt, dict[str, dict[str, str]]]]:
    """Module-level message tables in ``paths``: ``(file, statement, {key: {lang: text}})``."""
    tables = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
            if not isinstance(target, ast.Name) or target.id not in TABLE_NAMES or node.value is None:
                continue
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if not isinstance(value, dict) or not value:
                continue
            if all(isinstance(k, str) and _LANG.match(k) for k in value) and all(isinstance(v, dict) for v in value.values()):
                by_key: dict[str, dict[str, str]] = {}
                for lang, entries in value.items():
                    for key, text in entries.items():
                        by_key.setdefault(key, {})[lang] = text
                tables.append((path, node, by_key))
            elif all(isinstance(v, dict) for v in value.values()):
                tables.append((path, node, value))
    return tables


def _plural_pairs(entries: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """``{singular key: plural key}`` for every ``KEY.one``/``KEY_one`` whose ``KEY`` exists."""
    pairs = {}
    for key in entries:
        for suffix in SINGULAR_SUFFIXES:
            if key.endswith(suffix) and key[: -len(suffix)] in entries:
                pairs[key] = key[: -len(suffix)]
    return pairs


def absorb(paths: Iterable[Path]) -> list[str]:
    """Move the message tables of ``paths`` into the ``.po`` files and out of the code; returns the ids absorbed."""
    tables = find_tables(paths)
    entries: dict[str, dict[str, str]] = {}
    for path, _node, table in tables:
        for key, texts in table.items():
            if key in entries and entries[key] != texts:
                raise SystemExit(f"{path}: message {key!r} is defined twice with different texts")
            entries[key] = dict(texts)
    pairs = _plural_pairs(entries)
    plural_keys = set(pairs.values())
    # Everything that can fail is worked out before any file changes.
    skip = {(path.resolve(), node.lineno, node.end_lineno or node.lineno) for path, node, _table in tables}
    indirect = _indirect_source(entries, pairs, skip)
    langs = sorted({lang for texts in entries.values() for lang in texts} | set(languages()))
    for lang in langs:
        path = po_path(lang)
        catalog = _read(lang) if path.is_file() else _new_catalog(lang)
        for key, texts in entries.items():
            if key in pairs or lang not in texts:
                continue
            if key in plural_keys:
                singular = entries[_singular_of(key, pairs)].get(lang, texts[lang])
                forms = (singular, texts[lang]) if catalog.num_plurals == 2 else (texts[lang],) * catalog.num_plurals
                new: Any = (key, key), forms
            else:
                new = key, texts[lang]
            old = catalog.get(key)
            if old is not None:
                if old.string != new[1]:
                    # The table is the newer text (a merge brings it); say so, so a clash is seen.
                    print(f"{lang}: {key}: text replaced: {old.string!r} -> {new[1]!r}", file=sys.stderr)
                del catalog[key]
            catalog.add(*new)
        _write(catalog, path)
    INDIRECT_PATH.write_text(indirect, encoding="utf-8")
    for path, node, _table in sorted(tables, key=lambda item: -item[1].lineno):
        _delete_statement(path, node)
    return sorted(set(entries) - set(pairs))


def _singular_of(key: str, pairs: Mapping[str, str]) -> str:
    return next(s for s, p in pairs.items() if p == key)


def _delete_statement(path: Path, node: ast.stmt) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    start = node.lineno - 1
    # The table's comment lines go with it.
    while start > 0 and lines[start - 1].startswith("#"):
        start -= 1
    del lines[start : node.end_lineno]
    # No more than two blank lines where the table was.
    path.write_text(re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines)), encoding="utf-8")


@dataclass
class Uses:
    """Where the code could name a message id outside a call extraction sees (see :func:`uses`)."""

    #: ``{string literal: files}``.
    literals: dict[str, list[str]] = field(default_factory=dict)
    #: ``[(literal head of an f-string, file)]``.
    heads: list[tuple[str, str]] = field(default_factory=list)
    #: ``{file: its string literals}``, for ids glued from pieces (``"area.word" + ".plain"``).
    by_file: dict[str, set[str]] = field(default_factory=dict)

    def files(self, key: str) -> list[str]:
        """The files that may use ``key``: it is a literal there, starts with an f-string's
        literal head (``f"type.{kind}"`` uses every ``type.*`` id), or is a few of the
        file's literals glued; empty for an id nothing uses."""
        if key in self.literals:
            return self.literals[key]
        found = {where for head, where in self.heads if key.startswith(head)}
        found |= {where for where, literals in self.by_file.items() if _glued(key, literals)}
        return sorted(found)


def _glued(key: str, literals: set[str], most: int = 4) -> bool:
    """True when ``key`` is two to ``most`` of ``literals`` end to end (f-string fragments count)."""
    # pieces[i]: the fewest literals that spell key[:i].
    pieces = [0] + [most + 1] * len(key)
    for end in range(1, len(key) + 1):
        for start in range(end):
            if pieces[start] < most and key[start:end] in literals:
                pieces[end] = min(pieces[end], pieces[start] + 1)
    return 2 <= pieces[-1] <= most


def uses(skip: Iterable[tuple[Path, int, int]] = ()) -> Uses:
    """The string literals of the Python code outside :mod:`bot.locale` and the quoted strings of the templates.

    ``skip``: ``(file, first line, last line)`` ranges not to read (the tables being
    absorbed). Raises ``SystemExit`` for a file that does not parse (a merge conflict
    left in it).
    """
    skipped = list(skip)
    found = Uses()

    def add(value: str, where: str) -> None:
        files = found.literals.setdefault(value, [])
        if where not in files:
            files.append(where)
        found.by_file.setdefault(where, set()).add(value)

    for path in sorted(PACKAGE.rglob("*.py")):
        if LOCALE_DIR in path.parents or path.parent == LOCALE_DIR:
            continue
        where = str(path.relative_to(ROOT))
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except SyntaxError as exc:
            raise SystemExit(f"{where}:{exc.lineno}: cannot parse ({exc.msg}); fix it first") from None
        ranges = [(a, b) for f, a, b in skipped if f == path.resolve()]
        for node in ast.walk(tree):
            if ranges and any(a <= getattr(node, "lineno", 0) <= b for a, b in ranges):
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                add(node.value, where)
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                if len(node.values) > 1 and node.values[0].value:
                    found.heads.append((node.values[0].value, where))
    for path in sorted(PACKAGE.rglob("templates/*")):
        where = str(path.relative_to(ROOT))
        for match in re.finditer(r"""(['"])([^'"{}<>]+)\1""", path.read_text(encoding="utf-8")):
            add(match.group(2), where)
    return found


#: The group of :mod:`bot.locale.indirect` holding ids no code seems to use.
UNUSED_GROUP = "no use found in the code: check, then delete the line and run extract"


def _indirect_source(entries: Mapping[str, Any], pairs: Mapping[str, str], skip: Iterable[tuple[Path, int, int]]) -> str:
    """The new text of :mod:`bot.locale.indirect`: the ids extraction does not see at their use.

    Those of ``entries`` (just absorbed) and those declared before, unless a call
    with a literal id (``t("h.focus", ...)``) now shows them; a plural message is
    declared unless a plural call shows it.
    """
    found = extract()
    indirect = str(INDIRECT_PATH.relative_to(ROOT))
    direct = {k for k, where in found.ids.items() if any(not w.startswith(indirect + ":") for w in where)}
    before, before_plural = indirect_ids()
    # An absorbed table says what is plural now; for the rest, the declaration so far.
    plural_keys = set(pairs.values()) | {k for k in before_plural if k not in entries}
    used = uses(skip)
    groups: dict[str, set[str]] = {}
    for key in (set(entries) - set(pairs)) | before | before_plural:
        plural = key in plural_keys
        if key in direct and not plural:
            continue
        files = used.files(key)
        if files:
            where = ", ".join(files[:3])
        elif key in direct:
            where = "a call that extraction sees; plural"
        else:
            # Never dropped here: an id may be glued in ways no scan sees. The test names it.
            print(f"message {key!r}: no use found; declared under {UNUSED_GROUP!r}", file=sys.stderr)
            where = UNUSED_GROUP
        groups.setdefault(where, set()).add(f'    NP_("{key}", "{key}"),' if plural else f'    N_("{key}"),')
    body = []
    for where in sorted(groups):
        body.append(f"    # {where}")
        body.extend(sorted(groups[where]))
    return _INDIRECT_HEAD + "\n".join(body) + "\n)\n"


_INDIRECT_HEAD = '''"""Message ids extraction cannot see at their call: passed around as data, composed, or plural.

A refusal's reason, a focus point's key or an importance factor's key is a string
handed to :func:`bot.engine.render.messages.t` later; ``type.{kind}`` is composed at run
time; a plural message is used through ``t(key, lang, {"count": n})``. Declaring
them here keeps them in the ``.pot``. Written by ``python -m bot.locale.maintain
absorb``; ``tests/test_catalog.py`` fails while an id here has no use in the code.
"""

from bot.locale import N_, NP_

IDS = (
'''


def indirect_ids() -> tuple[set[str], set[str]]:
    """``(ids, plural ids)`` declared in :mod:`bot.locale.indirect`."""
    if not INDIRECT_PATH.is_file():
        return set(), set()
    ids, plurals = set(), set()
    for node in ast.walk(ast.parse(INDIRECT_PATH.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("N_", "NP_"):
            key = node.args[0].value
            (plurals if node.func.id == "NP_" else ids).add(key)
    return ids, plurals


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bot.locale.maintain", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("extract", help="extract ids, write the .pot, update the .po files")
    commands.add_parser("check", help="report missing translations, placeholder mismatches, a stale .pot")
    absorb_parser = commands.add_parser("absorb", help="move message dicts into the .po files")
    absorb_parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    if args.command == "absorb":
        files = args.files or sorted(PACKAGE.rglob("*.py"))
        ids = absorb(files)
        print(f"absorbed {len(ids)} messages", file=sys.stderr)
    if args.command in ("absorb", "extract"):
        problems = sync(extract())
    else:
        problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover - exercised through main()
    sys.exit(main())
