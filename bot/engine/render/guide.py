"""The reading guide comment: Markdown in English or Chinese, at most 60,000 characters.

Pure. :func:`render_guide` turns the facts (snapshot, analysis) and decisions
(classification, focus points, review summary, follow-ups) into one comment body
starting with prguide's hidden marker. Every sentence comes from
:mod:`bot.engine.render.messages`; every piece of PR text passes through
:mod:`bot.engine.render.sanitize`.

Long guides shrink instead of being cut: the collapsed file list is shortened,
then dropped, then review threads and follow-ups are trimmed, so the Markdown is
never cut inside a code span or a table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jinja2

from bot import __version__
from bot.engine.analysis.model import KINDS, DiffAnalysis
from bot.engine.classify import Claim, Classification
from bot.engine.focus.model import FocusPoint, FollowUp, Housekeeping, ReviewSummary
from bot.engine.history.follows import FollowLink
from bot.engine.history.model import HistoryLink
from bot.engine.marker import MarkerState, render_marker
from bot.engine.render import ledger, precompile, revert_note, sanitize
from bot.engine.render.ledger import _claim_params, _elsewhere, _plain, _word
from bot.engine.render.messages import t
from bot.engine.render.summary import choose as choose_summary, summary_line  # noqa: F401 (summary_line re-exported)
from bot.engine.snapshot import PullRequestSnapshot

#: GitHub refuses comments over 65,536 characters ("Create an issue comment"); keep a margin.
MAX_COMMENT_CHARS = 60_000
#: Dependency lines shown; the rest are counted ("and N more") and JSON lists them all.
MAX_DEP_LINES = 15



@dataclass(frozen=True, slots=True)
class GuideFacts:
    """Everything the renderer needs, already decided.

    ``area_name(area, lang) -> str`` gives an area's display name; ``notices`` are
    extra lines by language (for instance an invalid repository config file).
    """

    snapshot: PullRequestSnapshot
    analysis: DiffAnalysis
    classification: Classification
    focus: tuple[FocusPoint, ...]
    review: ReviewSummary
    follow_ups: tuple[FollowUp, ...]
    state: MarkerState
    area_name: Callable[[str, str], str] = lambda area, lang: area
    reverted: int | None = None
    notices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    housekeeping: Housekeeping = field(default_factory=Housekeeping)
    #: The author's purpose sentence, when the description has a trustworthy one.
    purpose: str | None = None
    #: The guide's own page in the tag view (an absolute http(s) URL), when the server knows its public address.
    page_url: str | None = None
    #: ``(number, days)`` when a later pull request reverted this one (a note under the title).
    reverted_by: tuple[int, int] | None = None
    #: Where the changed code came from (``None`` when the history was not looked up).
    history: HistoryLink | None = None
    #: The earlier pull request this one follows up ("Follows #N"), when one is known.
    follows: FollowLink | None = None


@dataclass(frozen=True, slots=True)
class _Caps:
    files: int = 300
    threads: int = 3
    follow_ups: int = 10
    factors: int = 20


_SHRINK = (_Caps(), _Caps(files=60), _Caps(files=0), _Caps(files=0, threads=1, follow_ups=5, factors=8))


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    # Compiled ahead of time when the compiled code still matches (see bot.engine.render.precompile).
    return precompile.load(precompile.environment())


def render_guide(facts: GuideFacts, lang: str) -> str:
    """Render the comment body in ``lang`` (``"en"`` or ``"zh"``) from the claim ledger
    (:mod:`bot.engine.render.ledger`): only claims with evidence are written.

    The result starts with the marker line and is at most :data:`MAX_COMMENT_CHARS`
    characters. Raises ``KeyError`` for an unsupported language.
    """
    if lang not in ("en", "zh"):
        raise KeyError(f"unsupported language {lang!r}")
    return render_claims(facts, guide_claims(facts, lang), lang)


def guide_claims(facts: GuideFacts, lang: str) -> tuple[ledger.GuideClaim, ...]:
    """The claims the guide shows (:func:`bot.engine.render.ledger.shown`), its headline from :func:`summary_line`."""
    summary = choose_summary(facts, lang)
    return ledger.shown(ledger.build_claims(facts, lang, headline=summary.text, headline_evidence=summary.evidence,
                                            scale=summary.source != "count"))


def render_claims(facts: GuideFacts, claims: Sequence[Any], lang: str) -> str:
    """The comment body written from ``claims`` (shown :class:`~bot.engine.render.ledger.GuideClaim`
    objects, in order); the file table and list come from ``facts``."""
    text = ""
    for caps in _SHRINK:
        text = _template().render(**_context(facts, claims, lang, caps))
        while "\n\n\n" in text:  # a run of three or more newlines as two (each pass shortens every run)
            text = text.replace("\n\n\n", "\n\n")
        if len(text) <= MAX_COMMENT_CHARS:
            return text
    # Unreachable with real data (every list is capped); keep the promise anyway.
    return text[: text.rfind("\n", 0, MAX_COMMENT_CHARS)] + "\n"


def describe_claims(claims: Sequence[Claim], lang: str) -> list[dict[str, Any]]:
    """Claims (breaking reasons) as JSON objects ``{reason, file, key}``; ``reason`` is plain text."""
    return [{"reason": _plain(t(c.key, lang, _claim_params(c))), "file": c.file, "key": c.key} for c in claims]


#: Non-empty lines a skim- or skip-level guide shows with its collapsed block closed (the marker not counted).
LIGHT_VISIBLE_LINES = 8
#: Focus points shown above the collapsed block; the rest are inside it.
TOP_FOCUS = 3


def _texts(claims: Sequence[Any]) -> list[str]:
    return [c.text for c in claims]


def _capped(lines: list[str], cap: int, lang: str) -> list[str]:
    """``lines`` with at most ``cap`` shown and "and N more" for the rest."""
    if len(lines) > cap:
        return lines[: max(0, cap - 1)] + [t("list.more", lang, {"count": len(lines) - max(0, cap - 1)})]
    return lines


def _context(facts: GuideFacts, claims: Sequence[Any], lang: str, caps: _Caps) -> dict[str, Any]:
    s, a, c = facts.snapshot, facts.analysis, facts.classification
    sec = ledger.by_section(claims)
    headings = {k.split(".", 1)[1]: t(k, lang) for k in ("h.focus", "h.changed", "h.tests", "h.deps", "h.review", "h.follow", "h.labels")}
    headings["score"] = t("h.score", lang, {"importance": c.importance}, raw=True)
    headings["files"] = t("h.files", lang, {"count": len(a.files)})
    headings["focus_more"] = t("h.focus_more", lang)

    summary = [cl for cl in sec["summary"] if cl.kind == "summary"]
    extra = " ".join(cl.text for cl in sec["summary"] if cl.kind != "summary")
    breaking = _texts(sec["breaking"])
    breaking_line = ""
    if breaking:
        shown = t("list.sep", lang).join(breaking[:MAX_BREAKING_SHOWN])
        if len(breaking) > MAX_BREAKING_SHOWN:
            shown += t("summary.breaking_more", lang, {"count": len(breaking) - MAX_BREAKING_SHOWN})
        breaking_line = t("summary.breaking_reasons", lang, {"reasons": shown}, raw=True)
    verdict = " ".join(_texts(sec["verdict"]))
    page = _page_url(facts.page_url)
    if page and verdict:
        verdict += " · " + t("guide.page", lang, {"url": page}, raw=True)
    notices = list(facts.notices.get(lang, ()))
    history = _texts(sec["history"])

    focus = _texts(sec["focus"])
    top = TOP_FOCUS
    if c.reading_level in ("skim", "skip"):
        # A light PR's comment stays within LIGHT_VISIBLE_LINES: title, headline, verdict,
        # breaking, notices and the collapsed block's summary come first; focus points
        # (with their heading) fill what is left.
        fixed = 4 + bool(breaking_line) + (len(notices) + 1 if notices else 0) + len(history)
        top = max(0, min(TOP_FOCUS, LIGHT_VISIBLE_LINES - fixed - 1))
    top_focus, more_focus = focus[:top], focus[top:]

    factor_claims = [cl for cl in sec["score"] if cl.kind not in ("factor.clamped", "why.model")]
    factor_lines = _texts(factor_claims[: caps.factors])
    if len(factor_claims) > caps.factors:
        factor_lines.append(t("list.more", lang, {"count": len(factor_claims) - caps.factors}))
    factor_lines += [cl.text for cl in sec["score"] if cl.kind in ("factor.clamped", "why.model")]

    reviewers = [cl.text for cl in sec["review"] if cl.kind == "review.reviewers"]
    threads = [cl.text for cl in sec["review"] if cl.kind == "review.thread"]
    review_lines = reviewers + threads[: caps.threads]
    if len(threads) > caps.threads > 0:
        review_lines.append(t("review.threads_more", lang, {"count": len(threads) - caps.threads}))
    follow = _texts(sec["follow_ups"])
    follow_lines = follow[: caps.follow_ups]
    if len(follow) > caps.follow_ups:
        follow_lines.append(t("list.more", lang, {"count": len(follow) - caps.follow_ups}))
    dep_claims = sec["deps"]
    dep_lines = _texts([cl for cl in dep_claims if cl.kind != "deps.lock"])
    if len(dep_lines) > MAX_DEP_LINES:
        dep_lines = dep_lines[:MAX_DEP_LINES] + [t("deps.more", lang, {"count": len(dep_lines) - MAX_DEP_LINES})]
    dep_lines += [cl.text for cl in dep_claims if cl.kind == "deps.lock"]
    reasons = _texts(sec["reasons"])
    audience = _texts(sec["audience"])
    context = {
        "marker": render_marker(facts.state),
        "title": t("title", lang, {"number": s.number}, raw=True),
        "reverted_note": revert_note.note_text(*facts.reverted_by, lang) if facts.reverted_by else "",
        "summary": summary[0].text if summary else "",
        "summary_extra": extra,
        "breaking": breaking_line,
        "housekeeping": " ".join(_texts(sec["housekeeping"])),
        "verdict": verdict,
        "audience": audience[0] if audience else "",
        "top_factors": t("verdict.top", lang, {"factors": t("list.sep", lang).join(reasons)}, raw=True) if reasons else "",
        "notices": notices,
        "history": history,
        "top_focus": top_focus,
        "more_focus": more_focus,
        "h": headings,
        "col": {"area": t("changed.area", lang), "kind": t("changed.kind", lang), "files": t("changed.files", lang)},
        "changed_rows": _changed_rows(facts, lang),
        "changed_notes": _texts(sec["changed"]),
        "file_lines": _file_lines(a, lang, caps.files),
        "files_more": t("changed.more_files", lang, {"count": len(a.files) - caps.files}) if 0 < caps.files < len(a.files) else "",
        "test_lines": _capped(_texts(sec["tests"]), 8, lang),
        "dep_lines": dep_lines,
        "review_lines": review_lines,
        "follow_lines": follow_lines,
        "label_lines": _texts(sec["labels"]),
        "importance": c.importance,
        "factor_lines": factor_lines,
        "footer": t("footer", lang, {"version": __version__, "count": len(c.hits)}, raw=True),
    }
    sections = [headings["focus_more"]] if more_focus else []
    sections += [headings["changed"]]
    sections += [headings[k] for k, lines in (("tests", context["test_lines"]), ("deps", dep_lines), ("review", review_lines), ("follow", follow_lines), ("labels", context["label_lines"])) if lines]
    sections.append(t("h.score_short", lang))
    context["more"] = t("guide.more", lang, {"sections": t("list.sep", lang).join(sections)}, raw=True)
    return context


_URL = re.compile(r"^https?://[^\s()<>\[\]`\"']+$")


def _page_url(url: str | None) -> str:
    """``url`` when it is a plain absolute http(s) URL that cannot break out of a Markdown link, else ""."""
    return url if url and len(url) <= 500 and _URL.match(url) else ""


#: Breaking reasons shown in the guide; JSON ``breaking_reasons`` has them all.
MAX_BREAKING_SHOWN = 4


def _area_of(facts: GuideFacts) -> dict[str, str]:
    """Each file's area: of the areas whose rules matched it, the one ranked first."""
    rank = {area: i for i, area in enumerate(facts.classification.areas)}
    owner: dict[str, str] = {}
    for hit in facts.classification.hits:
        for area in hit.areas:
            for path in hit.files:
                if path not in owner or rank.get(area, 99) < rank.get(owner[path], 99):
                    owner[path] = area
    return owner


def _changed_rows(facts: GuideFacts, lang: str) -> list[dict[str, Any]]:
    owner = _area_of(facts)
    groups: dict[tuple[str, str], list[int]] = {}
    for f in facts.analysis.files:
        key = (owner.get(f.path, ""), f.kind)
        g = groups.setdefault(key, [0, 0, 0])
        g[0] += 1
        g[1] += f.additions
        g[2] += f.deletions
    order = {k: i for i, k in enumerate(KINDS)}
    rows = []
    for (area, kind), (files, plus, minus) in sorted(groups.items(), key=lambda kv: (kv[0][0] == "", kv[0][0], order.get(kv[0][1], 99))):
        rows.append(
            {
                "area": sanitize.table_cell(facts.area_name(area, lang)) if area else t("changed.other", lang),
                "kind": _word(f"kind.{kind}", kind, lang),
                "files": f"{files:,}",
                "additions": f"{plus:,}",
                "deletions": f"{minus:,}",
            }
        )
    return rows



def _file_lines(analysis: DiffAnalysis, lang: str, cap: int) -> list[str]:
    lines = []
    for f in analysis.files[:cap]:
        status = _word(f"status.{f.status}", f.status, lang)
        line = t("changed.file", lang, {"path": sanitize.code(f.path), "status": status, "additions": f.additions, "deletions": f.deletions}, raw=True)
        if f.previous_path:
            line += f" ← {sanitize.code(f.previous_path)}"
        if f.symbols_touched:
            line += " · " + t("list.and", lang).join(sanitize.code(x, 60) for x in f.symbols_touched[:4])
        lines.append(line)
    return lines



def describe_factors(factors: Sequence[Any], lang: str) -> list[dict[str, Any]]:
    """The importance factors as JSON objects ``{points, reason, source}`` in ``lang``."""
    return [{"points": f.points, "reason": t(f.key, lang, f.params), "source": f.source} for f in factors]


def describe_focus(points: Sequence[FocusPoint], lang: str) -> list[dict[str, Any]]:
    """Focus points as JSON objects ``{file, symbol, reason}`` in ``lang``."""
    out = []
    for p in points:
        if p.text:
            reason = sanitize.one_line(p.text.get(lang) or next(iter(p.text.values())), 300)
        else:
            reason = t(p.key or "focus.largest", lang, p.params) + _elsewhere(p, lang)
        out.append({"file": p.file, "symbol": p.symbol, "reason": reason})
    return out
