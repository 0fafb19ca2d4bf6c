"""Focus points: the few places of a pull request a reader should open first, ranked by meaning."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from bot.engine.analysis.envvars import ENV_KINDS, breaks_users
from bot.engine.analysis.model import (
    DiffAnalysis,
    Evidence,
    FileAnalysis,
)
from bot.engine.focus.edits import assert_condition, edit_message, edit_points, edit_weight, in_new, quote_point
from bot.engine.focus.housekeeping import (
    api_names,
    dep_is_major,
    housekeeping,
    public_keys,
    removed_trees,
)
from bot.engine.analysis.versions import install_script, named_on
from bot.locale import N_
from bot.engine.breaking import callers_rewritten, consequence_known, key_still_read, signature_detail
from bot.engine.focus.model import (
    API_WEIGHT,
    ASSERT_WEIGHT,
    BREAKING_WEIGHT,
    CARRIER_WEIGHT,
    CODE_KINDS,
    DEP_WEIGHT,
    FACT_WEIGHT,
    MAX_DESCRIBED_FILES,
    MAX_FOCUS,
    MAX_NAMES,
    MAX_PER_FILE,
    RULE_NOTE_WEIGHT,
    FocusPoint,
    Housekeeping,
    file_point,
    IsConfig,
    ReviewSummary,
)
from bot.engine.focus.renames import rename_map
from bot.engine.focus.wiring import entry_points
from bot.engine.focus.names import (
    added_texts,
    changed_texts,
    described_files,
    design_points,
    named_in_text,
    short_name,
    tested_names,
    uses_limit,
    with_uses,
)
from bot.engine.rules.model import RuleHit
from bot.engine.snapshot import PullRequestSnapshot

_FACT_POINTS = {
    "default_changed": FACT_WEIGHT,
    "key_removed": FACT_WEIGHT,
    "key_renamed": FACT_WEIGHT,
    "field_removed": FACT_WEIGHT - 5,
    "signature_changed": FACT_WEIGHT - 5,
    "symbol_removed": FACT_WEIGHT - 5,
    "symbol_renamed": FACT_WEIGHT,
    "symbol_moved": FACT_WEIGHT - 10,
    "check_added": FACT_WEIGHT - 10,
    "check_removed": FACT_WEIGHT - 10,
    "parameter_added": API_WEIGHT,
    "metric_renamed": FACT_WEIGHT - 10,
    "dep_floor_raised": DEP_WEIGHT + 10,
    "dep_ceiling_added": DEP_WEIGHT,
    "dep_pin_changed": DEP_WEIGHT,
    "dep_added": DEP_WEIGHT,
    "dep_removed": DEP_WEIGHT,
    "dep_commit_moved": DEP_WEIGHT,
    "env_added": FACT_WEIGHT - 10,
    "env_removed": FACT_WEIGHT - 10,
    "env_default_changed": FACT_WEIGHT - 5,
}
#: An environment fact in an example script weighs this much less than in source: it
#: changes how one launches a job, not what the package does.
_ENV_SCRIPT_DISCOUNT = 20
#: Weight of an ``ENV`` of a Docker image or build file: below the image's dependency changes.
_ENV_BUILD_WEIGHT = DEP_WEIGHT - 5
#: Weight of a variable a new module reads: part of the new module, which has its own point.
_ENV_NEW_MODULE_WEIGHT = API_WEIGHT - 15
#: The message of each fact kind (``.plain`` is added when a key is not user configuration).
_FACT_KEYS = {
    "default_changed": "focus.fact.default_changed",
    "key_removed": "focus.fact.key_removed",
    "key_renamed": "focus.fact.key_renamed",
    "field_removed": "focus.fact.field_removed",
    "signature_changed": "focus.fact.signature_changed",
    "parameter_added": "focus.fact.parameter_added",
    "check_added": "focus.fact.check_added",
    "check_removed": "focus.fact.check_removed",
    "symbol_removed": "focus.fact.symbol_removed",
    "symbol_renamed": "focus.fact.symbol_renamed",
    "symbol_moved": "focus.fact.symbol_moved",
    "metric_renamed": "focus.fact.metric_renamed",
    "dep_floor_raised": "focus.fact.dep_floor_raised",
    "dep_ceiling_added": "focus.fact.dep_ceiling_added",
    "dep_pin_changed": "focus.fact.dep_pin_changed",
    "dep_added": "focus.fact.dep_added",
    "dep_removed": "focus.fact.dep_removed",
    "dep_commit_moved": "focus.fact.dep_commit_moved",
    "env_added": "focus.fact.env_added",
    "env_removed": "focus.fact.env_removed",
    "env_default_changed": "focus.fact.env_default_changed",
}
_BREAKING_KINDS = ("default_changed", "key_removed", "key_renamed", "field_removed", "signature_changed",
                   "symbol_removed", "symbol_renamed", "symbol_moved", "check_added", "dep_floor_raised")
#: Exact-edit points shown at most: a large pull request's many edits must not crowd out
#: its other facts (a new environment variable, a removed key).
_MAX_EDIT_POINTS = 3
#: Keys of exact-edit points (:mod:`bot.engine.focus.edits`), and of new or removed config keys.
_EDIT_PREFIX = "focus." + "edit."
_KEYED = ("focus.config_added", "focus.config_removed", "focus.config_moved")
#: Facts read per pull request: a 3,000-file refactor has thousands, and six points are shown.
_MAX_FACTS = 200



def focus_points(
    analysis: DiffAnalysis,
    hits: tuple[RuleHit, ...],
    review: ReviewSummary,
    *,
    snapshot: PullRequestSnapshot | None = None,
    is_config: IsConfig | None = None,
    description: Any = None,
    house_files: Housekeeping | None = None,
    renames: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> tuple[FocusPoint, ...]:
    """The ranked focus points, at most :data:`MAX_FOCUS`, at most two per file.

    ``snapshot`` gives the title and description (symbols they name rank higher);
    ``is_config(path, class_name)`` says which classes hold configuration
    (``RuleSet.is_config``); without it only config files hold config keys;
    ``description`` (:class:`bot.engine.analysis.description.Description`) offers its design
    bullets as points, on the file whose changed lines hold what they name.
    """
    hk = house_files if house_files is not None else housekeeping(analysis)
    renames = rename_map(analysis) if renames is None else renames
    house = set(hk.paths)
    kinds = {f.path: f.kind for f in analysis.files}
    named = named_in_text(snapshot, description) if snapshot is not None else set()
    tested = tested_names(analysis)
    candidates: list[FocusPoint] = []
    for hit in hits:
        # One point per rule: a rule that matched twelve files says the same thing twelve times.
        notes = [n for n in hit.focus if not _unfounded_note(n, house, kinds, is_config)]
        if notes:
            note = notes[0]
            more = {"similar": len(notes) - 1} if len(notes) > 1 else {}
            candidates.append(FocusPoint(note.file, note.symbol, params=more, text=note.text, weight=RULE_NOTE_WEIGHT))
    fact_files: set[str] = set()
    behaviour = analysis.behaviour  # a property: built once here
    edits = [p for p in edit_points(analysis) if p.file not in house]
    candidates.extend(edits)
    # An exact edit states what a check or parameter default fact says, with its condition.
    stated = {(e.file, ev.start) for e in edits for ev in e.evidence}
    candidates.extend(_fact_points(analysis, house, is_config, fact_files, renames, named, behaviour, stated))
    if behaviour:
        candidates.extend(_env_points(analysis, behaviour, house, getattr(snapshot, "repository", "") or ""))
    texts = changed_texts(analysis, house) if named or getattr(description, "design_points", ()) else {}
    described = described_files(texts, named)
    if getattr(description, "design_points", ()):
        touched = {f.path: " ".join(f.symbols_touched) for f in analysis.files if f.path in texts}
        candidates.extend(design_points(texts, description, added_texts(analysis, house), touched))
    edited = {p.file for p in edits}
    for f in analysis.files:
        if f.path in house:
            continue
        points = _file_points(f, is_config, fact_files, named, tested, _has_facts(f), described.get(f.path, 0), renames.get(f.path, ()))
        if f.path in edited or any(p.key and p.key.startswith(_KEYED) for p in points):
            # Its exact edits or its new and removed keys say what changed there; "+N/−M
            # lines" would say less. The keys take the rank the line count had (the
            # description may name what is in this file).
            largest = [p for p in points if p.key in ("focus.largest", "focus.largest_symbols")]
            points = [p for p in points if p.key not in ("focus.largest", "focus.largest_symbols")]
            keyed = [i for i, p in enumerate(points) if p.key and p.key.startswith(_KEYED)]
            if keyed and largest:
                i = keyed[0]
                points[i] = points[i]._replace(weight=max(points[i].weight, largest[0].weight))
        candidates.extend(points)
    candidates.extend(removed_trees(analysis))
    for thread in review.threads[:2]:
        if thread.comments >= 2:
            candidates.append(
                FocusPoint(
                    thread.path,
                    None,
                    "focus.thread",
                    {"comments": thread.comments, "people": thread.participants, "line": thread.line},
                    weight=45 + thread.comments,
                )
            )
    if not candidates and house:
        # Nothing but housekeeping: code owners, image tags or formatting are then the
        # change itself (generated and lock files never are).
        for f in analysis.files:
            if f.path in hk.owners + hk.images + hk.formatting + hk.comments:
                candidates.append(FocusPoint(f.path, None, "focus.largest", {"additions": f.additions, "deletions": f.deletions, "names": ()}, weight=10))
    candidates.sort(key=lambda p: -p.weight)
    chosen: list[FocusPoint] = []
    per_file: dict[str | None, int] = defaultdict(int)
    seen: set[tuple[str | None, str | None]] = set()
    said_keys: dict[tuple[frozenset[str], int], int] = {}  # new config keys already said -> index of their point
    merged: set[str | None] = set()  # files whose new keys an earlier point counts
    edits_chosen = 0
    for point in candidates:
        # The same file and symbol said twice (a rule's note and a built-in point) is one point.
        ident = (point.file, point.symbol) if point.symbol else (point.file, point.key or next(iter(point.text.values()), None))
        if ident in seen or (point.file and per_file[point.file] >= MAX_PER_FILE):
            continue
        if point.key and point.key.startswith(_EDIT_PREFIX) and edits_chosen >= _MAX_EDIT_POINTS:
            continue  # leave room for the pull request's other facts
        if point.key in ("focus.config_added", "focus.config_added.plain"):
            # The same new keys in five config files are one change, said once ("here and in 4 other files").
            keys = (frozenset(short_name(n) for n in point.params.get("names", ())), point.params.get("count", 0))
            earlier = said_keys.get(keys)
            if earlier is not None:
                first = chosen[earlier]
                chosen[earlier] = first._replace(params={**first.params, "files": first.params.get("files", 0) + 1})
                merged.add(point.file)
                continue
            said_keys[keys] = len(chosen)
        if point.file in merged and point.key in ("focus.largest", "focus.largest_symbols"):
            continue  # its lines are the keys an earlier point already counts
        seen.add(ident)
        per_file[point.file] += 1
        edits_chosen += bool(point.key and point.key.startswith(_EDIT_PREFIX))
        chosen.append(point)
        if len(chosen) == MAX_FOCUS:
            break
    chosen = _implementation_first(chosen, candidates, kinds)
    by_path = {f.path: f for f in analysis.files}
    # Which new API is an entry point is only worth finding out for the points shown.
    added_names = {n for p in chosen if p.key == "focus.added" for n in p.params.get("names", ())}
    entries = entry_points(analysis, added_names)
    shown: set[str] = set()
    out = []
    removed_cache: list[str] = []

    added_cache: list[str] = []

    def removed_text() -> str:
        # Built once, and only when a point asks: a 3,000-file diff pays for it at most once.
        if not removed_cache:
            removed_cache.append("\n".join(line for f in analysis.files if f.counts_as_code for line in f.removed_lines))
        return removed_cache[0]

    def added_text() -> str:
        if not added_cache:
            added_cache.append("\n".join(line for f in analysis.files if f.counts_as_code for line in f.added_lines))
        return added_cache[0]

    stated = {(ev.path, ev.start) for q in chosen if q.key and q.key.startswith(_EDIT_PREFIX) for ev in q.evidence}
    for p in chosen:
        wired = [n for n in p.params.get("names", ()) if n in entries] if p.key == "focus.added" else []
        if wired:
            # Only the fact is said (which added code calls it, or which decorator registers
            # it): whether that makes it "the" entry point of the change is interpretation.
            names = tuple(dict.fromkeys(wired + list(p.params["names"])))
            how, where = entries[wired[0]]
            key = {"call": "focus.added_called", "name": "focus.added_named"}.get(how, "focus.added_registered")
            extra = {"code": where} if how == "register" else {"file": where}
            p = FocusPoint(p.file, p.symbol, key, {**p.params, "names": names, "name": wired[0], **extra}, p.text, p.weight)
        inner = _inner_edits(p, by_path.get(p.file or ""), stated) if p.key in ("focus.largest", "focus.largest_symbols") else ()
        if inner:
            # The file's own exact changes say what its lines do; a list of the names its
            # added code uses read to raters as an identifier dump.
            p = p._replace(params={**p.params, "edits": tuple(edit_message(e) for e in inner)}, evidence=tuple(e.evidence for e in inner))
        else:
            # A name already shown by an earlier point is not repeated: three config files
            # with the same new keys say them once.
            p = with_uses(p, by_path.get(p.file or ""), named, shown, uses_limit(len(chosen)), removed_text, added_text)
        if not p.evidence:
            p = p._replace(evidence=_evidence(p, by_path.get(p.file or "")))
        if p.key in ("focus.largest", "focus.largest_symbols") and not p.params.get("names") and any(q.file == p.file for q in out):
            continue  # "+1/−1 lines here" next to a point on the same file says nothing new
        shown.update(str(n) for n in p.params.get("names", ()) or ())
        if p.symbol:
            shown.add(p.symbol)
        shown.update(p.params.get("uses", ()) or ())
        out.append(p)
    return tuple(out)


#: Exact changes a file's "largest change" point quotes.
_INNER_EDITS = 2


def _inner_edits(point: FocusPoint, f: FileAnalysis | None, stated: set[tuple[str, int]]) -> tuple[Any, ...]:
    """The weightiest exact changes of ``point``'s file (at most :data:`_INNER_EDITS`) that no
    other point states and that can affect existing code."""
    if f is None or not f.edits:
        return ()
    # An edit inside a definition the diff adds is new code, as for the edits' own points.
    fresh = {(f.path, d.name) for d in f.definitions_added}
    kept = [e for e in f.edits if e.consequence != "new_only" and e.kind != "lines" and (e.path, e.line or e.old_line) not in stated
            and not (fresh and in_new(e, fresh))]
    kept.sort(key=lambda e: -edit_weight(e, f.kind))
    return tuple(kept[:_INNER_EDITS])


def _implementation_first(chosen: list[FocusPoint], candidates: list[FocusPoint], kinds: Mapping[str, str]) -> list[FocusPoint]:
    """``chosen`` with the best point on a source file in it (last, replacing the lightest
    when full) when none is there: a feature written in Python with several config files
    is about its Python code, whatever the config points weigh."""
    if any(kinds.get(p.file or "") == "source" for p in chosen):
        return chosen
    best = next((p for p in candidates if kinds.get(p.file or "") == "source"), None)
    if best is None:
        return chosen
    return [*chosen[: MAX_FOCUS - 1], best]


def _evidence(point: FocusPoint, f: FileAnalysis | None) -> tuple[Evidence, ...]:
    """What a point without its own evidence rests on: the definitions it names (their
    lines), else the file's changed-line counts as GitHub reports them; a review thread
    or a design bullet rests on its words."""
    if point.key == "focus.thread":
        return (Evidence(point.file or "", int(point.params.get("line") or 0), int(point.params.get("line") or 0), source="review"),)
    if point.key == "focus.design":
        return (Evidence(point.file or "", new=str(point.params.get("text", "")), source="description"),)
    if f is None:
        return (Evidence(point.file or "", source="metadata"),)
    names = set(point.params.get("names", ()) or ()) | ({point.symbol} if point.symbol else set())
    lines = [d for d in f.definitions_added + f.definitions_modified + f.definitions_removed if d.name in names and d.line]
    if lines:
        return tuple(Evidence(f.path, d.line, d.line, new=d.name) for d in lines[:MAX_NAMES])
    return (Evidence(f.path, 0, 0, new=f"+{f.additions}/-{f.deletions}", source="metadata"),)


def _unfounded_note(note: Any, house: set[str], kinds: Mapping[str, str], is_config: IsConfig | None) -> bool:
    """A rule's note that would state what the diff does not back: one about a generated
    file (housekeeping), or one calling a field of a class that is not configuration a
    config key."""
    if note.file and note.file in house:
        return True
    if note.file and note.symbol and kinds.get(note.file) == "source":
        cls = note.symbol.rpartition(".")[0] or None
        return not (is_config is not None and is_config(note.file, cls))
    return False


_TEMPLATED = re.compile(r"[${}]")
#: Fact kinds whose several facts in one file are listed by name in one point.
_LISTED_FACTS = ("key_removed", "field_removed", "symbol_removed")


def _fact_points(
    analysis: DiffAnalysis,
    house: set[str],
    is_config: IsConfig | None,
    fact_files: set[str],
    renames: Mapping[str, tuple[tuple[str, str], ...]],
    named: set[str],
    behaviour: Sequence[Any],
    stated: set[tuple[str | None, int]] = frozenset(),
) -> list[FocusPoint]:
    """One point per file and kind of behaviour fact (the first fact named, the rest counted).

    ``behaviour`` is ``analysis.behaviour`` (a property the caller has built once);
    ``stated`` holds ``(path, line)`` of exact edits, whose checks and parameter defaults
    are not said twice."""
    groups: dict[tuple[str, str], list[Any]] = {}
    by_path = {f.path: f for f in analysis.files}
    facts = behaviour[:_MAX_FACTS]
    # A rename found by pairing is said once, by the file's own point (see _file_points).
    paired = {(path, old) for path, pairs in renames.items() for old, _ in pairs}
    for fact in facts:
        if fact.kind == "symbol_removed" and (fact.path, fact.symbol) in paired:
            continue
        f = by_path.get(fact.path)
        kind = f.kind if f is not None else None
        if fact.kind not in _FACT_POINTS or fact.kind in ENV_KINDS or fact.path in house or kind in ("test", "docs", "generated", "binary"):
            continue
        if kind == "ci" and not fact.kind.startswith("dep_"):
            continue
        if fact.kind.startswith("dep_") and _TEMPLATED.search(fact.symbol):
            continue  # `FROM ${BASE_IMAGE}`: a variable, not a dependency name
        if fact.kind == "dep_removed" and f is not None and install_script(fact.path) and named_on(fact.symbol, f.added_lines):
            continue  # the script still names it (built from source now): "no longer installs" would be false
        if fact.kind == "signature_changed" and fact.detail and not signature_detail(fact.detail):
            continue  # a return annotation is no contract: the code may have returned that shape before
        if fact.kind in ("check_added", "check_removed") and not _existing_function(fact.symbol, f):
            continue  # a check in a function this diff adds refuses nothing that used to pass
        if fact.kind == "check_removed" and not _existing_function(fact.symbol, f, removed=True):
            continue  # the whole function went (or moved): its removal is the point, not its checks
        if fact.kind in ("check_added", "check_removed") and (fact.path, fact.line) in stated:
            continue
        if fact.kind == "default_changed" and fact.symbol.endswith(")") and (fact.path, fact.line) in stated:
            continue
        groups.setdefault((fact.path, fact.kind), []).append(fact)
    out = []
    for (path, kind), facts in groups.items():
        fact = facts[0]
        key = _FACT_KEYS[kind]
        if kind in ("default_changed", "key_removed", "key_renamed", "field_removed"):
            f = by_path.get(path)
            config = f is not None and (f.kind == "config" or (is_config is not None and f.kind == "source" and is_config(path, fact.symbol.rpartition(".")[0] or None)))
            # In a config composed from others whose composition changed, a key that left this
            # file may come from another: say that it went, not that configs setting it fail.
            if not config or (f is not None and kind in ("key_removed", "default_changed") and not consequence_known(fact, f)) \
                    or (kind == "key_removed" and key_still_read(fact.symbol, analysis)):
                key += ".plain"
        elif kind in ("dep_added", "dep_removed", "dep_floor_raised") and install_script(path):
            # "no longer installs transformers==5.3.0", not "drops dependency"; an image's
            # floor binds what it installs, not users' installs ("older installs must upgrade", #3192).
            key += ".install"
        elif kind == "dep_pin_changed" and not fact.old:
            key = "focus.fact.dep_pinned"
        elif kind == "dep_pin_changed":
            f = by_path.get(path)
            bump = next((d.bump for d in f.dependency_changes if d.name == fact.symbol), "") if f is not None else ""
            if bump in ("major", "pre-1.0 minor", "commit"):
                key = {"major": "focus.fact.dep_pin_changed.major", "pre-1.0 minor": "focus.fact.dep_pin_changed.pre1", "commit": "focus.fact.dep_pin_changed.commit"}[bump]
        weight = _FACT_POINTS[kind]
        internal = kind == "symbol_renamed" and len(facts) == 1 and callers_rewritten(fact.old or fact.symbol, analysis)
        if internal:
            # The diff changes the references to the old name it has (#4222's one ``patch(...)``
            # line): said as that, not as callers who "must change".
            key = N_("focus.fact.symbol_renamed.rewritten")
        elif kind in _BREAKING_KINDS and fact.user_facing:
            weight += BREAKING_WEIGHT - FACT_WEIGHT
        params = {"name": fact.symbol, "old": fact.old, "new": fact.new, "detail": fact.detail, "count": len(facts)}
        if kind == "check_added" and fact.detail == "AssertionError":
            # An assert states what the code takes for granted (often what the branch it
            # sits in already implies): said as written, ranked below what changes behaviour.
            key, weight = "focus.fact.assert_added", ASSERT_WEIGHT
            params["code"] = assert_condition(fact.new)
        if len(facts) > 1 and kind in _LISTED_FACTS:
            # Several keys or symbols of one file gone: name a few (those the author names first).
            symbols = sorted(dict.fromkeys(x.symbol for x in facts), key=lambda n: (short_name(n) not in named and n not in named))
            key, params = f"{key}.many", {"names": tuple(symbols[:MAX_NAMES]), "count": len(symbols)}
        elif len(facts) > 1:
            params["similar"] = len(facts) - 1
        fact_files.add(path)
        evidence = tuple(Evidence(x.path, x.line, x.line, x.old, x.new) for x in facts[:MAX_NAMES])
        out.append(FocusPoint(path, fact.symbol, key, params, weight=weight, evidence=evidence))
    return out


def _has_facts(f: FileAnalysis) -> bool:
    """True when ``f`` has behaviour facts that stand for its own points (removed API,
    config keys, dependencies); environment variable facts do not."""
    behaviour = f.behaviour
    return bool(behaviour) and any(b.kind not in ENV_KINDS for b in behaviour)


#: Environment facts whose variables, found in the same files, share one point.
_ENV_MERGED = {("env_added", "read"), ("env_removed", "read")}


def _env_points(analysis: DiffAnalysis, behaviour: Sequence[Any], house: set[str], repository: str = "") -> list[FocusPoint]:
    """Points for environment variables read or set (:mod:`bot.engine.analysis.envvars`).

    ``behaviour`` is ``analysis.behaviour`` (source files first). One point per
    variable, kind of fact and value, however many files it is in (the
    point names the first file, source first, and counts the others); plain reads added
    or removed in the same files share one point ("now reads `A` (default `1`) and `B`").
    Only source, config, build and example files make points: tests, docs and CI set
    variables for themselves. ``repository`` (``owner/name``) tells which variables are
    the project's own (see :func:`bot.engine.analysis.envvars.breaks_users`).
    """
    files: dict[str, FileAnalysis] | None = None
    groups: dict[tuple[str, str, str, str, str], list[Any]] = {}
    for fact in behaviour:  # every fact, not the first 200: a point counts every file
        if fact.kind not in ENV_KINDS or fact.path in house:
            continue
        files = files if files is not None else {f.path: f for f in analysis.files}
        f = files.get(fact.path)
        if f is None or f.kind not in CODE_KINDS:
            continue
        groups.setdefault((fact.kind, fact.detail, fact.symbol, fact.old, fact.new), []).append(fact)
    if not groups or files is None:
        return []
    # Reads added (or removed) in exactly the same files are one change: say them together.
    merged: dict[tuple[Any, ...], list[list[Any]]] = {}
    for (kind, detail, *_rest), facts in groups.items():
        paths = tuple(dict.fromkeys(x.path for x in facts))
        key: tuple[Any, ...] = (kind, detail, paths) if (kind, detail) in _ENV_MERGED else (kind, detail, paths, facts[0].symbol, facts[0].old, facts[0].new)
        merged.setdefault(key, []).append(facts)
    out = []
    for key, members in merged.items():
        kind, detail, paths = key[0], key[1], key[2]
        fact = members[0][0]
        f = files[fact.path]
        weight = _FACT_POINTS[kind]
        if f.kind in ("build", "config"):
            weight = _ENV_BUILD_WEIGHT
        elif f.kind != "source":
            weight -= _ENV_SCRIPT_DISCOUNT
        elif f.status == "added":
            weight = _ENV_NEW_MODULE_WEIGHT
        elif breaks_users(fact, f.kind, f.status, repository):
            weight += BREAKING_WEIGHT - FACT_WEIGHT
        names = tuple(m[0].symbol for m in members)
        params: dict[str, Any] = {"name": fact.symbol, "old": fact.old, "new": fact.new, "count": len(names)}
        if (kind, detail) in _ENV_MERGED:
            msg = _FACT_KEYS[kind]
            if kind == "env_added":
                params["vars"] = tuple((m[0].symbol, m[0].new) for m in members[:MAX_NAMES])
            else:
                params["names"] = names[:MAX_NAMES]
        elif kind == "env_added" and detail == "default" and fact.new:
            msg = "focus.fact.env_added.setdefault"
        elif kind == "env_added" and detail == "default":
            msg, params["vars"] = _FACT_KEYS[kind], ((fact.symbol, ""),)
        else:
            # A value changed by setdefault reads like any changed default.
            suffix = ".set" if detail == "set" else ".setdefault" if detail == "default" and kind != "env_default_changed" else ""
            msg = _FACT_KEYS[kind] + suffix
        if len(paths) > 1:
            params["files"] = len(paths) - 1
        evidence = tuple(Evidence(m[0].path, m[0].line, m[0].line, m[0].old, m[0].new) for m in members[:MAX_NAMES])
        out.append(FocusPoint(fact.path, fact.symbol, msg, params, weight=weight, evidence=evidence))
    return out


def _leaf_keys(keys: list[str], named: set[str]) -> list[str]:
    """The keys a user sets: not a section that holds other new keys (``hybrid``
    beside ``hybrid.enable``), not ``_target_``; those the description names first."""
    prefixes = {k.rpartition(".")[0] for k in keys}
    leaves = [k for k in keys if k not in prefixes and short_name(k) != "_target_"] or keys
    return sorted(leaves, key=lambda k: short_name(k) not in named)


def _branches_do_nothing(snippet: str, added: Sequence[str]) -> bool:
    """True when the added ``if`` line ``snippet`` opens only empty branches (``if
    sys.version_info >= (3, 11): pass`` / ``else: pass``, #3295): no second version is served."""
    head = snippet.rstrip("…").strip()
    lines = [line.strip() for line in added]
    at = next((i for i, line in enumerate(lines) if line.startswith(head)), -1) if head else -1
    if at < 0:
        return False
    body = [line for line in lines[at + 1 : at + 6] if line]
    empty = ("pass", "...")
    if not body or body[0] not in empty:
        return False
    return len(body) < 2 or body[1] != "else:" or (len(body) > 2 and body[2] in empty)


def _existing_function(symbol: str, f: FileAnalysis | None, *, removed: bool = False) -> bool:
    """True when ``symbol`` (or the class holding it) is not one the diff adds in ``f``
    (with ``removed``: not one it removes, and ``f`` is not removed whole)."""
    if f is None or f.status == ("removed" if removed else "added"):
        return False
    added = {d.name for d in (f.definitions_removed if removed else f.definitions_added)}
    while symbol:
        if symbol in added:
            return False
        symbol = symbol.rpartition(".")[0]
    return True


def _file_points(
    f: FileAnalysis,
    is_config: IsConfig | None,
    fact_files: set[str],
    named: set[str],
    tested: set[str],
    has_facts: bool,
    described: int = 0,
    pairs: tuple[tuple[str, str], ...] = (),
) -> list[FocusPoint]:
    points: list[FocusPoint] = []
    code = f.kind in ("source", "example")
    renamed = {n for pair in pairs for n in pair}
    if pairs:
        fact_renames = {n for pair in f.renamed for n in pair}
        for old, new in pairs:
            if old not in fact_renames:  # the analysis's own renames arrive as behaviour facts
                points.append(FocusPoint(f.path, new, "focus.fact.symbol_renamed", {"old": old, "new": new}, weight=FACT_WEIGHT))
    # Files removed whole are summed up by folder in removed_trees(), not listed one by one;
    # behaviour facts already say what was removed or renamed.
    removed = [n for n in api_names(f.definitions_removed) if n not in renamed] if code and f.status != "removed" and not has_facts else []
    if removed:
        points.append(FocusPoint(f.path, removed[0], "focus.removed", {"names": tuple(removed[:MAX_NAMES]), "count": len(removed)}, weight=FACT_WEIGHT - 5))
    if f.kind not in ("test", "ci") and not has_facts:
        config = f.kind == "config"
        keys_removed = public_keys(f, f.config_keys_removed) if f.status != "removed" else []
        keys_added = public_keys(f, f.fields_added or f.config_keys_added) if f.kind == "source" else public_keys(f, f.config_keys_added)
        if f.kind == "source":
            keys_removed = public_keys(f, f.fields_removed or f.config_keys_removed) if f.status != "removed" else []
            config = is_config is not None and any(is_config(f.path, k.rpartition(".")[0] or None) for k in keys_added + keys_removed)
        suffix = "" if config else ".plain"
        if f.keys_moved:
            where = f.keys_moved[0][1]
            # Keys moved into the file (or base class) they now come from: said as a move, not a removal.
            gone = public_keys(f, [k for k, w in f.keys_moved if w == where])
            if gone:
                kind = "focus.config_moved" if f.kind == "config" else "focus.config_moved.fields"
                points.append(FocusPoint(f.path, gone[0], kind, {"names": tuple(gone[:MAX_NAMES]), "count": len(gone), "file": where}, weight=FACT_WEIGHT - 15))
        if keys_removed:
            points.append(FocusPoint(f.path, keys_removed[0], "focus.config_removed" + suffix, {"names": tuple(keys_removed[:MAX_NAMES]), "count": len(keys_removed)}, weight=FACT_WEIGHT - 10))
        if keys_added:
            keys_added = _leaf_keys(keys_added, named)
            points.append(FocusPoint(f.path, keys_added[0], "focus.config_added" + suffix, {"names": tuple(keys_added[:MAX_NAMES]), "count": len(keys_added)}, weight=RULE_NOTE_WEIGHT - 5 if config else API_WEIGHT - 5))
    if f.kind == "source":
        for shim in f.shims:
            what, _, snippet = shim.partition(": ")
            # A hasattr() probe is not evidence of a second version being served.
            if what in ("import fallback", "version check") and not _branches_do_nothing(snippet, f.added_lines):
                points.append(FocusPoint(f.path, None, "focus.shim", {"what": what, "code": snippet or what}, weight=API_WEIGHT + 5))
                break
    deps = [d for d in f.dependency_changes if not _TEMPLATED.search(d.name)]
    if deps and f.kind not in ("generated",) and not has_facts:
        dep = deps[0]
        key = "focus.dep_major" if dep_is_major(dep) else f"focus.dep_{dep.action}"
        points.append(
            FocusPoint(f.path, dep.name, key, {"name": dep.name, "old": dep.old_spec, "new": dep.new_spec, "count": len(f.dependency_changes)}, weight=DEP_WEIGHT)
        )
    added = [n for n in api_names(f.definitions_added) if n not in renamed] if code and f.kind == "source" else []
    if added:
        described_names = [n for n in added if short_name(n) in named]
        names = tuple(dict.fromkeys(described_names + added))[:MAX_NAMES]
        # New API the description names is what the change is about: it ranks with the facts.
        # Which of it is an entry point ("focus.added_called") is found for the points shown only.
        weight = FACT_WEIGHT + min(9, 3 * len(described_names)) if described_names else API_WEIGHT
        points.append(file_point(f.path, names[0], "focus.added", {"names": names, "count": len(added)}, weight))
    if f.prose_only and f.changes and f.status != "removed":
        # Reworded docstrings or dropped comments: said as such, after any point on code.
        points.append(FocusPoint(f.path, None, "focus.prose_only", {"additions": f.additions, "deletions": f.deletions}, weight=5))
    elif f.kind in CODE_KINDS and f.changes and f.status != "removed":
        # "+N lines, in A, B" says where the lines are: the new public definitions a point
        # above names are named here too (last), else the lines of a new function read as
        # the lines of the one enum value added beside it.
        added_set = set(added)
        symbols = tuple(s for s in f.symbols_touched if s not in added_set)
        # The symbols a reader must open first: those the title, description or new tests name.
        carried = tuple(s for s in symbols if short_name(s) in named or short_name(s).lower().lstrip("_") in tested) if named or tested else ()
        # Then the definitions this diff adds (private helpers included: they are new code to read).
        touched = set(symbols)
        new_defs = tuple(d.name for d in f.definitions_added if d.name in touched)
        symbols = tuple(dict.fromkeys(carried + new_defs + symbols + tuple(added)))
        count = len(symbols)  # more than the names shown: "…" says so
        symbols = symbols[:MAX_NAMES]
        key = "focus.largest_symbols" if symbols else "focus.largest"
        weight = min(50, 20 + f.changes // 10)
        if described:
            weight = CARRIER_WEIGHT + 5 + min(9, described)
        elif f.kind == "source" and (carried or f.path in fact_files):
            weight = CARRIER_WEIGHT + min(9, 3 * sum(1 for s in carried if short_name(s) in named))
        elif f.kind != "source":
            weight = min(weight, 35)
        if f.quote is not None and not points:
            points.append(quote_point(f.quote, weight))
        else:
            points.append(file_point(f.path, symbols[0] if symbols else None, key, {"additions": f.additions, "deletions": f.deletions, "names": symbols, "count": count}, weight))
    elif f.kind in ("ci", "docs", "test") and f.changes and f.status != "removed" and not f.tests_added:
        symbols = tuple(f.symbols_touched[:MAX_NAMES]) if f.kind == "test" else ()
        key = "focus.largest_symbols" if symbols else "focus.largest"
        weight = min(15, 5 + f.changes // 20)
        if f.quote is not None and f.kind != "test" and not points:
            points.append(quote_point(f.quote, weight))
        else:
            points.append(file_point(f.path, symbols[0] if symbols else None, key, {"additions": f.additions, "deletions": f.deletions, "names": symbols}, weight))
    if f.tests_added:
        points.append(FocusPoint(f.path, f.tests_added[0], "focus.tests", {"names": tuple(f.tests_added[:2]), "count": len(f.tests_added)}, weight=40))
    return points



