"""The summary from the guide's strongest exact focus point, when nothing better qualifies.

Pure. Raters took "Changes 1 source file under `verl/x/` (+11/−31)." for no summary at
all, while the same guide's focus points often held an exact, evidenced change (an
environment variable no longer read, a call added, a default changed). :func:`point_summary`
states the first such point (the focus points are ordered by weight: breaking and
behaviour facts first, then exact edits, then new or removed definitions) as one sentence
with its location, and carries that point's evidence. Points that are no exact change
(the "largest change" of a file with the names it uses, a design sentence, a review
thread, tests to read, a rule's note) are never used.
"""

from __future__ import annotations

import posixpath
from typing import Any, NamedTuple

from bot.engine.analysis.model import DiffAnalysis, Evidence
from bot.engine.render import sanitize
from bot.engine.render.ledger import point_evidence
from bot.engine.render.messages import t
from bot.locale import N_, NP_

#: Focus point keys (or their prefixes, ending in ".") whose message states an exact change.
_EXACT = tuple("focus." + p for p in ("fact.", "edit.", "config_added", "config_removed", "config_moved", "dep_", "added",
                                        "removed"))
#: Keys of exact edits, worded with their line ("line 12: now also calls …").
_EDIT = "focus." + "edit."
#: File kinds whose points a summary may state (a test's or an example's change is not
#: what the pull request does).
_KINDS = ("source", "config", "build", "ci")
#: A summary longer than this (plain characters) is no sentence a reader takes in at a glance;
#: the next point is tried.
MAX_CHARS = 200


class PointSummary(NamedTuple):
    """A summary sentence (Markdown, not yet ended) and the evidence it rests on."""

    text: str
    evidence: tuple[Evidence, ...]


def exact_key(key: str | None) -> bool:
    """True when a focus point with message ``key`` states one exact change."""
    return bool(key) and key.startswith(_EXACT)


def _candidates(focus, analysis: DiffAnalysis) -> list[tuple[Any, str, dict, tuple[Evidence, ...]]]:
    """``(point, key, params, evidence)`` for each exact change among ``focus``, heaviest
    first: the point itself when its key is exact, else the first exact edit listed inside
    it (with that edit's own evidence: a point's inner edits and evidence are parallel)."""
    kinds = {f.path: f.kind for f in analysis.files}
    found = []
    for p in sorted(focus, key=lambda p: -p.weight):
        if p.text or not p.file or kinds.get(p.file) not in _KINDS:
            continue
        if exact_key(p.key):
            found.append((p, p.key, dict(p.params), tuple(point_evidence(p))))
            continue
        inner = p.params.get("edits", ())
        for i, (key, params) in enumerate(inner):
            if exact_key(key):
                own = (p.evidence[i],) if len(p.evidence) == len(inner) else tuple(point_evidence(p))
                found.append((p, key, dict(params), own))
                break
    return found


def _sentence(point, key: str, params: dict, lang: str) -> str:
    """"In `file.py`: <change>" (an edit: "In `name` (`file.py`), line 12: <change>")."""
    where = sanitize.code(posixpath.basename(point.file))
    if key.startswith(_EDIT):
        name = params.get("name")
        at = key if key.endswith(".at") else key + ".at"
        change = t(at, lang, params)
        if name and not key.endswith(".at"):
            return t(N_("summary.point.edit_in"), lang, {"name": sanitize.code(name), "file": where, "change": change}, raw=True)
        return t(N_("summary.point.edit"), lang, {"file": where, "change": change}, raw=True)
    change = _without_advice(t(key, lang, params))
    if params.get("similar"):
        # "now installs `apex` (and 4 more like it)": the point's count stays with it, or the
        # summary would read as the file's one change.
        change += t("focus.similar", lang, {"count": params["similar"]})
    return t(N_("summary.point"), lang, {"file": where, "change": change}, raw=True)


#: Where a fact's message turns from what changed to what the reader should do
#: ("removed `f`: check nothing still relies on it").
_ADVICE_SEPS = (": ", "：")


def _without_advice(change: str) -> str:
    """``change`` without its advice tail: the text after the last colon when that text
    names nothing (no code span) -- a summary says what changed, the focus point below
    says what to check. A dangling "—" (a value the diff did not have) goes too."""
    for sep in _ADVICE_SEPS:
        head, found, tail = change.rpartition(sep)
        if found and head and "`" not in tail:
            change = head
            break
    return change.removesuffix(" —").rstrip("；;，, ")


def point_summary(focus, analysis: DiffAnalysis, lang: str, reject=lambda en: False) -> PointSummary | None:
    """The strongest exact change among the guide's focus points ``focus`` as a sentence,
    with that point's evidence, or None when no point states an exact change in a file
    of source, config, build or CI (or every such sentence is over :data:`MAX_CHARS`).

    When exact changes in other files exist too, the sentence says how many other code
    files change ("; 5 other files change too"); when there are
    none but the rest of the pull request changed more lines than the point's file, it
    is said to be one of several.
    ``reject(english_markdown) -> bool`` turns a sentence down (the title restated), for
    both languages alike."""
    found = _candidates(focus, analysis)
    for point, key, params, evidence in found:
        others = [(p, ev) for p, _, _, ev in found if p.file != point.file]
        among = not others and _rest_is_bigger(point.file, analysis)
        # The files are all the other changed code files, not only those with a focus point:
        # "2 more changes in 2 files" would hide the rest of a 3,000-file pull request.
        spread = max(len({p.file for p, _ in others}), _other_code_files(point.file, analysis))
        # The length is judged on the English sentence, so both languages state the same point.
        en = _full(point, key, params, others, spread, among, "en")
        if len(en.replace("`", "")) > MAX_CHARS or reject(en):
            continue  # a long config-key list or a long line: the next point may say it shorter
        text = _full(point, key, params, others, spread, among, lang)
        # The other changes counted rest on their own points' evidence (the first line of each).
        return PointSummary(text, evidence + tuple(ev[0] for _, ev in others if ev))
    return None


def _full(point, key: str, params: dict, others: list, spread: int, among: bool, lang: str) -> str:
    """The sentence with its tail: how many other code files change (``spread``) when other
    files hold exact changes too, or that it is one of several."""
    text = _sentence(point, key, params, lang)
    if others:
        # How many other files change, not "N more changes among M files": the focus list is
        # capped, so a count of the other changes would be a guess below the truth.
        text += t(NP_("summary.point.more", "summary.point.more"), lang, {"count": spread}, raw=True)
    elif among:
        text += t(N_("summary.point.among"), lang)
    return text


def _other_code_files(path: str, analysis: DiffAnalysis) -> int:
    """Changed files other than ``path`` that are code (tests and docs left out)."""
    return sum(1 for f in analysis.files if f.path != path and f.counts_as_code and f.kind not in ("test", "docs"))


def _rest_is_bigger(path: str, analysis: DiffAnalysis) -> bool:
    """True when the code files other than ``path`` (tests and docs left out) changed more
    lines than ``path`` did: one point there is then not all the pull request does."""
    own = rest = 0
    for f in analysis.files:
        if f.kind in ("test", "docs") or not f.counts_as_code:
            continue
        if f.path == path:
            own += f.changes
        else:
            rest += f.changes
    return rest > own


# --- a pull request that changes one kind of file only ---------------------------------------

#: File kinds a pull request may change alone for the summary to say so, with their message.
_ONLY = {"test": N_("summary.only.test"), "ci": N_("summary.only.ci"), "example": N_("summary.only.example")}
#: Files an "only" summary names; the others are counted.
_ONLY_FILES = 3


def only_kind_summary(analysis: DiffAnalysis, lang: str) -> PointSummary | None:
    """"Only CI files change: `a.yml`, `b.yml`" when every changed file (generated and
    binary ones left out) is a test, a CI file or an example, all of one kind (a
    documentation-only pull request has its own summary, which names its headings); None
    otherwise. Evidence: each named file with its counts (the file list)."""
    files = [f for f in analysis.files if f.kind not in ("generated", "binary")]
    kinds = {f.kind for f in files}
    if len(kinds) != 1 or next(iter(kinds)) not in _ONLY:
        return None
    named = files[:_ONLY_FILES]
    paths = [f.path for f in named]
    if sum(map(len, paths)) > 120:  # deep paths: the file names say which files
        paths = [posixpath.basename(p) for p in paths]
    text = t(_ONLY[files[0].kind], lang, {"files": t("list.and", lang).join(sanitize.code(p) for p in paths)}, raw=True)
    if len(files) > _ONLY_FILES:
        text += t(NP_("summary.only.more", "summary.only.more"), lang, {"count": len(files) - _ONLY_FILES})
    evidence = tuple(Evidence(f.path, new=f"{f.status}, +{f.additions}/-{f.deletions}", source="metadata") for f in named)
    return PointSummary(text, evidence)
