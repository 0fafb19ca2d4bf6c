"""What a reader should look at: focus points, review highlights and follow-ups.

Pure. Like :mod:`bot.classify`, sentences are message keys and parameters, except
rule-written focus notes, which arrive already written in each language.

Focus points are ranked by meaning: behaviour and breaking facts first (a changed
default, a removed key, a renamed function, a new hard error, a raised dependency
floor); then the symbols that carry the change (where those facts are, what the title
and description name, what the added tests exercise); then rule notes and new public
API; then the largest remaining changes and tests. Environment variables read or set
(:mod:`bot.analysis.envvars`) make one point per variable however many files hold it.
Housekeeping -- generated and lock files, CI image bumps, CODEOWNERS, formatting- or
comment-only files -- is never a numbered point: :func:`housekeeping` sums it up in
one line. At most :data:`MAX_FOCUS` points, at most two per file.

A reason states a meaning only with evidence: "compatibility" only for import
fallbacks and version checks, "config key" only for keys of config files or of
classes the rules mark as configuration, "entry point" only for a new symbol the
diff calls or registers; otherwise plain words ("new function `x`").
"""

from __future__ import annotations

import functools
import keyword
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from bot.analysis.envvars import ENV_KINDS, breaks_users
from bot.analysis.model import Definition, DependencyChange, DiffAnalysis, FileAnalysis
from bot.rules.model import RuleHit
from bot.snapshot import PullRequestSnapshot

_TODO_PREFIX = re.compile(r"^\s*(TODO|FIXME|XXX|HACK)\b\s*(\([^)]*\))?\s*:?\s*", re.IGNORECASE)

MAX_FOCUS = 6
MAX_PER_FILE = 2
MAX_NAMES = 3
#: Weights of the tiers, highest first (they only order points).
BREAKING_WEIGHT = 120
FACT_WEIGHT = 100
CARRIER_WEIGHT = 90
RULE_NOTE_WEIGHT = 75
API_WEIGHT = 60
DEP_WEIGHT = 55
IsConfig = Callable[[str, "str | None"], bool]


#: The empty mapping a point without params or text shares (read-only, so sharing is safe).
_NOTHING: Mapping[str, Any] = MappingProxyType({})


class FocusPoint(NamedTuple):
    """One numbered point of the guide.

    ``file``/``symbol`` name what to open; ``key``/``params`` say why (a message key),
    or ``text`` holds a rule's own note by language. ``weight`` only orders points.
    A named tuple: every changed file offers a few candidates (thousands on a big
    pull request) and frozen dataclasses cost several times more to build.
    """

    file: str | None
    symbol: str | None
    key: str | None = None
    params: Mapping[str, Any] = _NOTHING
    text: Mapping[str, str] = _NOTHING
    weight: int = 0


@dataclass(frozen=True, slots=True)
class Thread:
    """A review-comment thread: where, how many comments, who, and its opening words."""

    path: str
    line: int | None
    comments: int
    participants: tuple[str, ...]
    opening: str
    has_suggestion: bool
    author_replied: bool


@dataclass(frozen=True, slots=True)
class ReviewSummary:
    """Review facts: each reviewer's last decisive state, and the busiest threads first."""

    reviewers: tuple[tuple[str, str, bool], ...] = ()
    threads: tuple[Thread, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nobody reviewed or commented on the diff."""
        return not self.reviewers and not self.threads


@dataclass(frozen=True, slots=True)
class FollowUp:
    """Something left to do after the merge (a message key and its parameters)."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None


#: The groups of :class:`Housekeeping`, in field order (each a message ``house.<group>``).
HOUSEKEEPING_GROUPS = ("generated", "locks", "images", "owners", "formatting", "comments")


@dataclass(frozen=True, slots=True)
class Housekeeping:
    """Changes nobody needs to read line by line, by what they are.

    Each field holds paths: ``generated`` (generated files), ``locks`` (lock files),
    ``images`` (CI files that only move an image or version tag), ``owners``
    (CODEOWNERS), ``formatting`` (only whitespace or line breaks changed),
    ``comments`` (only comments changed).
    """

    generated: tuple[str, ...] = ()
    locks: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    formatting: tuple[str, ...] = ()
    comments: tuple[str, ...] = ()

    def groups(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """``(field name, paths)`` of every group, in field order (empty groups included)."""
        return tuple((name, getattr(self, name)) for name in HOUSEKEEPING_GROUPS)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path, in field order."""
        return tuple(path for _, paths in self.groups() for path in paths)

    def __bool__(self) -> bool:
        return bool(self.paths)


#: Behaviour fact kinds that make a point, and the weight of each (breaking facts rank higher).
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
#: Facts read per pull request: a 3,000-file refactor has thousands, and six points are shown.
_MAX_FACTS = 200
_CODE_KINDS = ("source", "config", "build", "example")


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
    ``description`` (:class:`bot.analysis.description.Description`) offers its design
    bullets as points, on the file whose changed lines hold what they name.
    """
    hk = house_files if house_files is not None else housekeeping(analysis)
    renames = rename_map(analysis) if renames is None else renames
    house = set(hk.paths)
    kinds = {f.path: f.kind for f in analysis.files}
    named = _named_in_text(snapshot, description) if snapshot is not None else set()
    tested = _tested_names(analysis)
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
    candidates.extend(_fact_points(analysis, house, is_config, fact_files, renames, named, behaviour))
    if behaviour:
        candidates.extend(_env_points(analysis, behaviour, house, getattr(snapshot, "repository", "") or ""))
    texts = _changed_texts(analysis, house) if named or getattr(description, "design_points", ()) else {}
    described = _described_files(texts, named)
    candidates.extend(_design_points(texts, description))
    for f in analysis.files:
        if f.path in house:
            continue
        candidates.extend(
            _file_points(f, is_config, fact_files, named, tested, _has_facts(f), described.get(f.path, 0), renames.get(f.path, ()))
        )
    candidates.extend(_removed_trees(analysis))
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
    for point in candidates:
        # The same file and symbol said twice (a rule's note and a built-in point) is one point.
        ident = (point.file, point.symbol) if point.symbol else (point.file, point.key or next(iter(point.text.values()), None))
        if ident in seen or (point.file and per_file[point.file] >= MAX_PER_FILE):
            continue
        seen.add(ident)
        per_file[point.file] += 1
        chosen.append(point)
        if len(chosen) == MAX_FOCUS:
            break
    by_path = {f.path: f for f in analysis.files}
    # Which new API is an entry point is only worth finding out for the points shown.
    added_names = {n for p in chosen if p.key == "focus.added" for n in p.params.get("names", ())}
    entries = _entry_points(analysis, added_names)
    shown: set[str] = set()
    out = []
    for p in chosen:
        if p.key == "focus.added" and entries.intersection(p.params.get("names", ())):
            names = tuple(dict.fromkeys([n for n in p.params["names"] if n in entries] + list(p.params["names"])))
            p = FocusPoint(p.file, p.symbol, "focus.added_called", {**p.params, "names": names}, p.text, p.weight)
        # A name already shown by an earlier point is not repeated: three config files
        # with the same new keys say them once.
        p = _with_uses(p, by_path.get(p.file or ""), named, shown, _uses_limit(len(chosen)))
        if p.key in ("focus.largest", "focus.largest_symbols") and not p.params.get("names") and any(q.file == p.file for q in out):
            continue  # "+1/−1 lines here" next to a point on the same file says nothing new
        shown.update(str(n) for n in p.params.get("names", ()) or ())
        if p.symbol:
            shown.add(p.symbol)
        shown.update(p.params.get("uses", ()) or ())
        out.append(p)
    return tuple(out)


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
) -> list[FocusPoint]:
    """One point per file and kind of behaviour fact (the first fact named, the rest counted).

    ``behaviour`` is ``analysis.behaviour`` (a property the caller has built once)."""
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
        if fact.kind in ("check_added", "check_removed") and not _existing_function(fact.symbol, f):
            continue  # a check in a function this diff adds refuses nothing that used to pass
        groups.setdefault((fact.path, fact.kind), []).append(fact)
    out = []
    for (path, kind), facts in groups.items():
        fact = facts[0]
        key = _FACT_KEYS[kind]
        if kind in ("default_changed", "key_removed", "key_renamed", "field_removed"):
            f = by_path.get(path)
            config = f is not None and (f.kind == "config" or (is_config is not None and f.kind == "source" and is_config(path, fact.symbol.rpartition(".")[0] or None)))
            if not config:
                key += ".plain"
        elif kind == "dep_pin_changed" and not fact.old:
            key = "focus.fact.dep_pinned"
        elif kind == "dep_pin_changed":
            f = by_path.get(path)
            bump = next((d.bump for d in f.dependency_changes if d.name == fact.symbol), "") if f is not None else ""
            if bump in ("major", "pre-1.0 minor", "commit"):
                key = {"major": "focus.fact.dep_pin_changed.major", "pre-1.0 minor": "focus.fact.dep_pin_changed.pre1", "commit": "focus.fact.dep_pin_changed.commit"}[bump]
        weight = _FACT_POINTS[kind]
        if kind in _BREAKING_KINDS and fact.user_facing:
            weight += BREAKING_WEIGHT - FACT_WEIGHT
        params = {"name": fact.symbol, "old": fact.old, "new": fact.new, "detail": fact.detail, "count": len(facts)}
        if len(facts) > 1 and kind in _LISTED_FACTS:
            # Several keys or symbols of one file gone: name a few (those the author names first).
            symbols = sorted(dict.fromkeys(x.symbol for x in facts), key=lambda n: (_short(n) not in named and n not in named))
            key, params = f"{key}.many", {"names": tuple(symbols[:MAX_NAMES]), "count": len(symbols)}
        elif len(facts) > 1:
            params["similar"] = len(facts) - 1
        fact_files.add(path)
        out.append(FocusPoint(path, fact.symbol, key, params, weight=weight))
    return out


def _has_facts(f: FileAnalysis) -> bool:
    """True when ``f`` has behaviour facts that stand for its own points (removed API,
    config keys, dependencies); environment variable facts do not."""
    behaviour = f.behaviour
    return bool(behaviour) and any(b.kind not in ENV_KINDS for b in behaviour)


#: Environment facts whose variables, found in the same files, share one point.
_ENV_MERGED = {("env_added", "read"), ("env_removed", "read")}


def _env_points(analysis: DiffAnalysis, behaviour: Sequence[Any], house: set[str], repository: str = "") -> list[FocusPoint]:
    """Points for environment variables read or set (:mod:`bot.analysis.envvars`).

    ``behaviour`` is ``analysis.behaviour`` (source files first). One point per
    variable, kind of fact and value, however many files it is in (the
    point names the first file, source first, and counts the others); plain reads added
    or removed in the same files share one point ("now reads `A` (default `1`) and `B`").
    Only source, config, build and example files make points: tests, docs and CI set
    variables for themselves. ``repository`` (``owner/name``) tells which variables are
    the project's own (see :func:`bot.analysis.envvars.breaks_users`).
    """
    files: dict[str, FileAnalysis] | None = None
    groups: dict[tuple[str, str, str, str, str], list[Any]] = {}
    for fact in behaviour:  # every fact, not the first 200: a point counts every file
        if fact.kind not in ENV_KINDS or fact.path in house:
            continue
        files = files if files is not None else {f.path: f for f in analysis.files}
        f = files.get(fact.path)
        if f is None or f.kind not in _CODE_KINDS:
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
        out.append(FocusPoint(fact.path, fact.symbol, msg, params, weight=weight))
    return out


def _entry_points(analysis: DiffAnalysis, called: set[str]) -> set[str]:
    """Of the new symbols ``called``, those that are an entry point of the change: called
    from another file's added lines (the change wires them in) or registered by a
    ``@...register...`` decorator. A helper only its own new file calls is structure,
    not an entry point."""
    if not called:
        return set()
    out: set[str] = set()
    home = {d.name: f.path for f in analysis.files for d in f.definitions_added if d.name in called}
    everything = "\n".join([line for f in analysis.files[:_MAX_DESCRIBED_FILES] if f.kind not in ("docs", "generated", "binary") for line in f.added_lines])
    for name in called:
        short = _short(name)
        if len(short) < 6 or short in _GENERIC_NAMES or everything.count(short) < 2:
            continue  # `main(` in another file is more likely another `main`; one mention is the definition
        call = re.compile(rf"(?<![\w.])(?:[\w.]*\.)?{re.escape(short)}\s*\(|[\"']{re.escape(short)}[\"']|@{re.escape(short)}\b")
        register = re.compile(rf"@[\w.]*regist\w*[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async\s+)?(?:def|class)\s+{re.escape(short)}\b")
        for f in analysis.files[:_MAX_DESCRIBED_FILES]:
            if f.kind in ("docs", "generated", "binary") or not f.added_lines:
                continue
            if f.path != home.get(name):
                if any(call.search(line) for line in f.added_lines if short in line):
                    out.add(name)
                    break
            elif "regist" in "\n".join(f.added_lines) and register.search("\n".join(f.added_lines)):
                out.add(name)
                break
    return out


#: Names too common for a call in another file to be a call of *this* definition.
_GENERIC_NAMES = frozenset({"main", "run", "setup", "build", "apply", "create", "forward", "update", "process", "execute", "start", "launch", "handler", "wrapper", "helper", "compute"})


def rename_map(analysis: DiffAnalysis) -> dict[str, tuple[tuple[str, str], ...]]:
    """:func:`renamed_pairs` of every source or example file that has any, by path.

    Computed once per guide (classification and focus points both use it)."""
    out = {}
    for f in analysis.files:
        if f.kind in ("source", "example") and ((f.definitions_removed and f.definitions_added) or f.renamed):
            pairs = renamed_pairs(f)
            if pairs:
                out[f.path] = pairs
    return out


def renamed_pairs(f: FileAnalysis) -> tuple[tuple[str, str], ...]:
    """``(old, new)`` names of definitions ``f`` renames: those the analysis found, and a
    public definition removed where one of the same kind is added whose name shares its
    last two words or more (``clear_rocm_attention_weight_caches`` ->
    ``refresh_rocm_attention_weight_caches``), one pair per name."""
    pairs = list(f.renamed)
    if f.definitions_removed and f.definitions_added and f.status != "removed":
        removed_tails = {_tail2(d.name) for d in f.definitions_removed if "_" in d.name}
        if not removed_tails.intersection(_tail2(d.name) for d in f.definitions_added if "_" in d.name):
            return tuple(pairs)
        taken = {n for pair in pairs for n in pair}
        # Candidates are indexed by their last two words, so a file is read once.
        by_tail: dict[tuple[str, ...], list[Definition]] = defaultdict(list)
        for d in f.definitions_added:
            if d.name not in taken and "_" in d.name and d.public:
                by_tail[tuple(_short(d.name).lower().rsplit("_", 2)[-2:])].append(d)
        if by_tail:
            for old in f.definitions_removed:
                if old.name in taken or "_" not in old.name or not old.public:
                    continue
                tail = tuple(_short(old.name).lower().rsplit("_", 2)[-2:])
                matches = [d for d in by_tail.get(tail, ()) if d.kind == old.kind and d.name not in taken and _shared_tail(old.name, d.name)]
                if len(matches) == 1:
                    pairs.append((old.name, matches[0].name))
                    taken.update((old.name, matches[0].name))
    return tuple(pairs)


def _tail2(name: str) -> tuple[str, ...]:
    return tuple(name[name.rfind(".") + 1 :].lower().rsplit("_", 2)[-2:])


def _shared_tail(a: str, b: str) -> bool:
    """True when two names end in the same two or more ``_`` words, covering most of each."""
    wa, wb = _short(a).lower().split("_"), _short(b).lower().split("_")
    shared = 0
    while shared < min(len(wa), len(wb)) and wa[-1 - shared] == wb[-1 - shared]:
        shared += 1
    return shared >= 2 and shared * 2 > max(len(wa), len(wb)) - 1 and a != b


def _existing_function(symbol: str, f: FileAnalysis | None) -> bool:
    """True when ``symbol`` (or the class holding it) is not one the diff adds in ``f``."""
    if f is None or f.status == "added":
        return False
    added = {d.name for d in f.definitions_added}
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
        if keys_removed:
            points.append(FocusPoint(f.path, keys_removed[0], "focus.config_removed" + suffix, {"names": tuple(keys_removed[:MAX_NAMES]), "count": len(keys_removed)}, weight=FACT_WEIGHT - 10))
        if keys_added:
            points.append(FocusPoint(f.path, keys_added[0], "focus.config_added" + suffix, {"names": tuple(keys_added[:MAX_NAMES]), "count": len(keys_added)}, weight=RULE_NOTE_WEIGHT - 5 if config else API_WEIGHT - 5))
    if f.kind == "source":
        for shim in f.shims:
            what, _, snippet = shim.partition(": ")
            # A hasattr() probe is not evidence of a second version being served.
            if what in ("import fallback", "version check"):
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
        described_names = [n for n in added if _short(n) in named]
        names = tuple(dict.fromkeys(described_names + added))[:MAX_NAMES]
        # New API the description names is what the change is about: it ranks with the facts.
        # Which of it is an entry point ("focus.added_called") is found for the points shown only.
        weight = FACT_WEIGHT + min(9, 3 * len(described_names)) if described_names else API_WEIGHT
        points.append(FocusPoint(f.path, names[0], "focus.added", {"names": names, "count": len(added)}, weight=weight))
    if f.kind in _CODE_KINDS and f.changes and f.status != "removed":
        added_set = set(added)
        symbols = tuple(s for s in f.symbols_touched if s not in added_set)
        # The symbols a reader must open first: those the title, description or new tests name.
        carried = tuple(s for s in symbols if _short(s) in named or _short(s).lower().lstrip("_") in tested) if named or tested else ()
        # Then the definitions this diff adds (private helpers included: they are new code to read).
        touched = set(symbols)
        new_defs = tuple(d.name for d in f.definitions_added if d.name in touched)
        symbols = tuple(dict.fromkeys(carried + new_defs + symbols))[:MAX_NAMES]
        key = "focus.largest_symbols" if symbols else "focus.largest"
        weight = min(50, 20 + f.changes // 10)
        if described:
            weight = CARRIER_WEIGHT + 5 + min(9, described)
        elif f.kind == "source" and (carried or f.path in fact_files):
            weight = CARRIER_WEIGHT + min(9, 3 * sum(1 for s in carried if _short(s) in named))
        elif f.kind != "source":
            weight = min(weight, 35)
        points.append(FocusPoint(f.path, symbols[0] if symbols else None, key, {"additions": f.additions, "deletions": f.deletions, "names": symbols}, weight=weight))
    elif f.kind in ("ci", "docs", "test") and f.changes and f.status != "removed" and not f.tests_added:
        symbols = tuple(f.symbols_touched[:MAX_NAMES]) if f.kind == "test" else ()
        key = "focus.largest_symbols" if symbols else "focus.largest"
        points.append(FocusPoint(f.path, symbols[0] if symbols else None, key, {"additions": f.additions, "deletions": f.deletions, "names": symbols}, weight=min(15, 5 + f.changes // 20)))
    if f.tests_added:
        points.append(FocusPoint(f.path, f.tests_added[0], "focus.tests", {"names": tuple(f.tests_added[:2]), "count": len(f.tests_added)}, weight=40))
    return points


#: Files searched for the identifiers a description names (a 3,000-file PR has no time for more).
_MAX_DESCRIBED_FILES = 300


_SPAN_NAME = re.compile(r"`([^`\n]{3,80})`")
#: Design bullets read per description.
_MAX_DESIGN = 8


def _design_points(texts: Mapping[str, str], description: Any) -> list[FocusPoint]:
    """The author's design bullets that name code the diff changes, each on the file
    whose changed lines hold the first such name (a bullet naming nothing found is left out)."""
    bullets = getattr(description, "design_points", ())[:_MAX_DESIGN]
    if not bullets:
        return []
    out = []
    for bullet in bullets:
        names = [n.strip().rstrip("()") for n in _SPAN_NAME.findall(bullet)] or [w for w in _WORD.findall(bullet) if _CODE_LIKE.search(w)]
        for name in names:
            path = next((p for p, text in texts.items() if len(name) >= 4 and name in text), None)
            if path:
                out.append(FocusPoint(path, name, "focus.design", {"text": bullet}, weight=CARRIER_WEIGHT - 2))
                break
    return out


def _changed_texts(analysis: DiffAnalysis, house: set[str]) -> dict[str, str]:
    """The changed lines of source, config and build files, joined per file."""
    return {
        f.path: "\n".join(f.added_lines[:600] + f.removed_lines[:600])
        for f in analysis.files[:_MAX_DESCRIBED_FILES]
        if f.kind in ("source", "config", "build") and f.path not in house and (f.added_lines or f.removed_lines)
    }


def _described_files(texts: Mapping[str, str], named: set[str]) -> dict[str, int]:
    """How many identifiers the title or description names appear in the changed lines
    of each source, config or build file (the author's own pointers, checked against
    the diff); files with fewer than two are left out."""
    wanted = sorted(n for n in named if len(n) >= 5 and "/" not in n)[:80]
    if not wanted:
        return {}
    scored = {}
    for path, text in texts.items():
        present = [n for n in wanted if n in text]
        found = [n for n in present if not any(n != m and n in m for m in present)] if len(present) >= 2 else present
        if len(found) >= 2:
            scored[path] = len(found)
    return scored


def _short(name: str) -> str:
    return name.rpartition(".")[2]


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.\-/][A-Za-z_][A-Za-z0-9_]*)*")
_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|\.|\(\)")


def _named_in_text(snapshot: PullRequestSnapshot, description: Any = None) -> set[str]:
    """Identifiers the title and description name: snake/Camel/dotted words and ALL_CAPS
    names, each also by its dotted components. The description is read without its
    template's boilerplate when ``description`` (a parsed one) is given."""
    sections = getattr(description, "sections", None)
    body = "\n".join(v for k, v in sections.items() if k != "checklist") if sections else (snapshot.body or "")
    text = f"{snapshot.title}\n{body[:8_000]}"
    out: set[str] = set()
    for token in set(_WORD.findall(text)):
        if len(token) >= 4 and _names_code(token):
            out.add(token)
            if "." in token:
                out.update(p for p in token.split(".") if _names_code(p))
    return out


#: Words remembered by the per-word verdicts below: the same words recur in every
#: title, description and diff of a project, and the bound keeps untrusted text from
#: growing the caches without end.
_WORD_CACHE = 50_000


@functools.lru_cache(maxsize=_WORD_CACHE)
def _names_code(word: str) -> bool:
    """True for a snake_case, CamelCase, dotted or ``name()`` word, or an ALL_CAPS name."""
    return bool(_CODE_LIKE.search(word) or _CAPS.match(word))


def _tested_names(analysis: DiffAnalysis) -> set[str]:
    """Lower-cased words of added test names (``test_save_ckpt_async`` -> ``save_ckpt_async``, ...),
    used to find the functions the tests exercise."""
    out: set[str] = set()
    names = [n for f in analysis.files for n in f.tests_added[:40]][:80]
    for name in names:
        base = _short(name).lower()
        base = base[5:] if base.startswith("test_") else base
        parts = base.split("_")[:12]
        for i in range(len(parts)):
            for j in range(i + 2, min(len(parts), i + 4) + 1):
                out.add("_".join(parts[i:j]))
            if len(parts[i]) >= 5:
                out.add(parts[i])
    return out


_TOKEN = re.compile(r"/?[A-Za-z_][A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*|\d+(?:\.\d+)+(?:[.\-]?[A-Za-z]\w*)?")
#: A name given a value or defined on a line: ``NAME = ...``, ``name: int = ...``, ``def name(``.
_DEFINED = re.compile(r"^\s*(?:def |class |async def )?([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:=(]|$)")
_CAPS = re.compile(r"^[A-Z][A-Z0-9_]{4,}$")
_STOP = frozenset(keyword.kwlist) | {
    "self", "None", "True", "False", "print", "range", "return", "isinstance", "getattr", "setattr", "hasattr",
    "kwargs", "args", "torch", "from", "import", "else", "elif", "raise", "assert", "lambda", "logger",
    "ImportError", "ValueError", "TypeError", "KeyError", "RuntimeError", "AttributeError", "Exception",
}


#: Lines per side read for the names a change brings in.
_MAX_TOKEN_LINES = 100


def introduced_names(f: FileAnalysis, named: set[str] = frozenset(), limit: int = 3) -> tuple[str, ...]:
    """Code-like names (``snake_case``, ``CamelCase``, ``dotted.names``, ``kebab-names``)
    that the added lines of ``f`` bring in and its removed lines did not have, then those
    the removed lines had and the added lines dropped; names the title or description
    use first. At most ``limit``."""
    if not f.added_lines and not f.removed_lines:
        return ()
    added_text = "\n".join(x for x in f.added_lines[:_MAX_TOKEN_LINES] if not _COMMENT.match(x))
    removed_text = "\n".join(x for x in f.removed_lines[:_MAX_TOKEN_LINES] if not _COMMENT.match(x))
    plus = _tokens(added_text, named)
    minus = _tokens(removed_text, named)
    new = [t for t in plus if t not in minus]
    gone = [t for t in minus if t not in plus]
    # Names on both sides are worth showing when the author names them, or when the
    # change is too small to bring in names of its own.
    kept = [t for t in plus if t in minus and (t in named or _short(t) in named or len(new) + len(gone) < limit)]
    touched = set(f.symbols_touched)
    defined = {m.group(1) for line in f.added_lines[:_MAX_TOKEN_LINES] for m in [_DEFINED.match(line)] if m}
    ranked = sorted(
        dict.fromkeys(new + gone + kept),
        key=lambda t: (-(t in named), -(t in defined and t in new), -(plus.get(t, 0) + minus.get(t, 0)), -(t in new)),
    )
    return tuple(t for t in ranked if t not in touched)[:limit]


def _tokens(text: str, named: set[str] = frozenset()) -> dict[str, int]:
    """Code-like words of ``text`` and how often they occur. A dotted chain
    (``logits.full_tensor``) counts as its parts unless the description names it whole
    (``ast.literal_eval``)."""
    if "://" in text:
        # A URL stands for what it names last: a repository, a file, a page.
        text = _URL.sub(lambda m: " " + re.sub(r"\.git$", "", m.group(1)) + " ", text)
    counts: dict[str, int] = {}
    for token, n in Counter(_TOKEN.findall(text)).items():
        if len(token) < 4:
            continue
        if token[0] == "/" and not _starts_a_line(token, text):
            token = token[1:]  # a path inside an argument, not a path of its own
        whole, whole_ok, parts = _forms(token)
        if parts is None or whole in named:
            parts = (whole,) if whole_ok else ()
        for part in parts:
            counts[part] = counts.get(part, 0) + n
    return counts


@functools.lru_cache(maxsize=_WORD_CACHE)
def _forms(token: str) -> tuple[str, bool, tuple[str, ...] | None]:
    """How :func:`_tokens` counts ``token``: ``(word, word is code-like, its code-like
    dotted parts or None)``; the parts count instead of the word unless the title or
    description names the word. A URL-ish token counts as nothing."""
    if "www." in token or token.startswith(("http", "/www")):
        return "", False, ()
    token = token.rstrip("./-").lstrip(".-")
    parts = None
    if "." in token and not _VERSIONISH.search(token):
        parts = tuple(p for p in token.split(".") if _code_like(p))
    return token, _code_like(token), parts


def _starts_a_line(token: str, text: str) -> bool:
    """True when ``token`` begins a line of ``text``, after spaces or tabs only."""
    pos = text.find(token)
    while pos >= 0:
        if not text[text.rfind("\n", 0, pos) + 1 : pos].strip(" \t"):
            return True
        pos = text.find(token, pos + 1)
    return False


_CODEISH = re.compile(r"_|[a-z][A-Z]|\.|\(\)|-|\d|^[A-Z][A-Z0-9_]{4,}$|[A-Z].*[a-z].*[A-Z]")


@functools.lru_cache(maxsize=_WORD_CACHE)
def _code_like(word: str) -> bool:
    """True for a word that reads as code: snake_case, CamelCase, dotted, kebab, with digits, ALL_CAPS."""
    return len(word) >= 4 and word not in _STOP and _CODEISH.search(word) is not None


_URL = re.compile(r"(?:https?|git|ssh)://[^\s\"'`<>()]*?([^/\s\"'`<>()#?]+)/?(?=[\s\"'`<>()#?]|$)")
_VERSIONISH = re.compile(r"^\d|\.\d")


def _uses_limit(points: int) -> int:
    """Names a point may add: four, and more when there are few points (a one-file fix
    has room to say more about its one file)."""
    return max(4, 9 - points)


_USES_KEYS = {"focus.largest": "focus.largest_uses", "focus.largest_symbols": "focus.largest_symbols_uses", "focus.tests": "focus.tests_uses"}


def _with_uses(point: FocusPoint, f: FileAnalysis | None, named: set[str], shown: set[str] = frozenset(), limit: int = 4) -> FocusPoint:
    """A "largest change" or tests point also names what the change brings in or drops
    (names in ``shown`` left out)."""
    if f is None or point.key not in _USES_KEYS or point.text:
        return point
    if point.key == "focus.tests":
        limit = min(limit, 3)
        shown = set(shown) | {_short(t) for t in f.tests_added}
    uses = tuple(n for n in introduced_names(f, named, limit + len(shown)) if n not in shown)[:limit]
    if not uses:
        return point
    key = _USES_KEYS[point.key]
    return FocusPoint(point.file, point.symbol, key, {**point.params, "uses": uses}, point.text, point.weight)


_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


def major_bump(old: str, new: str) -> bool:
    """True when two version specs differ in their major version; ``0.x`` -> ``0.y`` is
    not one (it is a pre-1.0 minor move).

    ``"==0.27.0"`` -> ``">=1.10.0"`` is a major bump; ``"2.1"`` -> ``"2.4"`` and
    ``"0.23.0"`` -> ``"0.24.0"`` are not.
    """
    a, b = _VERSION.search(old or ""), _VERSION.search(new or "")
    if not a or not b:
        return False
    return a.group(1) != b.group(1)


def dep_is_major(dep: DependencyChange) -> bool:
    """True when a dependency change is a major bump: its ``bump`` says so, or, when the
    analysis could not tell (``bump == ""``), :func:`major_bump` of its two specs does."""
    return dep.bump == "major" if dep.bump else major_bump(dep.old_spec, dep.new_spec)


def _removed_trees(analysis: DiffAnalysis) -> list[FocusPoint]:
    """One point per folder that lost code files whole (a move or a deletion), biggest first."""
    groups: dict[str, list[FileAnalysis]] = defaultdict(list)
    for f in analysis.files:
        if f.status == "removed" and f.kind in ("source", "example", "test", "docs"):
            parts = f.path.split("/")
            groups["/".join(parts[:2]) + "/" if len(parts) > 2 else (parts[0] + "/" if len(parts) > 1 else f.path)].append(f)
    points = []
    for folder, files in sorted(groups.items(), key=lambda kv: -sum(f.deletions for f in kv[1])):
        lines = sum(f.deletions for f in files)
        if lines >= 20:
            biggest = sorted(files, key=lambda f: -f.deletions)[:MAX_NAMES]
            names = tuple(f.path.rsplit("/", 1)[-1] for f in biggest)
            docs_only = all(f.kind == "docs" for f in files)
            key = "focus.removed_tree.docs" if docs_only else "focus.removed_tree"
            points.append(FocusPoint(folder, None, key, {"count": len(files), "lines": lines, "names": names}, weight=API_WEIGHT - 10 if docs_only else FACT_WEIGHT - 2))
    return points[:3]


_LOCK = re.compile(r"(^|/)([^/]*[.-]lock(\.json|\.yaml)?|go\.sum|Gemfile\.lock|composer\.lock|uv\.lock|poetry\.lock|Cargo\.lock|pnpm-lock\.yaml|package-lock\.json)$")
_OWNERS = re.compile(r"(^|/)CODEOWNERS$")
_IMAGE_LINE = re.compile(r"^\s*[-\w\"' ]*(image|container|FROM|docker|tag|version)\b.*[:=@ ]\s*\S*\d", re.IGNORECASE)
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|<!--|;)")


def is_lock_file(path: str) -> bool:
    """True for dependency lock files (``uv.lock``, ``package-lock.json``, ``go.sum``...)."""
    return ("lock" in path or path.endswith("go.sum")) and bool(_LOCK.search(path))


def housekeeping(analysis: DiffAnalysis) -> Housekeeping:
    """The changed files nobody needs to read line by line, by what they are (see
    :class:`Housekeeping`). A file is in at most one group."""
    groups: dict[str, list[str]] = defaultdict(list)
    read = 0
    for f in analysis.files:
        if not f.changes:
            continue
        if f.kind in _CODE_KINDS or f.kind == "test":
            # Formatting and comment checks read lines: the first files are enough to find
            # the ones worth naming (a 3,000-file PR shows six points).
            read += 1
            if read > _MAX_DESCRIBED_FILES:
                continue
        if is_lock_file(f.path):
            groups["locks"].append(f.path)
        elif f.kind == "generated":
            groups["generated"].append(f.path)
        elif _OWNERS.search(f.path):
            groups["owners"].append(f.path)
        elif f.kind == "binary" or f.status in ("added", "removed") or not (f.added_lines or f.removed_lines):
            continue
        elif f.kind == "ci" and f.changes <= 20 and all(_IMAGE_LINE.match(x) or not x.strip() for x in f.added_lines + f.removed_lines):
            groups["images"].append(f.path)
        elif f.kind in _CODE_KINDS + ("test",) and _formatting_only(f):
            groups["formatting"].append(f.path)
        elif f.kind in _CODE_KINDS + ("test",) and f.changes <= 200 and all(_COMMENT.match(x) or not x.strip() for x in f.added_lines + f.removed_lines):
            groups["comments"].append(f.path)
    return Housekeeping(**{k: tuple(v) for k, v in groups.items()})


def _formatting_only(f: FileAnalysis) -> bool:
    if f.changes > 400 or not f.added_lines or not f.removed_lines:
        return False
    a, b = "".join(f.added_lines), "".join(f.removed_lines)
    # The same text but for whitespace has as many other characters (cheap to count).
    if len(a) - a.count(" ") - a.count("\t") - a.count(",") != len(b) - b.count(" ") - b.count("\t") - b.count(","):
        return False
    squash = lambda lines: "".join("\n".join(lines).split()).replace(",", "")  # noqa: E731
    return squash(f.added_lines) == squash(f.removed_lines)


def public_keys(f: FileAnalysis, keys: Sequence[str]) -> list[str]:
    """Config keys a user sets: in source files, private attributes (``_x``) are not options."""
    if f.kind != "source":
        return list(keys)
    return [k for k in keys if not any(p.startswith("_") for p in k.split("."))]


def api_names(definitions: Sequence[Definition]) -> list[str]:
    """Public names a reader would call: no private or dunder names, and no methods
    of a class that is itself in the list (the class names them all)."""
    if not definitions:
        return []
    # A part of a dotted name starts with "_" exactly when the name does or holds "._" (this runs per file).
    names = [d.name for d in definitions if not (d.name[:1] == "_" or "._" in d.name)]
    if len(names) < 2:
        return names
    listed = set(names)
    return [n for n in names if n.rpartition(".")[0] not in listed]


def review_summary(snapshot: PullRequestSnapshot) -> ReviewSummary:
    """Reviewers with their last decisive state, and threads busiest first.

    A reviewer's state is their last ``APPROVED``/``CHANGES_REQUESTED``/``DISMISSED``
    review, else ``COMMENTED`` ("List reviews for a pull request"). The PR author's
    own reviews (replies) are left out.
    """
    states: dict[str, tuple[str, bool]] = {}
    for review in snapshot.reviews:
        if review.user == snapshot.author or review.state == "PENDING":
            continue
        previous = states.get(review.user)
        if previous is None or review.state != "COMMENTED":
            states[review.user] = (review.state, review.user_is_bot)
    by_thread: dict[int, list] = defaultdict(list)
    for comment in snapshot.review_comments:
        by_thread[comment.thread_id].append(comment)
    threads = []
    for comments in by_thread.values():
        first = comments[0]
        people = tuple(dict.fromkeys(c.user for c in comments))
        threads.append(
            Thread(
                path=first.path,
                line=first.line,
                comments=len(comments),
                participants=people,
                opening=first.body,
                has_suggestion=any("```suggestion" in c.body for c in comments),
                author_replied=any(c.user == snapshot.author for c in comments[1:]) or first.user == snapshot.author,
            )
        )
    threads.sort(key=lambda t: (-t.comments, t.path))
    return ReviewSummary(tuple((u, s, b) for u, (s, b) in states.items()), tuple(threads))


def follow_ups(
    snapshot: PullRequestSnapshot, analysis: DiffAnalysis, review: ReviewSummary, change_type: str, *, absent: Sequence[str] = ()
) -> tuple[FollowUp, ...]:
    """Things left to do: TODOs added, unanswered suggestions, untested source changes, gaps.

    ``absent`` are identifiers the description names that the merged diff does not
    contain (:func:`bot.analysis.description.check_against_diff`): the guide says so
    rather than repeating them as fact.
    """
    out: list[FollowUp] = []
    code_like = [n for n in absent if _CODE_LIKE.search(n) and not n.startswith("--") and "/" not in n][:MAX_NAMES + 2]
    if code_like:
        out.append(FollowUp("follow.description_missing", {"names": tuple(code_like), "count": len(code_like)}))
    for f in analysis.files:
        for todo in f.todos_added[:2]:
            out.append(FollowUp("follow.todo", {"text": _TODO_PREFIX.sub("", todo) or todo}, f.path))
    for thread in review.threads:
        if thread.has_suggestion and not thread.author_replied:
            out.append(FollowUp("follow.suggestion", {"line": thread.line, "people": thread.participants}, thread.path))
    if any(state == "CHANGES_REQUESTED" for _, state, _ in review.reviewers):
        people = tuple(u for u, s, _ in review.reviewers if s == "CHANGES_REQUESTED")
        out.append(FollowUp("follow.changes_requested", {"people": people}))
    sources = [f for f in analysis.of_kind("source") if f.changes]
    if sources and not analysis.of_kind("test") and change_type not in ("docs", "ci", "build", "revert"):
        out.append(FollowUp("follow.no_tests", {"count": len(sources), "lines": sum(f.changes for f in sources)}))
    if snapshot.truncated:
        out.append(FollowUp("follow.truncated", {"listed": len(snapshot.files), "total": snapshot.changed_files}))
    missing = [f for f in analysis.files if f.patch_missing and f.kind != "binary"]
    if missing:
        out.append(FollowUp("follow.missing_patches", {"count": len(missing), "names": tuple(f.path for f in missing[:MAX_NAMES])}))
    return tuple(out[:10])
