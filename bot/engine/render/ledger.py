"""The claim ledger: every sentence of the guide as a typed claim with the evidence it rests on.

Pure. :func:`build_claims` turns :class:`bot.engine.render.guide.GuideFacts` into
:class:`GuideClaim` objects, in the order the guide shows them; the Markdown comment
and ``prguide guide --format json``'s ``"claims"`` are both written from them.

The rule the guide keeps (issue 20): **a claim without evidence is not written**.
:func:`shown` applies it, and the renderer only ever sees its result. Evidence comes
from the producer when it gave some (``FocusPoint.evidence``, ``FollowUp.evidence``,
``classify.Claim.evidence``, ``classify.Factor.evidence``); otherwise it is derived
here from what the object already carries (its file, the names and values in its
parameters), so a statement that points at nothing checkable is dropped. Verdict
and score arithmetic rest on ``metadata`` evidence: the counts GitHub reports.

Kinds are stable identifiers (``"summary"``, ``"verdict"``, ``"breaking.key_removed"``,
``"focus.fact.default_changed"``, ``"follow.description_missing"``, ``"tests.added"``...):
the message key a sentence was written from where there is one.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.engine.analysis.model import DiffAnalysis, Evidence
from bot.engine.analysis.versions import install_script, named_on
from bot.engine.focus.housekeeping import api_names, is_lock_file
from bot.engine.focus.model import FocusPoint, Housekeeping, ReviewSummary
from bot.engine.history.follows import SEP as _DEF_SEP
from bot.engine.history.follows import FollowLink
from bot.engine.history.model import EarlierAdded, HistoryLink, PullOrigin
from bot.engine.render import sanitize
from bot.engine.render.messages import MESSAGES, t

#: Sections of the guide, in the order they are shown.
SECTIONS = (
    "summary",
    "breaking",
    "verdict",
    "history",
    "audience",
    "reasons",
    "focus",
    "housekeeping",
    "changed",
    "tests",
    "deps",
    "review",
    "follow_ups",
    "labels",
    "score",
)
#: Longest ``old``/``new`` text an evidence quote carries (characters).
MAX_QUOTE = 200


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class GuideClaim:
    """One sentence of the guide.

    ``kind``: a stable claim kind (usually the message key it is written from);
    ``section``: one of :data:`SECTIONS`; ``text``: the sentence in the guide's
    language, as Markdown with PR text neutralised; ``evidence``: the
    :class:`bot.engine.analysis.model.Evidence` it rests on (empty: not shown).
    """

    kind: str
    section: str
    text: str
    evidence: tuple[Evidence, ...] = ()


def shown(claims: Iterable[GuideClaim]) -> tuple[GuideClaim, ...]:
    """The claims the guide may write: those with evidence, in order."""
    return tuple(c for c in claims if c.evidence)


def by_section(claims: Iterable[GuideClaim]) -> dict[str, list[GuideClaim]]:
    """``{section: [claim, ...]}`` for every section of :data:`SECTIONS` (empty lists included)."""
    out: dict[str, list[GuideClaim]] = {name: [] for name in SECTIONS}
    for claim in claims:
        out.setdefault(claim.section, []).append(claim)
    return out


def describe(claims: Sequence[GuideClaim]) -> list[dict[str, Any]]:
    """Claims as JSON objects ``{kind, section, text, evidence: [{path, start, end, old, new, source}]}``;
    ``text`` is plain (no code spans, no HTML entities)."""
    return [
        {
            "kind": c.kind,
            "section": c.section,
            "text": _plain(c.text).replace("**", ""),
            "evidence": [
                {"path": e.path, "start": e.start, "end": e.end, "old": e.old, "new": e.new, "source": e.source} for e in c.evidence
            ],
        }
        for c in claims
    ]


# --- evidence derived from what an object carries ------------------------------------------


def _quote(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value)[:MAX_QUOTE]
    return str(value)[:MAX_QUOTE]


def _line(params: Mapping[str, Any]) -> int:
    line = params.get("line")
    return line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else 0


def _diff(path: str | None, params: Mapping[str, Any]) -> tuple[Evidence, ...]:
    """Diff evidence for a statement about ``path``: the names or old/new values it states."""
    if not path:
        return ()
    new = params.get("new") if params.get("new") not in (None, "") else params.get("names") or params.get("name") or params.get("text")
    line = _line(params)
    return (Evidence(path=path, start=line, end=line, old=_quote(params.get("old")), new=_quote(new), source="diff"),)


def metadata(snapshot: Any) -> Evidence:
    """The counts GitHub reports for the pull request, as evidence."""
    files = snapshot.changed_files or len(snapshot.files)
    return Evidence(new=f"{files} files, +{snapshot.additions} -{snapshot.deletions}", source="metadata")


def point_evidence(point: Any) -> tuple[Evidence, ...]:
    """A focus point's evidence: its own, else derived from its file and parameters.

    A design bullet rests on the description, a review thread on the review; a point
    about no file (and not from the description or review) has none.
    """
    if point.evidence:
        return tuple(point.evidence)
    params = point.params or {}
    if point.key == "focus.design":
        return (Evidence(path=point.file or "", new=_quote(params.get("text")), source="description"),)
    if point.key == "focus.thread":
        line = _line(params)
        return (Evidence(path=point.file or "", start=line, end=line, new=_quote(params.get("opening") or params.get("text")), source="review"),) if point.file else ()
    if point.text and point.file:
        return (Evidence(path=point.file, new=_quote(point.symbol or ""), source="diff"),)
    if point.text:
        # A rule's note about no file: the rule matched the pull request's title or
        # description (a revert's "This reverts commit ..."), which is what it rests on.
        note = next(iter(point.text.values()), "")
        return (Evidence(new=_quote(note), source="description"),) if note else ()
    return _diff(point.file, {"names": (point.symbol,) if point.symbol else (), **params})


def breaking_evidence(claim: Any) -> tuple[Evidence, ...]:
    """A breaking reason's evidence: its own; the author's mark rests on the description;
    otherwise its file with the name and old/new values it states."""
    if claim.evidence:
        return tuple(claim.evidence)
    if claim.key == "breaking.marked":
        return (Evidence(new=_quote(claim.params.get("rule")), source="description"),)
    return _diff(claim.file, claim.params)


#: Follow-ups that rest on the review, on the description, or on GitHub's counts.
_FOLLOW_SOURCES = {
    "follow.suggestion": "review",
    "follow.changes_requested": "review",
    "follow.description_missing": "description",
    "follow.no_tests": "metadata",
    "follow.truncated": "metadata",
    "follow.missing_patches": "metadata",
}


def follow_evidence(item: Any) -> tuple[Evidence, ...]:
    """A follow-up's evidence: its own, else derived (see :data:`_FOLLOW_SOURCES`; a TODO rests on its file)."""
    if item.evidence:
        return tuple(item.evidence)
    params = item.params or {}
    source = _FOLLOW_SOURCES.get(item.key)
    if source == "description":
        names = params.get("names")
        return (Evidence(new=_quote(names), source="description"),) if names else ()
    if source == "review":
        line = _line(params)
        return (Evidence(path=item.file or "", start=line, end=line, new=_quote(params.get("people")), source="review"),)
    if source == "metadata":
        return (Evidence(path=item.file or "", new=_quote(params.get("names") or params.get("count") or params.get("total")), source="metadata"),)
    return _diff(item.file, params)


def factor_evidence(factor: Any, counts: Evidence) -> tuple[Evidence, ...]:
    """A score factor's evidence: its own, else GitHub's counts."""
    return tuple(factor.evidence) if factor.evidence else (counts,)


# --- the ledger ------------------------------------------------------------------------------


def build_claims(facts: Any, lang: str, *, headline: str, headline_evidence: tuple[Evidence, ...] = (),
                 scale: bool = True) -> tuple[GuideClaim, ...]:
    """Every claim the facts support, in the guide's order, evidence attached (some may
    have none: :func:`shown` drops them). ``facts`` is a :class:`~bot.engine.render.guide.GuideFacts`;
    ``headline`` the summary sentence (:func:`bot.engine.render.summary.choose`) and
    ``headline_evidence`` what it rests on; ``scale`` false leaves out the "(N files, +a/−d)"
    note when the headline is itself that count."""
    s, a, c = facts.snapshot, facts.analysis, facts.classification
    counts = metadata(s)
    out: list[GuideClaim] = []
    add = out.append

    add(GuideClaim("summary", "summary", headline, tuple(headline_evidence)))
    if scale:
        params = {"count": s.changed_files or len(s.files), "additions": s.additions, "deletions": s.deletions}
        add(GuideClaim("summary.scale", "summary", t("summary.scale", lang, params), (counts,)))
    if facts.reverted:
        add(GuideClaim("summary.reverts", "summary", t("summary.reverts", lang, {"number": facts.reverted}, raw=True),
                       (Evidence(new=f"#{facts.reverted}", source="description"),)))  # fmt: skip
    if c.breaking and not c.breaking_reasons:
        add(GuideClaim("summary.breaking", "summary", t("summary.breaking", lang), (Evidence(new="breaking", source="description"),)))

    reasons = list(c.breaking_reasons)
    # The author's mark says nothing more once a fact says what breaks.
    if len(reasons) > 1 and reasons[0].key == "breaking.marked":
        reasons = reasons[1:]
    for r in reasons:
        add(GuideClaim(r.key, "breaking", t(r.key, lang, _claim_params(r)), breaking_evidence(r)))

    level = t(f"level.{c.reading_level}", lang)
    add(GuideClaim("verdict", "verdict", t("verdict", lang, {"level": level, "minutes": c.reading_minutes, "importance": c.importance}, raw=True), (counts,)))
    out.extend(_history(getattr(facts, "history", None), lang, facts.reverted))
    out.extend(_follows(getattr(facts, "follows", None), lang))
    out.extend(_audience(facts, lang))
    ranked = sorted((f for f in c.factors if f.source != "base" and f.points > 0), key=lambda f: -f.points)[:3]
    for f in ranked:
        text = t(f.key, lang, f.params) + t("factor.points", lang, {"points": f.points}, raw=True)
        add(GuideClaim(f.key, "reasons", text, factor_evidence(f, counts)))

    for p in facts.focus:
        add(GuideClaim(p.key or ("rule.note" if p.text else "focus.largest"), "focus", _focus_line(p, lang), point_evidence(p)))
    house = _housekeeping_line(facts.housekeeping, lang)
    if house:
        paths = [path for _, group in facts.housekeeping.groups() for path in group]
        add(GuideClaim("housekeeping", "housekeeping", house, (Evidence(path=paths[0], new=_quote(paths[:5]), source="metadata"),)))

    out.extend(_changed(facts, lang, counts))
    out.extend(_tests(a, lang, counts))
    out.extend(_deps(a, lang))
    out.extend(_review(facts.review, lang))
    out.extend(_follow(facts, lang, counts))
    out.extend(_labels(c, lang))
    for f in c.factors:
        add(GuideClaim(f.key, "score", _factor_line(f, lang), factor_evidence(f, counts)))
    total = sum(f.points for f in c.factors)
    if total != c.importance:
        add(GuideClaim("factor.clamped", "score", t("factor.clamped", lang, {"total": total}, raw=True), (counts,)))
    # The scoring model itself ("importance is 1 + reach + ...") is no claim about this pull
    # request: raters could not check its arithmetic from the diff; `/prguide why` shows it.
    return tuple(out)


def _history_evidence(number: int, line: tuple[str, int, str, str]) -> Evidence:
    path, n, text, commit = line
    return Evidence(path=path, start=n, end=n, old=_quote(text), new=f"#{number} {commit[:12]}", source="history")


def _history(link: HistoryLink | None, lang: str, reverted: int | None = None) -> list[GuideClaim]:
    """Where the changed code came from ("fixes code from #N") and whether the blame bears
    out the culprit the description names; each rests on blamed lines (``source="history"``).
    A revert of the pull request that wrote the lines already says so ("Reverts #N")."""
    if link is None:
        return []
    out = []
    top, origin = link.top, link.origin
    if top is not None and origin is not None and link.evidence and top.number != reverted:
        if link.days is None:
            when = t("history.earlier", lang)
        elif link.days == 0:
            when = t("history.same_day", lang)
        else:
            when = t("history.days_earlier", lang, {"count": link.days})
        key = "history.fixes_code_from" if link.fix else "history.changes_code_from"
        where = ""
        if link.adds_only:
            # The lines blamed are around what it adds, all from one pull request: it changes none of them.
            key = "history.fix_adds_among" if link.fix else "history.adds_among"
        elif top.lines < top.total or len(top.paths) > 1:
            # "3 of the 4 code lines ...": never "the lines" when some came from elsewhere. The
            # count is of the deleted or rewritten code lines traced (imports, comments, blank
            # lines aside), so it says so; a file is named only when it holds most of them.
            key += ".part"
            if len(top.paths) == 1:
                at = {"file": sanitize.code(top.paths[0]), "lines": top.lines}
                # "that line in FILE", never "those 1 all in FILE"
                where = t("history.where.all", lang, at, raw=True) if top.lines > 1 else t("history.where.one", lang, at, raw=True)
            elif top.first * 2 > top.lines:
                where = t("history.where.most", lang, {"file": sanitize.code(top.paths[0]), "lines": top.lines}, raw=True)
        # A GitHub login is shown as one; a git author's name (offline history) as quoted text.
        people = sanitize.login(origin.author) if _LOGIN.fullmatch(origin.author) else sanitize.quote(origin.author, 60)
        params = {"file": sanitize.code(top.paths[0]), "number": top.number, "when": when, "people": people,
                  "lines": top.lines, "count": top.total, "where": where}
        evidence = tuple(_history_evidence(top.number, e) for e in link.evidence)
        out.append(GuideClaim(key, "history", t(key, lang, params, raw=True), evidence))
    elif link.same is not None and origin is not None and link.fix and link.same.number != reverted:
        out.append(_same_lines(link, link.same, origin, lang))
    for named in link.named:
        if not named.total or link.adds_only:
            continue  # nothing was blamed, or only lines it does not change: no verdict either way
        said = Evidence(new=_quote(named.phrase), source="description")
        params = {"number": named.number, "lines": named.lines, "count": named.total}
        if named.first is not None:
            text = t("history.named_agrees", lang, params, raw=True)
            out.append(GuideClaim("history.named_agrees", "history", text, (said, _history_evidence(named.number, named.first))))
        else:
            text = t("history.named_unconfirmed", lang, params, raw=True)
            blamed = (Evidence(new=f"{named.total} lines blamed, none from #{named.number}", source="history"),)
            out.append(GuideClaim("history.named_unconfirmed", "history", text, (said, *blamed)))
    return out


def _same_lines(link: HistoryLink, same: EarlierAdded, origin: PullOrigin, lang: str) -> GuideClaim:
    """"#K added N of the M code lines this fix adds": only that the same text was added
    there (:mod:`bot.engine.history.copies`), each line shown with where #K added it."""
    when = t("history.earlier", lang) if link.days is None else t("history.same_day", lang) if link.days == 0 else t("history.days_earlier", lang, {"count": link.days})
    people = sanitize.login(origin.author) if _LOGIN.fullmatch(origin.author) else sanitize.quote(origin.author, 60)
    params = {"number": same.number, "lines": len(same.texts), "count": link.added, "when": when, "people": people,
              "file": sanitize.code(same.files[0]), "text": sanitize.code(same.texts[0], 80)}  # fmt: skip
    evidence = tuple(Evidence(path=path, new=f"#{same.number} {_quote(text)}", source="history") for text, path in list(zip(same.texts, same.files))[:3])
    # "1 of the 1 lines" when it added all of them: said as "the code lines this fix adds".
    key = "history.fix_adds_same_lines.all" if len(same.texts) >= link.added else "history.fix_adds_same_lines"
    return GuideClaim(key, "history", t(key, lang, params, raw=True), evidence)


def _follows(link: FollowLink | None, lang: str) -> list[GuideClaim]:
    """"Follows up #N", resting on the description's words, the definitions both changed, or both."""
    if link is None:
        return []
    names = list(dict.fromkeys(d.partition(_DEF_SEP)[2] or d for d in link.shared))
    shown = t("list.sep", lang).join(sanitize.code(n, 80) for n in names[:3])
    if len(names) > 3:
        shown += t("history.follows_more", lang, {"count": len(names) - 3})
    evidence = []
    if link.phrase:
        evidence.append(Evidence(new=_quote(link.phrase), source="description"))
    for d in link.shared[:3]:
        path, _, name = d.partition(_DEF_SEP)
        evidence.append(Evidence(path=path, new=f"#{link.number} {name}", source="history"))
    params = {"number": link.number, "phrase": sanitize.quote(link.phrase, 120), "names": shown}
    if link.phrase:
        key = "history.follows_named_shared" if names else "history.follows_named"
    else:
        when = t("history.days_earlier", lang, {"count": link.days}) if link.days else t("history.same_day", lang)
        key, params["when"] = "history.follows_history", when
    return [GuideClaim(key, "history", t(key, lang, params, raw=True), tuple(evidence))]


#: What GitHub accepts as a login (alphanumerics and single hyphens, at most 39).
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")


def _audience(facts: Any, lang: str) -> list[GuideClaim]:
    c, a = facts.classification, facts.analysis
    people = c.audience.get(lang, ())
    if people:
        paths = [p for h in c.hits if h.areas for p in h.files][:5]
        evidence = (Evidence(path=paths[0] if paths else "", new=_quote(paths or c.areas), source="metadata"),)
        return [GuideClaim("audience", "audience", t("verdict.for", lang, {"audience": t("list.sep", lang).join(people[:3])}, raw=True), evidence)]
    dirs, share = _top_dirs(a)
    if not dirs:
        return []
    params = {"dirs": t("list.and", lang).join(sanitize.code(d) for d in dirs), "share": share}
    text = t("verdict.for_default", lang, params, raw=True)
    return [GuideClaim("audience.default", "audience", text, tuple(Evidence(path=d, source="metadata") for d in dirs))]


def _changed(facts: Any, lang: str, counts: Evidence) -> list[GuideClaim]:
    a = facts.analysis
    out = []
    # A definition renamed or moved in this pull request is not a removed code path.
    relocated = {old.rpartition(":")[2] for f in a.files for old, _new in f.renamed}
    removed = [(f.path, n) for f in a.of_kind("source") for n in api_names(f.definitions_removed) if n not in relocated]
    if removed:
        names = tuple(n for _, n in removed)
        evidence = tuple(Evidence(path=p, old=n, source="diff") for p, n in removed[:8])
        out.append(GuideClaim("changed.removed_paths", "changed", t("changed.removed_paths", lang, {"names": names[:8], "count": len(names)}), evidence))
    gone = [f for f in a.files if f.status == "removed"]
    if gone:
        text = t("changed.removed_files", lang, {"count": len(gone), "lines": sum(f.deletions for f in gone)})
        out.append(GuideClaim("changed.removed_files", "changed", text, tuple(Evidence(path=f.path, source="metadata") for f in gone[:8])))
    moved = [f for f in a.files if f.status == "renamed"]
    if moved:
        evidence = tuple(Evidence(path=f.path, old=f.previous_path or "", source="metadata") for f in moved[:8])
        out.append(GuideClaim("changed.renamed", "changed", t("changed.renamed", lang, {"count": len(moved)}), evidence))
    return out


def _tests(a: Any, lang: str, counts: Evidence) -> list[GuideClaim]:
    out = []
    for f in a.files:
        if f.tests_added:
            text = t("tests.added", lang, {"count": len(f.tests_added), "file": f.path, "names": tuple(f.tests_added[:4])})
            out.append(GuideClaim("tests.added", "tests", text, (Evidence(path=f.path, new=_quote(f.tests_added[:4]), source="diff"),)))
    tests = a.of_kind("test")
    if tests:
        text = t("tests.changed", lang, {"count": len(tests), "additions": sum(f.additions for f in tests), "deletions": sum(f.deletions for f in tests)})
        out.append(GuideClaim("tests.changed", "tests", text, tuple(Evidence(path=f.path, source="metadata") for f in tests[:5])))
    if not out:
        out.append(GuideClaim("tests.none", "tests", t("tests.none", lang), (counts,)))
    return out


def _deps(a: Any, lang: str) -> list[GuideClaim]:
    out = []
    for f in a.files:
        # A deleted file's installs are not dependency changes of anything still built
        # ("`pip` removed" for a removed Dockerfile): the removed-files line says it.
        if f.kind == "generated" or f.status == "removed":
            continue
        for d in f.dependency_changes:
            key = f"deps.{d.action}" if d.action in ("added", "removed", "changed") else "deps.changed"
            path = d.file or f.path
            if d.action in ("added", "removed") and install_script(path):
                if d.action == "removed" and named_on(d.name, f.added_lines):
                    continue  # still named by the script (built from source now): not "no longer installed"
                key += ".install"
            text = t(key, lang, {"name": d.name, "old": d.old_spec, "new": d.new_spec, "file": path})
            evidence = (Evidence(path=path, old=_quote(f"{d.name}{d.old_spec}" if d.old_spec or d.action == "removed" else ""),
                                 new=_quote(f"{d.name}{d.new_spec}" if d.action != "removed" else ""), source="diff"),)  # fmt: skip
            out.append(GuideClaim(key, "deps", text, evidence))
    locks = [f.path for f in a.files if f.changes and is_lock_file(f.path)]
    if locks:
        text = t("deps.lock", lang, {"count": len(locks), "names": tuple(locks[:3])})
        out.append(GuideClaim("deps.lock", "deps", text, tuple(Evidence(path=p, source="metadata") for p in locks[:3])))
    return out


def _review(review: Any, lang: str) -> list[GuideClaim]:
    if review.empty:
        return []
    out = []
    lines = _review_lines(review, lang, len(review.threads))
    if review.reviewers:
        evidence = (Evidence(new=_quote([user for user, _, _ in review.reviewers]), source="review"),)
        out.append(GuideClaim("review.reviewers", "review", lines.pop(0), evidence))
    for thread, text in zip(review.threads, lines):
        line = thread.line or 0
        evidence = (Evidence(path=thread.path, start=line, end=line, new=_quote(thread.opening[:140]), source="review"),)
        out.append(GuideClaim("review.thread", "review", text, evidence))
    return out


def _follow(facts: Any, lang: str, counts: Evidence) -> list[GuideClaim]:
    out = []
    if facts.reverted:
        text = t("follow.reverts", lang, {"number": facts.reverted}, raw=True)
        out.append(GuideClaim("follow.reverts", "follow_ups", text, (Evidence(new=f"#{facts.reverted}", source="description"),)))
    for item in facts.follow_ups:
        params = dict(item.params)
        if item.file is not None:
            params.setdefault("file", item.file)
        out.append(GuideClaim(item.key, "follow_ups", t(item.key, lang, params), follow_evidence(item)))
    # "Nothing obvious left to do" was rated vague or generic by every reader: with nothing to
    # say, the section says nothing.
    return out


def _labels(c: Any, lang: str) -> list[GuideClaim]:
    out = []
    files = {h.rule_id: h.files for h in c.hits}
    for d in c.labels:
        if d.source == "human":
            evidence = (Evidence(new=_quote(d.name), source="metadata"),)
            out.append(GuideClaim("labels.human", "labels", t("labels.human", lang, {"label": d.name}), evidence))
        else:
            paths = files.get(d.rule) or ()
            evidence = (Evidence(path=paths[0] if paths else "", new=_quote(d.rule), source="metadata"),)
            out.append(GuideClaim("labels.rule", "labels", t("labels.rule", lang, {"label": d.name, "rule": d.rule}), evidence))
    if c.labels_removed_by_human:
        names = c.labels_removed_by_human
        text = t("labels.removed", lang, {"names": names, "count": len(names)})
        out.append(GuideClaim("labels.removed", "labels", text, (Evidence(new=_quote(names), source="metadata"),)))
    if not out:
        out.append(GuideClaim("labels.none", "labels", t("labels.none", lang), (Evidence(source="metadata"),)))
    return out


# --- the sentences claims are written in ---------------------------------------------------


_CODE_SPAN = re.compile(r"(`+) ?(.*?) ?\1")


def _span_text(m: re.Match[str]) -> str:
    return m.group(2)


def _plain(text: str) -> str:
    if "`" in text:
        text = _CODE_SPAN.sub(_span_text, text)
    return html.unescape(text)


def _claim_params(claim: Any) -> dict[str, Any]:
    """A claim's parameters without empty ones a sentence would show as "—"."""
    return {k: v for k, v in claim.params.items() if v not in (None, "") or k in ("name", "old", "new")}


def _word(key: str, fallback: str, lang: str) -> str:
    """The catalogue's word for ``key``, or ``fallback`` (GitHub may add new states) made safe."""
    return t(key, lang) if key in MESSAGES else sanitize.table_cell(fallback)


def _housekeeping_line(house: Housekeeping, lang: str) -> str:
    """One line for every housekeeping file (never a numbered point), or ""."""
    if not house:
        return ""
    items = []
    for group, paths in house.groups():
        if paths:
            items.append(t(f"house.{group}", lang, {"count": len(paths), "names": tuple(paths[:2])}))
    return t("focus.housekeeping", lang, {"items": t("list.sep", lang).join(items)}, raw=True)


#: A folder is named as the audience's only when it holds at least this share of the changed code lines.
_AUDIENCE_SHARE = 0.25


#: File kinds whose changed lines make the whole an audience's share is taken of.
_AUDIENCE_TOTAL_KINDS = ("source", "config", "build", "example", "ci")
#: The named folders must hold at least this share (percent) of those lines.
_AUDIENCE_MIN_SHARE = 50


def _top_dirs(analysis: DiffAnalysis, n: int = 2) -> tuple[list[str], int]:
    """The (at most ``n``) folders holding the most changed lines of source, config and build
    files, each with at least :data:`_AUDIENCE_SHARE` of them, and the percentage they hold
    together. A folder named without its share read as an arbitrary pick (examples and CI
    folders beside the real change), so the share is stated and small ones are left out."""
    weight: dict[str, int] = defaultdict(int)
    total = 0
    counted: list[tuple[str, int]] = []
    for f in analysis.files:
        if f.kind in _AUDIENCE_TOTAL_KINDS and f.status != "removed" and not f.prose_only:
            # Examples and CI count in the whole a reader calls "the changed code", so one
            # requirements line beside 58 workflow lines is not "100 % of the code".
            total += f.changes or 1
            counted.append((f.path, f.changes or 1))
            if f.kind in ("source", "config", "build"):
                head = f.path.rsplit("/", 1)[0] + "/" if "/" in f.path else f.path
                weight[head] += f.changes or 1
    ranked = [(d, w) for d, w in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:n] if w >= _AUDIENCE_SHARE * total]
    # The share is of every counted line in the named folders, their example scripts and
    # sub-folders included ("50 %" was said of a folder holding all the changed code, #3955).
    dirs = [d for d, _ in ranked]
    inside = sum(lines for path, lines in counted if any(path.startswith(d) if d.endswith("/") else path == d for d in dirs))
    share = int(100 * inside / total) if ranked else 0
    if share < _AUDIENCE_MIN_SHARE:
        return [], 0  # the named folders hold less than half of the change: they are not who it is for
    return [d for d, _ in ranked], share


def _focus_line(point: FocusPoint, lang: str) -> str:
    where = sanitize.code(point.file) if point.file else ""
    if point.text:
        note = sanitize.one_line(point.text.get(lang) or next(iter(point.text.values())), 300)
        reason = sanitize.neutralize(note)
        if point.params.get("similar"):
            reason = reason.rstrip("。.") + t("focus.similar", lang, {"count": point.params["similar"]})
        if point.file and point.file in note:
            return reason  # the rule's note already names its file
    else:
        reason = t(point.key or "focus.largest", lang, point.params)
        if point.params.get("edits"):
            changes = t("focus.inner_sep", lang).join(t(key, lang, params) for key, params in point.params["edits"])
            reason += t("focus.inner_edits", lang, {"changes": changes}, raw=True)
        if point.params.get("similar"):
            reason += t("focus.similar", lang, {"count": point.params["similar"]})
        reason += _elsewhere(point, lang)
    return f"{where} — {reason}" if where else reason


def _elsewhere(point: FocusPoint, lang: str) -> str:
    """``" (here and in 63 other files)"`` for a point that stands for the same change in several files."""
    files = point.params.get("files")
    return t("focus.files", lang, {"count": files}) if files else ""


def _review_lines(review: ReviewSummary, lang: str, cap: int) -> list[str]:
    if review.empty:
        return []
    lines = []
    if review.reviewers:
        sep = t("list.and", lang)
        people = []
        for user, state, is_bot in review.reviewers:
            state_text = _word(f"review.state.{state}", state.lower(), lang)
            bot = f" ({t('review.bot', lang)})" if is_bot else ""
            people.append(f"{sanitize.login(user)}{bot} {state_text}")
        lines.append(t("review.reviewers", lang, {"reviewers": sep.join(people)}, raw=True))
    for thread in review.threads[:cap]:
        where = sanitize.code(f"{thread.path}:{thread.line}" if thread.line else thread.path)
        lines.append(
            t(
                "review.thread",
                lang,
                {
                    "where": where,
                    "comments": f"{thread.comments:,}",
                    "people": t("list.and", lang).join(sanitize.login(p) for p in thread.participants[:4]),
                    "opening": sanitize.quote(_strip_suggestion(thread.opening), 140),
                },
                raw=True,
            )
        )
    if len(review.threads) > cap > 0:
        lines.append(t("review.threads_more", lang, {"count": len(review.threads) - cap}))
    return lines


def _strip_suggestion(body: str) -> str:
    return re.sub(r"```suggestion.*?(```|$)", " [suggestion] ", body, flags=re.DOTALL)


def _factor_line(factor: Any, lang: str) -> str:
    sign = "+" if factor.points >= 0 else "−"
    part = getattr(factor, "part", "other")
    label = f"{t(f'part.{part}', lang)} · " if part in ("reach", "risk") and not factor.source.startswith("cap.") else ""
    return f"{sign}{abs(factor.points)} · {label}{t(factor.key, lang, factor.params)}"
