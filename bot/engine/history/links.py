"""Which merged pull request wrote the code a pull request changes ("fixes code from #N").

Pure. The SZZ algorithm (Śliwerski, Zimmermann and Zeller, MSR 2005) names the
changes that last touched the lines a fix deletes or modifies. Taken raw it links most
fixes to something, often wrongly: formatting, comments, imports and moved code carry
no bug (Rosa et al., ICSE 2021, measured SZZ variants on developer-informed links).
Here the traced lines are only the meaningful ones (:mod:`bot.engine.history.lines`),
candidates are ranked by the share of those lines they wrote, and the top one is named
only when it clearly dominates: :data:`MIN_SHARE` of the lines, at least
:data:`MIN_LINES` of them, and :data:`MIN_LEAD` times the runner-up's count. When a
pull request changes no line of code and its CI files or example scripts are blamed
instead, or, when it only adds lines, the lines around them (SZZ cannot blame a fix
that deletes nothing; Sahal and Tosun, ESEM 2018, blame the block the lines are added
to), the top one must have written all of them, at least :data:`FALLBACK_LINES`.

Code the fix moves to another file is not traced (refactoring-aware SZZ, RA-SZZ by Neto
et al., SANER 2018, leaves moves out). :func:`rank` can count such lines in the shares'
denominator (``relocated``) for ``bench/history_links.py``; the guide does not: on the
oracle it removes one wrong link, on the corpus it also removes right ones (a fix that
moved a configuration section and rewrote code of one pull request).

When no pull request clearly wrote the traced lines of a fix, the earlier pull request
that added the same lines as the fix may be named instead, with its own claim
(:mod:`bot.engine.history.copies`; only where the source read earlier diffs).

A description that names the pull request it fixes ("introduced in #N", "regression
from #N", "broken by #N", "caused by #N"...) is checked against the same blame.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from bot.engine.history.copies import added_lines, same_lines
from bot.engine.history.lines import ChangedLine
from bot.engine.history.model import Candidate, HistoryFacts, HistoryLink, NamedCulprit
from bot.engine.snapshot import PullRequestSnapshot

#: The top pull request must have written at least this share of the traced lines ...
MIN_SHARE = 0.5
#: ... and at least this many of them ...
MIN_LINES = 1
#: ... and this many times as many as the runner-up.
MIN_LEAD = 2.0
#: When only a fallback is blamed (CI files and example scripts, or the lines around what
#: a pull request only adds: ``TracePlan.unanimous``), one pull request must have written
#: every blamed line, and at least this many (with one, 3 of 6 more answers were wrong
#: on the oracle of ``bench/history_links.py``).
FALLBACK_LINES = 2
#: Evidence lines a link carries.
MAX_EVIDENCE = 3

_REF = r"(?:PR\s*)?(?:#|https?://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/pull/)(?P<number>\d{1,7})\b"
#: Phrases that blame a pull request for a bug, the reference after the verb ...
_BEFORE = re.compile(
    r"\b(?P<phrase>(?:introduced|caused|broken|broke|regressed)\s+(?:in|by|from|with)"
    r"|regression\s+(?:from|in|of|introduced\s+(?:in|by)|caused\s+by)"
    r"|(?:bug|bugs|breakage)\s+(?:introduced\s+)?(?:in|by|from)"
    r"|(?:broken|fails?|failing|crashe?s?|regressed)\s+(?:\w+\s+){0,3}(?:since|after)"
    r"|(?:outdated|broken)\s+since)\s*:?\s*(?:[-*]\s+)?\[?\s*" + _REF,
    re.IGNORECASE,
)
#: ... or the reference before the verb ("#N introduced a regression", "#N broke CI").
_AFTER = re.compile(
    _REF + r"\s+(?:\w+\s+){0,2}?(?P<phrase>introduced\s+(?:a\s+|the\s+)?(?:regression|bug)|broke|breaks|cause[sd]?|regressed)\b",
    re.IGNORECASE,
)


def named_culprits(body: str, repository: str, own: int) -> list[tuple[int, str]]:
    """``[(number, phrase)]``: the pull requests ``body`` blames for the bug, in order,
    each once; references to another repository and to the pull request itself (``own``)
    are left out."""
    found: dict[int, tuple[int, str]] = {}
    for pattern in (_BEFORE, _AFTER):
        for m in pattern.finditer(body or ""):
            repo = m["repo"]
            number = int(m["number"])
            # A renamed repository's old links still point at it (GitHub redirects them),
            # so a link is this repository's when the name part matches.
            if number == own or (repo and repo.lower().rpartition("/")[2] != repository.lower().rpartition("/")[2]):
                continue
            if number not in found or m.start() < found[number][0]:
                found[number] = (m.start(), " ".join(m.group(0).split()))
    return [(n, phrase) for n, (_, phrase) in sorted(found.items(), key=lambda kv: kv[1][0])]


def rank(lines: Sequence[ChangedLine], facts: HistoryFacts, own: int = 0, *, relocated: int = 0) -> tuple[Candidate, ...]:
    """The pull requests that wrote ``lines`` according to ``facts``, most lines first
    (ties: the more recent merge first). Lines without an origin (older than the search,
    or a direct push) count in every share's denominator but name no candidate, as do
    ``relocated`` more lines (the meaningful lines moved to another file,
    ``TracePlan.dropped["moved"]``) once any line was blamed."""
    where = {(o.path, o.line): o for o in facts.origins}
    counts: Counter[int] = Counter()
    paths: defaultdict[int, Counter[str]] = defaultdict(Counter)
    total = 0
    for line in lines:
        origin = where.get((line.path, line.line))
        if origin is None:
            continue  # not blamed: the source skipped it
        total += 1
        if origin.pull is not None and origin.pull != own:
            counts[origin.pull] += 1
            paths[origin.pull][line.file] += 1
    if total:
        total += relocated
    merged = {n: p.merged_at for n, p in facts.pulls.items()}
    ranked = sorted(counts, key=lambda n: (-counts[n], -merged.get(n, 0), n))
    out = []
    for n in ranked:
        common = paths[n].most_common()
        out.append(Candidate(n, counts[n], total, tuple(p for p, _ in common), common[0][1] if common else 0))
    return tuple(out)


def dominant(
    candidates: Sequence[Candidate],
    *,
    min_share: float = MIN_SHARE,
    min_lines: int = MIN_LINES,
    min_lead: float = MIN_LEAD,
) -> Candidate | None:
    """The first of ``candidates`` when it clearly dominates (see the module docstring), else ``None``."""
    if not candidates:
        return None
    top = candidates[0]
    runner = candidates[1].lines if len(candidates) > 1 else 0
    if top.share >= min_share and top.lines >= min_lines and top.lines >= min_lead * runner:
        return top
    return None


def find_link(
    snapshot: PullRequestSnapshot,
    lines: Sequence[ChangedLine],
    facts: HistoryFacts,
    *,
    fix: bool,
    unanimous: bool = False,
    adds_only: bool = False,
    relocated: int = 0,
    min_share: float = MIN_SHARE,
    min_lines: int = MIN_LINES,
    min_lead: float = MIN_LEAD,
) -> HistoryLink:
    """Where the traced ``lines`` of ``snapshot`` came from, according to ``facts``.

    ``fix`` says whether the pull request is a fix (for the sentence). With ``unanimous``
    (the lines are a :class:`bot.engine.history.lines.TracePlan`'s fallback) a pull
    request is named only when it wrote every blamed line, at least
    :data:`FALLBACK_LINES`; ``adds_only`` says the lines are those around what the pull
    request only adds (``TracePlan.adds_only``). ``relocated`` lines count in the shares
    as :func:`rank` says (the guide passes none). When the history is not available the
    link has no top, no candidates, and the description's named culprits with 0 lines.
    """
    candidates = rank(lines, facts, snapshot.number, relocated=relocated) if facts.available else ()
    total = candidates[0].total if candidates else sum(1 for _ in _blamed(lines, facts))
    if unanimous:
        min_share, min_lines = 1.0, max(min_lines, FALLBACK_LINES)
    top = dominant(candidates, min_share=min_share, min_lines=min_lines, min_lead=min_lead)
    by_number = {c.number: c for c in candidates}
    where = {(o.path, o.line): o for o in facts.origins}

    def written_by(number: int) -> list[tuple[str, int, str, str]]:
        mine = [(ln, where[(ln.path, ln.line)]) for ln in lines if (ln.path, ln.line) in where and where[(ln.path, ln.line)].pull == number]
        return [(ln.path, ln.line, ln.text.strip(), o.commit) for ln, o in mine]

    named = []
    for n, phrase in named_culprits(snapshot.body, snapshot.repository, snapshot.number):
        mine = written_by(n) if n in by_number else []
        named.append(NamedCulprit(n, phrase, len(mine), total, mine[0] if mine else None))
    # A fix no pull request clearly wrote the changed lines of: the one that added the same lines it adds.
    added = len(added_lines(snapshot.files)) if top is None and fix and facts.available and facts.added else 0
    same = same_lines(facts.added, own=snapshot.number, total=added) if added else None
    origin = facts.pulls.get(top.number) if top else facts.pulls.get(same.number) if same else None
    if same is not None and origin is None:
        same = None  # nothing to say who or when
    evidence: tuple[tuple[str, int, str, str], ...] = ()
    if top is not None:
        mine = written_by(top.number)
        main = top.paths[0]
        evidence = tuple(([e for e in mine if _file_of(lines, e) == main] + [e for e in mine if _file_of(lines, e) != main])[:MAX_EVIDENCE])
    return HistoryLink(
        top=top,
        origin=origin,
        evidence=evidence,
        candidates=candidates,
        named=tuple(named),
        days=_days_between(origin.merged_at if origin else None, snapshot.merged_at),
        fix=fix,
        traced=total,
        adds_only=adds_only,
        same=same,
        added=added if same is not None else 0,
    )


def _file_of(lines: Sequence[ChangedLine], evidence: tuple[str, int, str, str]) -> str:
    return next((ln.file for ln in lines if (ln.path, ln.line) == evidence[:2]), evidence[0])


def _blamed(lines: Sequence[ChangedLine], facts: HistoryFacts):
    keys = {(o.path, o.line) for o in facts.origins}
    return (ln for ln in lines if (ln.path, ln.line) in keys)


def _days_between(earlier: int | None, merged_at: str | None) -> int | None:
    """Whole days from ``earlier`` (Unix seconds) to ``merged_at`` (GitHub's ISO 8601 time), or ``None``."""
    if not earlier or not merged_at:
        return None
    try:
        later = datetime.fromisoformat(merged_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return max(0, int((later - earlier) // 86400))


def describe(link: HistoryLink) -> dict:
    """The JSON form of ``link``: ``{"fixes_code_from": N|None, "share", "lines", "traced",
    "adds_only", "days", "candidates": [{number, lines}], "named": [{number, phrase, lines}]}``
    (``adds_only``: the lines blamed are those around what the pull request only adds), and
    when a fix adds lines an earlier pull request added (``HistoryLink.same``), ``"same_lines_as":
    {number, lines, added}`` (``days`` and ``author`` are then that pull request's)."""
    top = link.top
    extra = {"same_lines_as": {"number": link.same.number, "lines": len(link.same.texts), "added": link.added}} if link.same else {}
    return {
        "fixes_code_from": top.number if top else None,
        "share": round(top.share, 3) if top else None,
        "lines": top.lines if top else 0,
        "traced": link.traced,
        "adds_only": link.adds_only,
        "days": link.days,
        "author": link.origin.author if link.origin else None,
        "candidates": [{"number": c.number, "lines": c.lines} for c in link.candidates[:5]],
        "named": [{"number": n.number, "phrase": n.phrase, "lines": n.lines} for n in link.named],
        **extra,
    }
