"""Which earlier pull request added the same lines a fix adds ("adds lines #N also added").

Pure. SZZ blames lines a fix deletes or rewrites; a fix that completes an earlier change
(a configuration key, an argument or a call #N added in some places and not in others)
deletes nothing of #N's, so blame cannot find #N. But the fix *adds* lines #N added: the
same text. When no pull request clearly wrote the traced lines of a fix, the one merged
within :data:`WINDOW_DAYS` days before it that added the most of the lines it adds is
named, when it added at least :data:`MIN_LEAD` times as many of them as the next one, at
least :data:`MIN_LINES` of them or all of them, and at least half of them. The
claim is only that: these lines were also added by #N (where, and which), not that #N
wrote the lines the fix changes.

A line counts when it says something on its own (:func:`added_lines`): at least
:data:`MIN_TEXT` characters once whitespace is collapsed, with a letter, not a comment or
an import, not also deleted by the same pull request (a move or a re-wrap adds nothing),
in a file whose lines :func:`bot.engine.history.lines.trace_plan` traces (code and
configuration; not documentation, CI, examples or build files), tests aside.

Only a source that reads earlier diffs gives the facts (``prguide history`` and
``prguide guide --repo`` with a clone, :func:`bot.sources.githistory.history_facts`); the
app does not read them (each earlier pull request would cost a request), so its guides
never say it. On the oracle of ``bench/history_links.py`` (section 22 of
``bench/HISTORY.md``) the setting was chosen on the odd-numbered fixes and held on the
even ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.engine.analysis.kinds import kind_of, language_of
from bot.engine.analysis.patch import ADDED, REMOVED, parse_patch
from bot.engine.history.lines import _IMPORT, _SKIPPED_KINDS, COMMENT_PREFIXES, _is_lock, _key
from bot.engine.history.model import EarlierAdded
from bot.engine.snapshot import ChangedFile

#: Earlier pull requests merged at most this many days before the fix are compared.
WINDOW_DAYS = 60
#: Added lines shorter than this (whitespace collapsed) say too little to match on.
MIN_TEXT = 10
#: The top pull request must have added this many times as many of the lines as the next ...
MIN_LEAD = 3.0
#: ... and at least this many of them, unless it added every line the fix adds that counts:
#: one line among many says little (on verl's newest 300 pull requests, 7 of the 16 fixes
#: named rested on one line of 2 to 70, such as ``return token_ids``).
MIN_LINES = 2
#: A pull request adding more matching lines than this is compared on these only (a bound
#: on the work, and on what the source keeps: a generated sweep adds thousands).
MAX_TEXTS = 500

#: Kinds of files whose added lines are not compared: those blame does not trace, and tests
#: (two tests built the same way share set-up lines, which says nothing of what a fix completes).
_NOT_COMPARED = _SKIPPED_KINDS | {"test"}
_LETTER = re.compile(r"[A-Za-z]")
#: Line openers that are comments or docstrings in any language (a language's own are added).
_COMMENTS = ("#", "//", "/*", "*", '"""', "'''")


def added_lines(files: Sequence[ChangedFile]) -> dict[str, str]:
    """``{text: path}``: the lines ``files`` (one pull request's) add that count (see the
    module docstring), whitespace collapsed, each with the first file adding it, in order."""
    added: dict[str, str] = {}
    deleted: set[str] = set()
    for f in files:
        hunks = parse_patch(f.patch)
        if not hunks or _is_lock(f.filename) or kind_of(f.filename, status=f.status, patch=f.patch, changes=f.changes) in _NOT_COMPARED:
            continue
        language = language_of(f.filename) or ""
        comment = _COMMENTS + COMMENT_PREFIXES.get(language, ())
        imports = _IMPORT.get(language)
        for hunk in hunks:
            for d in hunk.lines:
                if d.kind == REMOVED:
                    deleted.add(_key(d.text))
                elif d.kind == ADDED:
                    key = _key(d.text)
                    if len(key) >= MIN_TEXT and _LETTER.search(key) and not key.startswith(comment) and not (imports and imports.match(key)):
                        added.setdefault(key, f.filename)
    return {k: path for k, path in added.items() if k not in deleted}


def shared(number: int, mine: Mapping[str, str], theirs: Mapping[str, str]) -> EarlierAdded | None:
    """What pull request ``number``, which added ``theirs`` (:func:`added_lines`), shares with
    ``mine``: the lines both added, in ``mine``'s order, at most :data:`MAX_TEXTS`; ``None``
    when none."""
    texts = [k for k in mine if k in theirs][:MAX_TEXTS]
    return EarlierAdded(number, tuple(texts), tuple(theirs[k] for k in texts)) if texts else None


def same_lines(
    earlier: Sequence[EarlierAdded], *, own: int = 0, total: int = 0, min_lead: float = MIN_LEAD, min_lines: int = MIN_LINES
) -> EarlierAdded | None:
    """The pull request of ``earlier`` (newest first, as :attr:`HistoryFacts.added` holds
    them) that added the most of the ``total`` lines the fix adds that count, when it added
    at least ``min_lead`` times as many as the next one (ties: the newer first) and at least
    ``min_lines`` of them or all ``total``; ``None`` otherwise. ``own`` is never named."""
    ranked = sorted((e for e in earlier if e.number != own and e.texts), key=lambda e: -len(e.texts))
    if not ranked:
        return None
    top = len(ranked[0].texts)
    runner = len(ranked[1].texts) if len(ranked) > 1 else 0
    # At least half the lines: "#N added 2 of the 43 lines this fix adds" tied the fix to #N
    # on a line or two any change of that code could write (``sort_keys = []``).
    return ranked[0] if top >= min_lead * runner and (top >= min_lines or top >= total) and 2 * top >= total else None
