"""The guide engine: snapshot -> analysis -> classification -> rendering.

Pure: no network, no aiohttp, no gidgethub. Every caller (CLI, GitHub App, commands,
benchmarks) goes through :func:`build_guide`.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bot import ENGINE_VERSION
from bot.engine.analysis import analyse
from bot.engine.analysis.model import Evidence
from bot.engine.analysis.description import MAX_PURPOSE_CHARS, check_against_diff, parse_description, promised_missing
from bot.engine.classify import Classification, classify, source_lines
from bot.engine.focus.housekeeping import housekeeping
from bot.engine.focus.points import focus_points
from bot.engine.focus.renames import rename_map
from bot.engine.focus.model import FollowUp
from bot.engine.focus.review import follow_ups, review_summary
from bot.engine.history.coupling import History, MergedChange, earlier, merged_change, usual_partners
from bot.engine.history.follows import changed_definitions, follow_link
from bot.engine.history.follows import describe as describe_follow
from bot.engine.history.lines import trace_plan
from bot.engine.history.links import describe as describe_history
from bot.engine.history.links import find_link
from bot.engine.history.model import HistoryFacts
from bot.engine.marker import MarkerState
from bot.engine.render import ledger, revert_note
from bot.engine.render.guide import (
    GuideFacts,
    describe_claims,
    describe_factors,
    describe_focus,
    guide_claims,
    render_claims,
    summary_line,
)
from bot.engine.render.ledger import point_evidence
from bot.engine.render.messages import t
from bot.engine.rules.model import LANGUAGES, LabelSpec, RuleHit
from bot.engine.snapshot import PullRequestSnapshot


@dataclass(frozen=True, slots=True)
class Overrides:
    """Decisions a human made with commands, which the engine must honour.

    ``lang`` replaces the configured language; ``labels_added``/``labels_removed`` are
    applied after the rules, so a refresh never undoes them; ``reverted_by`` puts the
    "reverted by" note under the title (:mod:`bot.engine.render.revert_note`).
    """

    lang: str | None = None
    labels_added: tuple[str, ...] = ()
    labels_removed: tuple[str, ...] = ()
    #: ``(number, days)``: a later pull request reverted this one, ``days`` after its merge.
    reverted_by: tuple[int, int] | None = None

    @classmethod
    def from_marker(cls, state: MarkerState | None) -> Overrides:
        """The overrides remembered in an earlier comment's marker (none when ``state`` is None)."""
        if state is None:
            return cls()
        return cls(lang=state.human_lang, labels_added=state.human_added, labels_removed=state.human_removed,
                   reverted_by=revert_note.reverted_by(state))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Guide:
    """A rendered reading guide and the labels that go with it.

    ``markdown`` is the whole comment body (marker included, at most 60,000 characters);
    ``labels`` the label names prguide wants on the PR after human overrides;
    ``label_specs`` their colour/description for labels that must be created;
    ``state`` what the marker records; ``data`` the JSON form (``prguide guide --format json``).
    """

    repository: str
    number: int
    lang: str
    markdown: str
    labels: tuple[str, ...]
    label_specs: Mapping[str, LabelSpec]
    state: MarkerState
    data: Mapping[str, Any] = field(default_factory=dict)
    skipped: bool = False
    #: The decisions behind the guide (labels with their rules, factors); ``/prguide why`` words them.
    classification: Classification | None = field(default=None, compare=False, repr=False)
    #: The guide's focus points in the order it numbers them; ``/prguide why N`` shows point N's evidence.
    focus: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    #: The pull request's changed paths as a history entry (stored for change coupling).
    change: MergedChange | None = field(default=None, compare=False, repr=False)
    #: Writes :attr:`languages`; called only when asked for (the tag view stores them, see
    #: :meth:`record`, to show the guide in its reader's language): most builds never need it.
    other_languages: Callable[[], Mapping[str, Mapping[str, Any]]] | None = field(default=None, compare=False, repr=False)

    @property
    def languages(self) -> Mapping[str, Mapping[str, Any]]:
        """The guide written in every other language the engine speaks, from the same facts and
        claims: ``{lang: {key: value}}`` with the keys of :data:`LANGUAGE_KEYS` (``data`` holds
        those of ``lang``)."""
        return self.other_languages() if self.other_languages is not None else {}

    def record(self) -> dict[str, Any]:
        """What the tag view stores of the guide: ``data`` with the published ``markdown``
        (narrated, when it was) and ``languages`` (``{lang: {key: value}}``, see :attr:`languages`)."""
        return {**self.data, "markdown": self.markdown, "languages": {lang: dict(texts) for lang, texts in self.languages.items()}}


#: The keys of a guide's JSON form whose values are written in the guide's language; everything
#: else (numbers, names, paths, evidence, review counts) is the same in every language.
LANGUAGE_KEYS = ("summary", "audience", "focus", "breaking_reasons", "importance_factors", "follow_ups", "claims", "markdown")


def build_guide(
    snapshot: PullRequestSnapshot,
    rules: Any,
    *,
    lang: str = "en",
    overrides: Overrides | None = None,
    notices: Mapping[str, tuple[str, ...]] | None = None,
    page_url: str | None = None,
    history: History | None = None,
    blame: HistoryFacts | None = None,
) -> Guide:
    """Analyse, classify and render one pull request.

    ``rules`` is a loaded :class:`bot.engine.rules.RuleSet`. ``lang`` is ``"en"`` or ``"zh"``
    (``overrides.lang`` wins). ``notices`` are extra lines by language shown near the
    top (for instance an invalid repository config file). ``page_url`` is the guide's
    own page in the tag view, linked from the comment (when the server knows its
    public address). ``history`` is the repository's merged history with the thresholds
    its replay chose (:func:`bot.engine.history.coupling.calibrate`): files that usually
    change with this pull request's but were not touched become follow-ups (at most two;
    only entries merged before this pull request count); its entries' changed definitions
    also tell which earlier pull request this one follows up ("Follows #N",
    :mod:`bot.engine.history.follows`, which the description alone may say too). ``blame`` is what a source found
    about who wrote the lines the pull request changes
    (:class:`bot.engine.history.model.HistoryFacts`): the guide names the pull request that
    clearly wrote them ("fixes code from #N") and checks a culprit the description names.
    Without either (``None``), the guide is exactly what it is without it. Never raises on
    odd PR content; raises ``ValueError`` for an unknown language.
    """
    with collector_paused():
        return _build_guide(snapshot, rules, lang=lang, overrides=overrides, notices=notices, page_url=page_url,
                            history=history, blame=blame)  # fmt: skip


_pause_lock = threading.Lock()
_pause_owner: int | None = None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (reference counting goes on).

    A 3,000-file diff allocates about a million short-lived tuples and strings, and the
    collector's passes over them took 5-10 % of the guide's time while finding nothing:
    the engine makes no reference cycles (tests/test_engine_gc.py checks it). The pause
    is process-wide, so it is kept short: only a block that finds the collector on
    pauses it, and it turns it back on when it ends, even if other threads are still
    inside theirs, then runs the collection it held back. So the collector is never off
    for longer than one guide takes, and cycles other code made meanwhile are
    collected when it ends. A caller that turned the collector off keeps it off.
    """
    global _pause_owner
    with _pause_lock:
        owner = _pause_owner is None and gc.isenabled()
        if owner:
            gc.disable()
            _pause_owner = threading.get_ident()
    try:
        yield
    finally:
        if owner:
            with _pause_lock:
                _pause_owner = None
                gc.enable()
            _collect_owed()


def _collect_owed() -> None:
    """Run the young-generation collection the pause held back: without it, builds that
    follow each other in worker threads could keep the collector from ever running.
    The oldest generation is left to the collector's own rules (a full collection
    costs the whole heap)."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    for generation in (1, 0):
        if thresholds[generation] and counts[generation] > thresholds[generation]:
            gc.collect(generation)
            return


def _build_guide(
    snapshot: PullRequestSnapshot,
    rules: Any,
    *,
    lang: str,
    overrides: Overrides | None,
    notices: Mapping[str, tuple[str, ...]] | None,
    page_url: str | None = None,
    history: History | None = None,
    blame: HistoryFacts | None = None,
) -> Guide:
    overrides = overrides or Overrides()
    lang = overrides.lang or lang
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    analysis = analyse(snapshot)
    hits = _own_repository_notes(tuple(rules.evaluate(snapshot, analysis)), snapshot)
    is_config = getattr(rules, "is_config", None)
    renames = rename_map(analysis)
    classification = classify(
        snapshot,
        analysis,
        hits,
        audience_for_area=getattr(rules, "area_audience", None),
        labels_added=overrides.labels_added,
        labels_removed=overrides.labels_removed,
        is_config=is_config,
        renames=renames,
    )
    review = review_summary(snapshot)
    description = parse_description(snapshot.body)
    present, absent = check_against_diff(description, analysis, [f.patch for f in snapshot.files]) if description.mentioned_identifiers else ((), ())
    house = housekeeping(analysis)
    points = focus_points(analysis, hits, review, snapshot=snapshot, is_config=is_config, description=description, house_files=house, renames=renames)
    follow = follow_ups(snapshot, analysis, review, classification.change_type, promised=promised_missing(description, absent))
    if history is not None and history.thresholds is not None:
        follow += partner_follow_ups(snapshot, history)
    state = MarkerState(
        rules=tuple(h.rule_id for h in hits),
        labels=tuple(d.name for d in classification.labels if d.source == "rule"),
        lang=lang,
        human_added=overrides.labels_added,
        human_removed=overrides.labels_removed,
        human_lang=overrides.lang,
        engine=ENGINE_VERSION,
        extra=revert_note.marker_extra(*overrides.reverted_by) if overrides.reverted_by else {},
    )
    link = None
    if blame is not None:
        # The source's own plan when it kept one: tracing the same files again costs ~1 ms a pull request.
        plan = blame.traced if blame.traced is not None else trace_plan(snapshot.files)
        link = find_link(snapshot, plan.to_blame, blame, fix=classification.change_type == "fix", unanimous=plan.unanimous, adds_only=plan.adds_only)
    reverted = _reverted(hits, description.revert_of, snapshot, classification.change_type)
    definitions = changed_definitions(analysis)
    follows = follow_up_of(snapshot, definitions, history, (link.top.number if link is not None and link.top is not None else None, reverted))
    facts = GuideFacts(
        snapshot=snapshot,
        analysis=analysis,
        classification=classification,
        focus=points,
        review=review,
        follow_ups=follow,
        state=state,
        area_name=_area_namer(rules),
        reverted=reverted,
        purpose=_trusted_purpose(description.purpose, absent),
        housekeeping=house,
        notices=notices or {},
        page_url=page_url,
        reverted_by=overrides.reverted_by,
        history=link,
        follows=follows,
    )
    # One ledger: the comment and the JSON "claims" are written from the same claims.
    claims = guide_claims(facts, lang)
    markdown = render_claims(facts, claims, lang)
    labels = classification.label_names
    specs = {name: _label_spec(rules, name) for name in labels}
    data = _guide_data(facts, lang, markdown, claims)
    # What the author and reviewers said, as the narrator's fact sheet reads it.
    data["description"] = {"purpose": description.purpose, "design_points": list(description.design_points),
                           "sections": {k: v[:600] for k, v in description.sections.items() if k in _NARRATED_SECTIONS}}
    data["review_highlights"] = [{"path": th.path, "line": th.line, "comments": th.comments, "opening": th.opening[:300]}
                                 for th in review.threads[:5]]  # fmt: skip
    data.update(_area_data(rules, classification, labels))
    if overrides.reverted_by:
        data["reverted_by"] = {"number": overrides.reverted_by[0], "days": overrides.reverted_by[1]}

    if blame is not None and link is not None:
        # Only when history was looked up, so the JSON of a guide without it is unchanged.
        data["history"] = {"status": blame.status, "detail": blame.detail, **describe_history(link)}
    if follows is not None:
        # Only when one was found, so the JSON of a guide without it is unchanged.
        data["follows"] = describe_follow(follows)

    # The same facts and claims in the other languages, so a stored guide can be read in
    # either; written once, when first asked for.
    @functools.cache
    def languages() -> dict[str, dict[str, Any]]:
        out = {}
        for other in LANGUAGES:
            if other != lang:
                other_claims = guide_claims(facts, other)
                out[other] = _language_data(facts, other, render_claims(facts, other_claims, other), other_claims)
        return out

    return Guide(
        repository=snapshot.repository,
        number=snapshot.number,
        lang=lang,
        markdown=markdown,
        labels=labels,
        label_specs=specs,
        state=state,
        data=data,
        skipped=classification.skip,
        classification=classification,
        # The points as the guide numbers them: only those with evidence are shown (the
        # ledger's rule), each with the evidence it is shown with, so `/prguide why N` and
        # the comment agree on N.
        focus=tuple(p._replace(evidence=ev) for p in points for ev in [point_evidence(p)] if ev),
        other_languages=languages,
        change=dataclasses.replace(merged_change(snapshot.number, snapshot.files, merged_at=snapshot.merged_at, author=snapshot.author),
                                   definitions=definitions),
    )


#: Description sections the JSON output carries (the narrator's facts).
_NARRATED_SECTIONS = ("what", "why", "design", "breaking", "api")


def partner_follow_ups(snapshot: PullRequestSnapshot, history: History) -> tuple[FollowUp, ...]:
    """"``a`` usually changes with ``b``; this PR did not touch it" for the usual partners
    (:func:`bot.engine.history.coupling.usual_partners`) of ``snapshot``'s files in the
    part of ``history`` merged before it, each resting on the pull requests that changed
    both (at most five named)."""
    if history.thresholds is None:
        return ()
    own = merged_change(snapshot.number, snapshot.files)
    prior = earlier(history.changes, snapshot.number, snapshot.merged_at)
    focal = [p for p in own.paths if p not in own.gone]
    partners = usual_partners((*own.paths, *own.gone), prior, focal=focal, thresholds=history.thresholds, own=snapshot.number)
    return tuple(
        FollowUp("follow.usual_partner", {"file": p.file, "name": p.partner, "together": p.together, "total": p.changes},
                 file=p.file, evidence=(Evidence(p.partner, new=", ".join(f"#{n}" for n in p.numbers[:5]), source="metadata"),))
        for p in partners
    )  # fmt: skip


def follow_up_of(
    snapshot: PullRequestSnapshot, definitions: tuple[str, ...], history: History | None, linked: tuple[int | None, ...] = ()
) -> Any:
    """The earlier pull request ``snapshot`` follows up (a :class:`bot.engine.history.follows.FollowLink`
    or ``None``, see :func:`bot.engine.history.follows.follow_link`), from its description and,
    when ``history`` is given, the definitions (``path::name``) both changed. ``linked`` are
    the pull requests the guide links otherwise (the one whose code the changed lines came
    from, the reverted one; ``None`` for none): the history alone never names them."""
    prior = earlier(history.changes, snapshot.number, snapshot.merged_at) if history is not None else ()
    return follow_link(snapshot.body, snapshot.repository, snapshot.number, definitions, prior, merged_at=snapshot.merged_at,
                       author=snapshot.author, exclude=[n for n in linked if n is not None])  # fmt: skip


def _area_namer(rules: Any):
    namer = getattr(rules, "area_name", None)
    if namer is None:
        return lambda area, lang: area
    return lambda area, lang: namer(area, lang) or area


def _label_spec(rules: Any, name: str) -> LabelSpec:
    getter = getattr(rules, "label_spec", None)
    spec = getter(name) if getter else None
    return spec if isinstance(spec, LabelSpec) else LabelSpec(name)


def _reverted(hits: tuple[RuleHit, ...], revert_of: str, snapshot: PullRequestSnapshot, change_type: str) -> int | None:
    """The pull request of this repository that ``snapshot`` reverts, or ``None``.

    A rule's capture first, unless the description's "Reverts owner/repo#N" names the same
    number in another repository (GitHub's revert button in a fork or a sibling repository);
    else the description's "Reverts #N", only for a pull request that is a revert (a feature
    whose description says "we should not revert #12" reverts nothing). Never its own number,
    nor one above :data:`MAX_NUMBER`.
    """
    number = _reverted_number(hits, snapshot.number)
    if number is not None and not _other_repository(snapshot.body, number, snapshot.repository):
        return number if number <= MAX_NUMBER else None
    if change_type != "revert":
        return None
    target = _revert_target(revert_of, snapshot.repository)
    return target if target != snapshot.number and target is not None and target <= MAX_NUMBER else None


def _own_repository_notes(hits: tuple[RuleHit, ...], snapshot: PullRequestSnapshot) -> tuple[RuleHit, ...]:
    """``hits`` without the focus notes of a rule that captured a pull request number the
    description places in another repository ("Reverts other/repo#100"): "This reverts
    #100" would name, and GitHub would link, this repository's #100."""
    out = []
    for hit in hits:
        numbers = [str((hit.captures or {}).get(k) or "").lstrip("#") for k in ("reverted", "revert", "pr")]
        if hit.focus and any(n.isdigit() and _other_repository(snapshot.body, int(n), snapshot.repository) for n in numbers):
            hit = dataclasses.replace(hit, focus=())
        out.append(hit)
    return tuple(out)


def _other_repository(body: str, number: int, repository: str) -> bool:
    """True when ``body`` says "Reverts owner/repo#number" of a repository other than ``repository``."""
    for m in _REVERTS_IN.finditer(body or ""):
        if int(m.group(2)) == number:
            return bool(m.group(1)) and m.group(1).lower() != repository.lower()
    return False


#: The largest pull request number taken from a description: a typo's 20 digits fit no database.
MAX_NUMBER = 2**31 - 1
#: "Reverts owner/repo#N" or "Reverts #N" as GitHub's revert button writes it, at a line's start.
_REVERTS_IN = re.compile(r"^Reverts\s+(?:([\w.-]+/[\w.-]+))?#(\d+)", re.MULTILINE)


def _revert_target(revert_of: str, repository: str) -> int | None:
    """The PR number a description's ``Reverts owner/repo#N`` names, when it is this repository's."""
    repo, _, number = revert_of.partition("#")
    if number.isdigit() and (not repo or repo.lower() == repository.lower()):
        return int(number)
    return None


#: A purpose sentence is used as the summary only within these lengths (characters).
_PURPOSE_CHARS = (24, MAX_PURPOSE_CHARS)


def _trusted_purpose(purpose: str, absent: tuple[str, ...]) -> str | None:
    """The author's purpose sentence when it can stand as the summary: a sentence of
    reasonable length that names nothing the diff lacks."""
    if not purpose or not _PURPOSE_CHARS[0] <= len(purpose) <= _PURPOSE_CHARS[1]:
        return None
    if any(name in purpose for name in absent):
        return None
    return purpose


def _reverted_number(hits: tuple[RuleHit, ...], own: int = 0) -> int | None:
    """The reverted pull request a rule captured: the one source of truth, since the
    rule's own focus note names the same number (never this pull request's own)."""
    for hit in hits:
        for key in ("reverted", "revert", "pr"):
            value = str((hit.captures or {}).get(key) or "").lstrip("#")
            if value.isdigit() and int(value) != own:
                return int(value)
    return None


def _guide_data(facts: GuideFacts, lang: str, markdown: str, claims: tuple[ledger.GuideClaim, ...] = ()) -> dict[str, Any]:
    """The JSON form of a guide; ``claims`` are the shown claims of the ledger
    (``[{kind, section, text, evidence: [{path, start, end, old, new, source}]}]``).
    The keys of :data:`LANGUAGE_KEYS` come from :func:`_language_data`."""
    s, c = facts.snapshot, facts.classification
    texts = _language_data(facts, lang, markdown, claims)
    return {
        "repository": s.repository,
        "number": s.number,
        "title": s.title,
        "url": s.html_url,
        "author": s.author,
        "merged_at": s.merged_at,
        "base_branch": s.base_branch,
        "labels": list(c.label_names),
        "label_details": [{"name": d.name, "source": d.source, "rule": d.rule} for d in c.labels],
        "areas": list(c.areas),
        "change_type": c.change_type,
        "breaking": c.breaking,
        "breaking_reasons": texts["breaking_reasons"],
        "behaviour": [_fact_data(b) for b in facts.analysis.behaviour],
        "areas_more": c.areas_more,
        "reverted": facts.reverted,
        "importance": c.importance,
        "importance_factors": texts["importance_factors"],
        "reading_level": c.reading_level,
        "reading_minutes": c.reading_minutes,
        "audience": texts["audience"],
        "summary": texts["summary"],
        "focus": texts["focus"],
        "review": _review_data(facts.review),
        "follow_ups": texts["follow_ups"],
        "housekeeping": {group: list(paths) for group, paths in facts.housekeeping.groups()},
        "dependencies": [
            {"name": d.name, "action": d.action, "old": d.old_spec, "new": d.new_spec, "file": d.file or f.path, "bump": d.bump}
            for f in facts.analysis.files
            for d in f.dependency_changes
        ],
        "symbols": list(facts.analysis.symbols),
        "lines_changed": facts.analysis.lines_changed,
        "source_lines_changed": source_lines(facts.analysis),
        "truncated": s.truncated,
        "skipped": c.skip,
        "rules": [h.rule_id for h in c.hits],
        "lang": lang,
        "engine_version": ENGINE_VERSION,
        "claims": texts["claims"],
        "markdown": texts["markdown"],
    }


def _language_data(facts: GuideFacts, lang: str, markdown: str, claims: tuple[ledger.GuideClaim, ...]) -> dict[str, Any]:
    """The values of :data:`LANGUAGE_KEYS` in ``lang``: ``markdown`` and ``claims`` (the shown
    claims of the ledger) as rendered in ``lang``, the rest written here from ``facts``."""
    c = facts.classification
    return {
        "summary": summary_line(facts, lang, plain=True),
        "audience": list(c.audience.get(lang, ())),
        "focus": describe_focus(facts.focus, lang),
        "breaking_reasons": describe_claims(c.breaking_reasons, lang),
        "importance_factors": describe_factors(c.factors, lang),
        "follow_ups": [t(f.key, lang, {**f.params, **({"file": f.file} if f.file else {})}) for f in facts.follow_ups],
        "claims": ledger.describe(claims),
        "markdown": markdown,
    }


def _area_data(rules: Any, classification: Classification, labels: Any) -> dict[str, Any]:
    """Display names and readers of the guide's areas in every language, and which labels name an area.

    ``{"area_info": {area: {"names": {lang: text}, "audience": {lang: text}}}, "label_areas": {label: area}}``,
    so the tag view can show "Megatron backend" for ``area/megatron`` without the rule files.
    """
    declared = getattr(rules, "areas", None)
    if not isinstance(declared, Mapping):
        return {"area_info": {}, "label_areas": {}}
    info = {
        area: {"names": dict(declared[area].names), "audience": dict(declared[area].audience)}
        for area in classification.areas
        if area in declared
    }
    namer = getattr(rules, "label_area", None)
    label_areas = {}
    for name in labels:
        area = namer(name) if namer else None
        if area in info:
            label_areas[name] = area
    return {"area_info": info, "label_areas": label_areas}


def _review_data(review: Any) -> dict[str, Any]:
    """Who reviewed and how much was discussed: ``{"reviewers": [{user, state, bot}], "threads": n, "comments": n}``."""
    return {
        "reviewers": [{"user": user, "state": state, "bot": bool(bot)} for user, state, bot in review.reviewers],
        "threads": len(review.threads),
        "comments": sum(thread.comments for thread in review.threads),
    }


def _fact_data(fact: Any) -> dict[str, Any]:
    """A behaviour fact as JSON (every field of :class:`bot.engine.analysis.model.BehaviourFact`)."""
    return {"kind": fact.kind, "path": fact.path, "symbol": fact.symbol, "old": fact.old, "new": fact.new,
            "detail": fact.detail, "line": fact.line, "user_facing": fact.user_facing}  # fmt: skip
