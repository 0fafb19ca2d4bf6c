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

import html
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jinja2

from bot import __version__
from bot.engine.analysis.model import KINDS, DiffAnalysis
from bot.engine.classify import Claim, Classification
from bot.engine.focus.housekeeping import api_names, is_lock_file
from bot.engine.focus.model import FocusPoint, FollowUp, Housekeeping, ReviewSummary
from bot.engine.marker import MarkerState, render_marker
from bot.engine.render import sanitize
from bot.engine.render.messages import MESSAGES, t
from bot.engine.render.summary import choose as _choose_summary, summary_claim, summary_line  # noqa: F401 (re-exported)
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


@dataclass(frozen=True, slots=True)
class _Caps:
    files: int = 300
    threads: int = 3
    follow_ups: int = 10
    factors: int = 20


_SHRINK = (_Caps(), _Caps(files=60), _Caps(files=0), _Caps(files=0, threads=1, follow_ups=5, factors=8))


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.engine.render", "templates"),
        autoescape=False,  # Markdown, not HTML: PR text is neutralised by bot.engine.render.sanitize instead
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("guide.md.j2")


def render_guide(facts: GuideFacts, lang: str) -> str:
    """Render the comment body in ``lang`` (``"en"`` or ``"zh"``).

    The result starts with the marker line and is at most :data:`MAX_COMMENT_CHARS`
    characters. Raises ``KeyError`` for an unsupported language.
    """
    if lang not in ("en", "zh"):
        raise KeyError(f"unsupported language {lang!r}")
    text = ""
    for caps in _SHRINK:
        text = _template().render(**_context(facts, lang, caps))
        text = re.sub(r"\n{3,}", "\n\n", text)
        if len(text) <= MAX_COMMENT_CHARS:
            return text
    # Unreachable with real data (every list is capped); keep the promise anyway.
    return text[: text.rfind("\n", 0, MAX_COMMENT_CHARS)] + "\n"


def _plain(text: str) -> str:
    text = re.sub(r"(`+) ?(.*?) ?\1", lambda m: m.group(2), text)
    return html.unescape(text)


def _claim_params(claim: Claim) -> dict[str, Any]:
    """A claim's parameters without empty ones a sentence would show as "—"."""
    return {k: v for k, v in claim.params.items() if v not in (None, "") or k in ("name", "old", "new")}


def describe_claims(claims: Sequence[Claim], lang: str) -> list[dict[str, Any]]:
    """Claims (breaking reasons) as JSON objects ``{reason, file, key}``; ``reason`` is plain text."""
    return [{"reason": _plain(t(c.key, lang, _claim_params(c))), "file": c.file, "key": c.key} for c in claims]


def _word(key: str, fallback: str, lang: str) -> str:
    """The catalogue's word for ``key``, or ``fallback`` (GitHub may add new states) made safe."""
    return t(key, lang) if key in MESSAGES else sanitize.table_cell(fallback)


def _context(facts: GuideFacts, lang: str, caps: _Caps) -> dict[str, Any]:
    s, a, c = facts.snapshot, facts.analysis, facts.classification
    headings = {k.split(".", 1)[1]: t(k, lang) for k in ("h.focus", "h.changed", "h.tests", "h.deps", "h.review", "h.follow", "h.labels")}
    headings["score"] = t("h.score", lang, {"importance": c.importance}, raw=True)
    headings["files"] = t("h.files", lang, {"count": len(a.files)})
    return {
        "marker": render_marker(facts.state),
        "title": t("title", lang, {"number": s.number}, raw=True),
        "summary": summary_line(facts, lang),
        "summary_extra": _summary_extra(facts, lang),
        "pr_title": t("summary.title", lang, {"title": sanitize.quote(s.title, 300)}, raw=True),
        "breaking": _breaking_line(c, lang),
        "housekeeping": _housekeeping_line(facts.housekeeping, lang),
        "verdict": t(
            "verdict",
            lang,
            {"level": t(f"level.{c.reading_level}", lang), "minutes": c.reading_minutes, "importance": c.importance},
            raw=True,
        ),
        "audience": _audience_line(facts, lang),
        "top_factors": _top_factors(c, lang),
        "notices": list(facts.notices.get(lang, ())),
        "focus": [_focus_line(p, lang) for p in facts.focus],
        "h": headings,
        "col": {"area": t("changed.area", lang), "kind": t("changed.kind", lang), "files": t("changed.files", lang)},
        "changed_rows": _changed_rows(facts, lang),
        "changed_notes": _changed_notes(facts, lang),
        "file_lines": _file_lines(a, lang, caps.files),
        "files_more": t("changed.more_files", lang, {"count": len(a.files) - caps.files}) if 0 < caps.files < len(a.files) else "",
        "test_lines": _test_lines(a, lang),
        "dep_lines": _dep_lines(a, lang),
        "review_lines": _review_lines(facts.review, lang, caps.threads),
        "follow_lines": _follow_lines(facts, lang, caps.follow_ups),
        "label_lines": _label_lines(c, lang),
        "importance": c.importance,
        "factor_lines": _factor_lines(c, lang, caps.factors),
        "footer": t("footer", lang, {"version": __version__, "count": len(c.hits)}, raw=True),
    }


def _summary_extra(facts: GuideFacts, lang: str) -> str:
    s, c = facts.snapshot, facts.classification
    params = {"count": s.changed_files or len(s.files), "additions": s.additions, "deletions": s.deletions}
    # A summary that is the count already says the scale.
    parts = [] if _choose_summary(facts, lang).source == "count" else [t("summary.scale", lang, params)]
    if facts.reverted:
        parts.append(t("summary.reverts", lang, {"number": facts.reverted}, raw=True))
    if c.breaking and not c.breaking_reasons:
        parts.append(t("summary.breaking", lang))
    return " ".join(parts)


#: Breaking reasons shown in the guide; JSON ``breaking_reasons`` has them all.
MAX_BREAKING_SHOWN = 4


def _breaking_line(c: Classification, lang: str) -> str:
    """"Breaking: <reason>; <reason> (and N more)." from the facts, or ""."""
    reasons = [t(r.key, lang, _claim_params(r)) for r in c.breaking_reasons]
    # The author's mark says nothing more once a fact says what breaks.
    if len(reasons) > 1 and c.breaking_reasons[0].key == "breaking.marked":
        reasons = reasons[1:]
    if not reasons:
        return ""
    shown = t("list.sep", lang).join(reasons[:MAX_BREAKING_SHOWN])
    if len(reasons) > MAX_BREAKING_SHOWN:
        shown += t("summary.breaking_more", lang, {"count": len(reasons) - MAX_BREAKING_SHOWN})
    return t("summary.breaking_reasons", lang, {"reasons": shown}, raw=True)


def _housekeeping_line(house: Housekeeping, lang: str) -> str:
    """One line for every housekeeping file (never a numbered point), or ""."""
    if not house:
        return ""
    items = []
    for group, paths in house.groups():
        if paths:
            items.append(t(f"house.{group}", lang, {"count": len(paths), "names": tuple(paths[:2])}))
    return t("focus.housekeeping", lang, {"items": t("list.sep", lang).join(items)}, raw=True)


def _audience_line(facts: GuideFacts, lang: str) -> str:
    people = facts.classification.audience.get(lang, ())
    if people:
        return t("verdict.for", lang, {"audience": t("list.sep", lang).join(people[:3])}, raw=True)
    dirs = _top_dirs(facts.analysis)
    if not dirs:
        return ""
    return t("verdict.for_default", lang, {"dirs": t("list.and", lang).join(sanitize.code(d) for d in dirs)}, raw=True)


def _top_dirs(analysis: DiffAnalysis, n: int = 2) -> list[str]:
    weight: dict[str, int] = defaultdict(int)
    for f in analysis.files:
        if f.counts_as_code and f.kind not in ("test", "docs"):
            head = f.path.rsplit("/", 1)[0] + "/" if "/" in f.path else f.path
            weight[head] += f.changes or 1
    return [d for d, _ in sorted(weight.items(), key=lambda kv: -kv[1])[:n]]


def _top_factors(c: Classification, lang: str) -> str:
    ranked = sorted((f for f in c.factors if f.source != "base" and f.points > 0), key=lambda f: -f.points)[:3]
    if not ranked:
        return ""
    sep = t("list.sep", lang)
    parts = [t(f.key, lang, f.params) + t("factor.points", lang, {"points": f.points}, raw=True) for f in ranked]
    return t("verdict.top", lang, {"factors": sep.join(parts)}, raw=True)


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
        if point.params.get("similar"):
            reason += t("focus.similar", lang, {"count": point.params["similar"]})
        reason += _elsewhere(point, lang)
    return f"{where} — {reason}" if where else reason


def _elsewhere(point: FocusPoint, lang: str) -> str:
    """``" (here and in 63 other files)"`` for a point that stands for the same change in several files."""
    files = point.params.get("files")
    return t("focus.files", lang, {"count": files}) if files else ""


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



def _changed_notes(facts: GuideFacts, lang: str) -> list[str]:
    a = facts.analysis
    notes = []
    removed = [n for f in a.of_kind("source") for n in api_names(f.definitions_removed)]
    if removed:
        notes.append(t("changed.removed_paths", lang, {"names": tuple(removed[:8]), "count": len(removed)}))
    gone = [f for f in a.files if f.status == "removed"]
    if gone:
        notes.append(t("changed.removed_files", lang, {"count": len(gone), "lines": sum(f.deletions for f in gone)}))
    moved = [f for f in a.files if f.status == "renamed"]
    if moved:
        notes.append(t("changed.renamed", lang, {"count": len(moved)}))
    return notes


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



def _test_lines(analysis: DiffAnalysis, lang: str) -> list[str]:
    lines = []
    for f in analysis.files:
        if f.tests_added:
            lines.append(t("tests.added", lang, {"count": len(f.tests_added), "file": f.path, "names": tuple(f.tests_added[:4])}))
    tests = analysis.of_kind("test")
    if tests:
        lines.append(
            t("tests.changed", lang, {"count": len(tests), "additions": sum(f.additions for f in tests), "deletions": sum(f.deletions for f in tests)})
        )
    if len(lines) > 8:
        lines = lines[:7] + [t("list.more", lang, {"count": len(lines) - 7})]
    return lines or [t("tests.none", lang)]


def _dep_lines(analysis: DiffAnalysis, lang: str) -> list[str]:
    lines = []
    for f in analysis.files:
        if f.kind == "generated":
            continue
        for d in f.dependency_changes:
            key = f"deps.{d.action}" if d.action in ("added", "removed", "changed") else "deps.changed"
            lines.append(t(key, lang, {"name": d.name, "old": d.old_spec, "new": d.new_spec, "file": d.file or f.path}))
    locks = [f.path for f in analysis.files if f.changes and is_lock_file(f.path)]
    if len(lines) > MAX_DEP_LINES:
        lines = lines[:MAX_DEP_LINES] + [t("deps.more", lang, {"count": len(lines) - MAX_DEP_LINES})]
    if locks:
        lines.append(t("deps.lock", lang, {"count": len(locks), "names": tuple(locks[:3])}))
    return lines


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


def _follow_lines(facts: GuideFacts, lang: str, cap: int) -> list[str]:
    lines = []
    if facts.reverted:
        lines.append(t("follow.reverts", lang, {"number": facts.reverted}, raw=True))
    for item in facts.follow_ups[:cap]:
        params = dict(item.params)
        if item.file is not None:
            params.setdefault("file", item.file)
        lines.append(t(item.key, lang, params))
    if len(facts.follow_ups) > cap:
        lines.append(t("list.more", lang, {"count": len(facts.follow_ups) - cap}))
    return lines or [t("follow.none", lang)]


def _label_lines(c: Classification, lang: str) -> list[str]:
    lines = []
    for d in c.labels:
        if d.source == "human":
            lines.append(t("labels.human", lang, {"label": d.name}))
        else:
            lines.append(t("labels.rule", lang, {"label": d.name, "rule": d.rule}))
    if c.labels_removed_by_human:
        lines.append(t("labels.removed", lang, {"names": c.labels_removed_by_human, "count": len(c.labels_removed_by_human)}))
    return lines or [t("labels.none", lang)]


def _factor_lines(c: Classification, lang: str, cap: int) -> list[str]:
    lines = [_factor_line(f, lang) for f in c.factors[:cap]]
    if len(c.factors) > cap:
        lines.append(t("list.more", lang, {"count": len(c.factors) - cap}))
    total = sum(f.points for f in c.factors)
    if total != c.importance:
        lines.append(t("factor.clamped", lang, {"total": total}, raw=True))
    lines.append(t("why.model", lang, {"minutes": c.reading_minutes, "level": t(f"level.{c.reading_level}", lang)}, raw=True))
    return lines


def _factor_line(factor: Any, lang: str) -> str:
    sign = "+" if factor.points >= 0 else "−"
    part = getattr(factor, "part", "other")
    label = f"{t(f'part.{part}', lang)} · " if part in ("reach", "risk") and not factor.source.startswith("cap.") else ""
    return f"{sign}{abs(factor.points)} · {label}{t(factor.key, lang, factor.params)}"


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
