"""``/prguide why``: which rules, conditions and factors gave the labels and the score,
and ``/prguide why N``: what focus point N of the guide rests on.

Pure. :func:`render_why` words, in English or Chinese, the
:class:`~bot.engine.classify.Classification` that :func:`bot.engine.build.build_guide` keeps on
the :class:`~bot.engine.build.Guide` it returns; :func:`render_focus_evidence` the
evidence (:class:`bot.engine.analysis.model.Evidence`) of one of its focus points.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from bot.engine.classify import Classification
from bot.commands.messages import t
from bot.engine.render import sanitize
from bot.engine.render.guide import describe_focus
from bot.engine.render.messages import t as guide_t
from bot.engine.rules.reasons import in_language
from bot.locale import N_

#: Conditions shown per rule; rule files rarely need more to be understood.
MAX_REASONS = 8
#: Evidence items shown for a focus point, and lines of old/new text per item.
MAX_EVIDENCE = 6
MAX_EVIDENCE_LINES = 12
#: Characters kept of one quoted line.
MAX_LINE_CHARS = 200


def render_why(classification: Classification, lang: str, label: str | None = None, focus: Sequence[Any] = ()) -> str:
    """The answer to ``/prguide why [label|N]`` as Markdown in ``lang``.

    Without ``label``: every label and the rule (``FILE:LINE``) and conditions behind
    it, the other rules that matched, and the importance factors. With ``label``: that
    label only, or a sentence saying it was removed by a maintainer or is not applied.
    With a number ``N`` that no applied label is named: the evidence of focus point
    ``N`` of ``focus`` (the guide's :class:`~bot.engine.focus.model.FocusPoint` tuple,
    numbered from 1 as the guide shows them); see :func:`render_focus_evidence`.
    """
    c = classification
    # ASCII digits only: "²" and "①" are digits to str.isdigit() but not to int().
    if label is not None and label.isascii() and label.isdigit() and not any(d.name == label for d in c.labels):
        return render_focus_evidence(focus, int(label), lang)
    if label is None:
        lines = [f"**{t('cmd.why.title', lang)}**", "", f"**{t('cmd.why.labels', lang)}**"]
        if c.labels:
            for decision in c.labels:
                lines += _label_lines(c, decision, lang)
        else:
            lines.append(t("cmd.why.no_labels", lang))
        lines += [f"- {t('cmd.why.removed', lang, {'label': name})}" for name in c.labels_removed_by_human]
        labelled = {d.rule for d in c.labels if d.rule}
        others = [h for h in c.hits if h.rule_id not in labelled]
        if others or not c.hits:
            lines += ["", f"**{t('cmd.why.rules', lang)}**"]
            if not c.hits:
                lines.append(t("cmd.why.no_rules", lang))
            for hit in others:
                lines.append(f"- {t('cmd.why.rule', lang, {'rule': hit.rule_id, 'source': hit.source})}")
                lines += _reason_lines(hit.reasons, lang)
        lines += ["", f"**{t('cmd.why.score', lang, {'importance': c.importance})}**"]
        total = 0
        for factor in c.factors:
            total += factor.points
            reason = guide_t(factor.key, lang, factor.params)
            part = getattr(factor, "part", "other")
            if part in ("reach", "risk") and factor.source != f"cap.{part}":
                reason = f"{guide_t(f'part.{part}', lang)} · {reason}"
            lines.append(f"- {t('cmd.why.factor', lang, {'points': f'{factor.points:+d}', 'reason': reason})}")
        if total != c.importance:
            lines += ["", t("cmd.why.clamped", lang)]
        reasons = getattr(c, "breaking_reasons", ())
        if reasons:
            lines += ["", f"**{guide_t('why.breaking', lang)}**"]
            lines += [f"- {guide_t(r.key, lang, {k: v for k, v in r.params.items() if v not in (None, '') or k in ('name', 'old', 'new')})}" for r in reasons]
        lines += ["", guide_t(N_("why.model"), lang, {"minutes": c.reading_minutes, "level": guide_t(f"level.{c.reading_level}", lang)}, raw=True)]
        return "\n".join(lines)

    key = label.casefold()
    decision = next((d for d in c.labels if d.name.casefold() == key), None)
    if decision is not None:
        lines = [f"**{t('cmd.why.title_label', lang, {'label': decision.name})}**", ""]
        return "\n".join(lines + _label_lines(c, decision, lang))
    if any(name.casefold() == key for name in c.labels_removed_by_human):
        return t("cmd.why.removed", lang, {"label": label})
    if c.labels:
        return t("cmd.why.not_applied", lang, {"label": label, "labels": [d.name for d in c.labels]})
    return t("cmd.why.not_applied_none", lang, {"label": label})


def _label_lines(c: Classification, decision: Any, lang: str) -> list[str]:
    if decision.source != "rule":
        return [f"- {t('cmd.why.by_human', lang, {'label': decision.name})}"]
    lines = [
        f"- {t('cmd.why.by_rule', lang, {'label': decision.name, 'rule': decision.rule, 'source': decision.rule_source or '?'})}"
    ]
    hit = next((h for h in c.hits if h.rule_id == decision.rule), None)
    if hit is not None:
        lines += _reason_lines(hit.reasons, lang)
    return lines


def _reason_lines(reasons: Sequence[str], lang: str) -> list[str]:
    shown = [f"  - {t('cmd.why.condition', lang, {'condition': in_language(r, lang)})}" for r in reasons[:MAX_REASONS]]
    if len(reasons) > MAX_REASONS:
        shown.append("  - …")
    return shown


def render_focus_evidence(focus: Sequence[Any], number: int, lang: str) -> str:
    """What focus point ``number`` (1-based) rests on, as Markdown in ``lang``: the point's
    sentence, then each evidence item (at most :data:`MAX_EVIDENCE`) with its file and
    line range and the old and new text as a ``diff`` block, or the quoted words of the
    description or a review. A point without evidence names its file. PR text is
    quoted safely: code blocks (GitHub renders no mention, link or HTML inside them)
    fenced longer than any backtick run in the text, prose through
    :func:`bot.engine.render.sanitize.quote`.
    """
    if not 1 <= number <= len(focus):
        return t("cmd.why.focus_missing", lang, {"number": number, "total": len(focus)})
    point = focus[number - 1]
    # A rule's or author's note is PR text to neutralise; the catalogue's sentences are already safe.
    reason = sanitize.neutralize(describe_focus([point], lang)[0]["reason"]) if point.text else describe_focus([point], lang)[0]["reason"]
    title = t("cmd.why.focus_title", lang, {"number": number})
    lines = [f"**{title}**", "", reason]
    evidence = tuple(getattr(point, "evidence", ()) or ())
    if not evidence:
        if point.file:
            lines += ["", t("cmd.why.focus_no_evidence", lang, {"file": point.file})]
        return "\n".join(lines)
    for ev in evidence[:MAX_EVIDENCE]:
        lines += ["", _evidence_heading(ev, point.file, lang)]
        lines += _evidence_body(ev)
    if len(evidence) > MAX_EVIDENCE:
        lines += ["", t("cmd.why.focus_more", lang, {"total": len(evidence) - MAX_EVIDENCE})]
    return "\n".join(lines)


def _evidence_heading(ev: Any, fallback: str | None, lang: str) -> str:
    if ev.source == "description":
        return t("cmd.why.focus_description", lang)
    if ev.source == "review":
        return t("cmd.why.focus_review", lang, {"file": ev.path or fallback or "?"})
    path = ev.path or fallback or "?"
    if ev.start and ev.end and ev.end != ev.start:
        return t("cmd.why.focus_lines", lang, {"file": path, "start": ev.start, "end": ev.end})
    if ev.start:
        return t("cmd.why.focus_line", lang, {"file": path, "start": ev.start})
    return t("cmd.why.focus_file", lang, {"file": path})


def _evidence_body(ev: Any) -> list[str]:
    """The old and new text of one evidence item, quoted safely."""
    if ev.source in ("description", "review"):
        text = ev.new or ev.old
        return [f"> {sanitize.quote(text, 400)}"] if text else []
    diff = [f"- {line}" for line in _lines(ev.old)] + [f"+ {line}" for line in _lines(ev.new)]
    if not diff:
        return []
    body = "\n".join(diff)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}diff", body, fence]


def _lines(text: str) -> list[str]:
    if not text:
        return []
    lines = [sanitize.strip_control(line)[:MAX_LINE_CHARS] for line in text.splitlines()]
    if len(lines) > MAX_EVIDENCE_LINES:
        lines = lines[:MAX_EVIDENCE_LINES] + ["…"]
    return lines
