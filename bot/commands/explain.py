"""``/prguide why``: which rules, conditions and factors gave the labels and the score.

Pure. :func:`render_why` words, in English or Chinese, the
:class:`~bot.engine.classify.Classification` that :func:`bot.engine.build.build_guide` keeps on
the :class:`~bot.engine.build.Guide` it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.engine.classify import Classification
from bot.commands.messages import t
from bot.engine.render.messages import t as guide_t
from bot.engine.rules.reasons import in_language

#: Conditions shown per rule; rule files rarely need more to be understood.
MAX_REASONS = 8


def render_why(classification: Classification, lang: str, label: str | None = None) -> str:
    """The answer to ``/prguide why [label]`` as Markdown in ``lang``.

    Without ``label``: every label and the rule (``FILE:LINE``) and conditions behind
    it, the other rules that matched, and the importance factors. With ``label``: that
    label only, or a sentence saying it was removed by a maintainer or is not applied.
    """
    c = classification
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
        lines += ["", guide_t("why.model", lang, {"minutes": c.reading_minutes, "level": guide_t(f"level.{c.reading_level}", lang)}, raw=True)]
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
