"""What diff analysis tells about a pull request: plain dataclasses, no I/O.

The values a guide makes by the thousand (evidence, definitions, facts, files, and
elsewhere claims, rule hits, factors) are slotted dataclasses with a hash that are not
``frozen``: a frozen class sets each field through ``object.__setattr__``, which made
building one four times as dear (10,000 machine instructions for a six-field
``Evidence``). They are read-only by convention all the same: nothing assigns to a
field after construction; :func:`dataclasses.replace` makes a changed copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: File kinds, in the order the guide lists them.
KINDS = ("source", "test", "docs", "config", "ci", "build", "example", "generated", "binary")

#: Kinds of :class:`BehaviourFact`, grouped by what they are about.
BEHAVIOUR_KINDS = (
    # values and names of configuration (config files; fields of classes; parameter defaults)
    "default_changed",
    "key_removed",
    "key_renamed",
    "field_removed",
    # Python API
    "signature_changed",
    "parameter_added",
    "symbol_removed",
    "symbol_renamed",
    "symbol_moved",
    # input checks
    "check_added",
    "check_removed",
    # dependencies
    "dep_added",
    "dep_removed",
    "dep_floor_raised",
    "dep_ceiling_added",
    "dep_pin_changed",
    "dep_commit_moved",
    # metric names logged under a string key
    "metric_renamed",
    # environment variables read or set (bot.engine.analysis.envvars)
    "env_added",
    "env_removed",
    "env_default_changed",
)

#: Kinds of :class:`Edit`: exact changes of one statement of a Python function, read
#: from a hunk's removed and added lines (:mod:`bot.engine.analysis.edits`).
EDIT_KINDS = (
    "call_args_changed",  # the same callee, other arguments
    "call_replaced",  # another callee, the same arguments
    "call_added",  # a call statement added to an existing block, nothing else in its run
    "call_removed",  # the reverse: a call statement taken out, nothing put in its place
    "continuation_broken",  # a shell command's backslash continuation ended by a comment or blank line
    "parameter_default_changed",
    "return_changed",
    "constant_changed",  # a module or class constant's value
    "guard_added",  # an ``if`` condition around existing code
    "guard_removed",
    "condition_changed",
    "raise_added",  # with the condition that triggers it
    "raise_removed",
    "assert_added",
    "assert_removed",
    "assert_replaced",  # one assertion rewritten as another in the same block
    "cast_added",  # ``.to(dtype)``, ``.float()``, ``dtype=``, device moves
    "cast_removed",
    "moved_changed",  # a block moved with its body changed
    "branch_added",  # a statement kept under a new ``else:``, a new path taken when a condition holds
    "assignment_changed",  # a local name given another value inside a function (not a call's arguments)
)

#: File kinds in the order :attr:`DiffAnalysis.behaviour` lists their facts.
_BEHAVIOUR_ORDER = ("source", "config", "build", "example", "ci", "test", "docs", "generated", "binary")

#: ``DependencyChange.bump`` values.
BUMPS = ("major", "minor", "patch", "pre-1.0 minor", "commit", "")


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (module docstring)
class BehaviourFact:
    """One change of behaviour the diff shows; ``kind`` is one of :data:`BEHAVIOUR_KINDS`.

    ``path`` is the file (new path). ``symbol`` names what changed:

    * a config-file key as a dotted path (``data.shuffle``);
    * a field of a class as ``Class.field`` (``FSDPConfig.offload``) -- whether that
      class is user configuration is for the reader to decide
      (:meth:`bot.engine.rules.RuleSet.is_config`);
    * a function parameter as ``func(param)`` (``Trainer.fit(epochs)``);
    * a function or class by its qualified name (``Trainer.fit``);
    * a dependency by its name (PEP 503 normalised for Python packages);
    * an environment variable by its name (``VERL_USE_UV``).

    ``old``/``new`` are the values, names, specs or signatures as written in the
    source (trimmed, at most 160 characters). ``detail`` is the exception type of a
    check (``ValueError``, ``AssertionError``), the words of a dependency verdict or
    signature change (``"removed parameter `x`; added `y=None`"``), or the file the
    symbol moved to/from, or how an environment variable is used (``read``,
    ``default``, ``set``: see :mod:`bot.engine.analysis.envvars`). ``line`` is the 1-based new-file line (old-file line for
    removals), 0 when unknown. ``user_facing`` is true for keys of config files,
    fields of classes, public symbols outside tests, dependencies of the package
    (not of CI, docs or lock-only changes), and environment variables outside tests,
    docs and CI.
    """

    kind: str
    path: str
    symbol: str
    old: str = ""
    new: str = ""
    detail: str = ""
    line: int = 0
    user_facing: bool = False


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (module docstring)
class Evidence:
    """What a guide's statement rests on, so a reader can check it.

    ``source`` is ``"diff"`` (``path`` and the 1-based line range ``start``..``end`` of
    the new file, or of the old file for removed lines; ``old``/``new`` the text as
    written, trimmed), ``"description"`` or ``"review"`` (``new`` holds the quoted words),
    or ``"metadata"`` (counts GitHub reports: additions, deletions, changed files).
    """

    path: str = ""
    start: int = 0
    end: int = 0
    old: str = ""
    new: str = ""
    source: str = "diff"


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (module docstring)
class Edit:
    """One exact change of a statement in a Python file; ``kind`` is one of :data:`EDIT_KINDS`.

    ``symbol`` is the enclosing function or class (qualified, ``Trainer.fit``), or ``""``
    at module level. ``old``/``new`` are the statement's text before and after (one of
    them empty for an added or removed statement), at most 160 characters each;
    ``detail`` names what differs (the argument, the callee, the cast, the condition
    of a raise). ``line`` is the 1-based new-file line (``old_line`` the old-file line).
    ``consequence`` is ``"existing"`` when the change can affect a configuration that
    existed before the pull request, ``"new_only"`` when it can only affect something
    the same pull request introduced (a raise on a new option), ``""`` when unknown.
    """

    kind: str
    path: str
    symbol: str = ""
    old: str = ""
    new: str = ""
    detail: str = ""
    line: int = 0
    old_line: int = 0
    consequence: str = ""

    @property
    def evidence(self) -> Evidence:
        """The lines this edit rests on."""
        start = self.line or self.old_line
        return Evidence(self.path, start, start, self.old, self.new)


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (module docstring)
class Definition:
    """A function, method, class or other named definition in a file.

    ``name`` is qualified with its enclosing class where known (``Trainer.fit``);
    ``kind`` is ``"function"``, ``"method"``, ``"class"`` (or a language's own word).
    ``line`` is 1-based in the new file (old file for removed definitions), or 0.
    """

    name: str
    kind: str
    line: int = 0

    @property
    def public(self) -> bool:
        """True when no part of the qualified name starts with an underscore."""
        return not any(part.startswith("_") and not part.startswith("__") for part in self.name.split("."))


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (module docstring)
class DependencyChange:
    """A dependency added, removed or re-pinned in a requirements/pyproject/setup/lock/Docker file.

    ``action`` is ``"added"``, ``"removed"`` or ``"changed"``; specs are the raw version text.
    ``bump`` says how far a ``changed`` version moved, read with PEP 440 (``packaging``):
    ``"major"`` (1.x -> 2.x), ``"minor"``, ``"patch"``, ``"pre-1.0 minor"`` (0.23 -> 0.24:
    by semver convention this may break, but it is not a major bump), ``"commit"`` (a git
    hash or submodule pointer moved: not a version), or ``""`` when unknown or not a move
    (ranges that do not pin one version, added/removed packages, downgrades show their
    size too: 2.0 -> 1.9 is ``"major"``).
    """

    name: str
    action: str
    old_spec: str = ""
    new_spec: str = ""
    file: str = ""
    bump: str = ""


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (module docstring)
class FileAnalysis:
    """The facts of one changed file.

    Line counts are lines of the diff. ``symbols_touched`` holds qualified names of the
    definitions whose bodies the diff touches (from hunk headers and from definitions
    added/removed), in first-seen order. ``definitions_modified`` are definitions whose
    ``def``/``class`` line is on both sides of the diff (a new signature, or moved);
    ``config_keys_changed`` are keys on both sides (a new value, or moved). Neither
    appears in the ``*_added``/``*_removed`` tuples.

    ``fields_added``/``fields_removed``/``fields_changed`` are fields of Python classes
    (dataclasses, pydantic models, attrs...) as ``Class.field``, in source, example and
    build files. There the same names are also the file's ``config_keys_*`` (as
    before); a reader that knows which classes are configuration (``RuleSet.is_config``)
    should use the ``fields_*`` names and the ``config_keys_*`` of config files.

    ``behaviour`` lists :class:`BehaviourFact` objects. A definition renamed or moved
    (``symbol_renamed``/``symbol_moved`` facts) stays in ``definitions_added``/
    ``definitions_removed``; ``renamed`` holds ``(old name, new name)`` pairs for the
    definitions that arrived in this file under a new name (``"old/path.py:name"`` as
    old name when they came from another file), and :attr:`DiffAnalysis.relocated`
    both sides of every pair, so a reader can leave those out of "added"/"removed"
    counts.

    ``quote`` is the whole change of a file that changed a line or two and has no
    ``edits``: an ``Edit`` of kind ``"lines"`` holding the removed and added lines
    verbatim (:func:`bot.engine.analysis.quote.small_change`), else None. ``composed`` is
    true for a config file whose diff shows a Hydra ``defaults:`` list: it is composed from
    others, so a key it no longer sets may still come from them. ``prose_only`` is true for a
    code file whose changed lines are all comments, docstrings or blank
    (:func:`bot.engine.analysis.prose.prose_only`): it changes no code. ``keys_moved`` holds
    ``(key, where)`` for config keys (or ``Class.field`` fields) this file no longer sets
    that another file of the pull request adds: ``where`` is that file (or the base class).
    They are not in ``config_keys_removed``.
    """

    path: str
    status: str
    kind: str
    language: str | None = None
    previous_path: str | None = None
    additions: int = 0
    deletions: int = 0
    patch_missing: bool = False
    symbols_touched: tuple[str, ...] = ()
    definitions_added: tuple[Definition, ...] = ()
    definitions_removed: tuple[Definition, ...] = ()
    config_keys_added: tuple[str, ...] = ()
    config_keys_removed: tuple[str, ...] = ()
    tests_added: tuple[str, ...] = ()
    dependency_changes: tuple[DependencyChange, ...] = ()
    shims: tuple[str, ...] = ()
    todos_added: tuple[str, ...] = ()
    added_lines: tuple[str, ...] = field(default=(), repr=False)
    removed_lines: tuple[str, ...] = field(default=(), repr=False)
    definitions_modified: tuple[Definition, ...] = ()
    config_keys_changed: tuple[str, ...] = ()
    behaviour: tuple[BehaviourFact, ...] = ()
    edits: tuple[Edit, ...] = ()
    quote: Edit | None = None
    composed: bool = False
    prose_only: bool = False
    keys_moved: tuple[tuple[str, str], ...] = ()

    @property
    def changes(self) -> int:
        """Lines added plus lines deleted."""
        return self.additions + self.deletions

    # Derived, not stored: each stored field costs every file of a 3,000-file diff.

    @property
    def fields_added(self) -> tuple[str, ...]:
        """Fields (``Class.field``) of Python classes added, in source, example and build files."""
        return self.config_keys_added if self.language == "python" else ()

    @property
    def fields_removed(self) -> tuple[str, ...]:
        """Fields (``Class.field``) of Python classes removed, in source, example and build files."""
        return self.config_keys_removed if self.language == "python" else ()

    @property
    def fields_changed(self) -> tuple[str, ...]:
        """Fields (``Class.field``) on both sides of the diff, in source, example and build files."""
        return self.config_keys_changed if self.language == "python" else ()

    @property
    def renamed(self) -> tuple[tuple[str, str], ...]:
        """``(old name, new name)`` of definitions that arrived in this file under a new name or from
        another file (then the old name is ``"old/path.py:name"``), from its behaviour facts."""
        out = []
        for b in self.behaviour:
            if b.kind == "symbol_renamed":
                out.append((b.old, b.new))
            elif b.kind == "symbol_moved":
                out.append((f"{b.detail.removeprefix('from ')}:{b.old}", b.new))
        return tuple(out)

    @property
    def counts_as_code(self) -> bool:
        """False for generated/lock and binary files, whose lines say nothing to a reader."""
        return self.kind not in ("generated", "binary")


@dataclass(frozen=True, slots=True)
class DiffAnalysis:
    """The facts of a whole pull request's diff.

    ``lines_changed`` excludes generated/lock and binary files; ``reading_lines``
    further excludes tests and docs (it drives reading minutes).
    """

    files: tuple[FileAnalysis, ...] = ()

    @property
    def lines_changed(self) -> int:
        """Added plus deleted lines, excluding generated/lock and binary files."""
        return sum(f.changes for f in self.files if f.counts_as_code)

    @property
    def additions(self) -> int:
        """Added lines, excluding generated/lock and binary files."""
        return sum(f.additions for f in self.files if f.counts_as_code)

    @property
    def deletions(self) -> int:
        """Deleted lines, excluding generated/lock and binary files."""
        return sum(f.deletions for f in self.files if f.counts_as_code)

    @property
    def reading_lines(self) -> int:
        """Changed lines a reader must study: source, config, build, ci and example files."""
        return sum(f.changes for f in self.files if f.kind in ("source", "config", "build", "ci", "example"))

    def of_kind(self, *kinds: str) -> tuple[FileAnalysis, ...]:
        """The files whose kind is one of ``kinds``."""
        return tuple(f for f in self.files if f.kind in kinds)

    @property
    def symbols(self) -> tuple[str, ...]:
        """Every touched symbol, qualified, without repeats: source files first, tests last."""
        rank = {kind: i for i, kind in enumerate(KINDS)}
        ordered = sorted(self.files, key=lambda f: rank.get(f.kind, len(rank)))
        return tuple(dict.fromkeys(s for f in ordered for s in f.symbols_touched))

    @property
    def relocated(self) -> frozenset[tuple[str, str]]:
        """``(path, name)`` of both sides of every renamed or moved definition.

        Leave these out of "added"/"removed" definition counts: a rename is one change.
        """
        out = set()
        for f in self.files:
            for old, new in f.renamed:
                old_path, _, old_name = old.rpartition(":")
                out.add((old_path or f.path, old_name))
                out.add((f.path, new))
        return frozenset(out)

    @property
    def edits(self) -> tuple[Edit, ...]:
        """Every exact statement change, source files first (in the order of :attr:`behaviour`)."""
        rank = {kind: i for i, kind in enumerate(_BEHAVIOUR_ORDER)}
        ordered = sorted(self.files, key=lambda f: rank.get(f.kind, len(rank)))
        return tuple(e for f in ordered for e in f.edits)

    @property
    def behaviour(self) -> tuple[BehaviourFact, ...]:
        """Every behaviour fact: source and config files first, then build, example, ci, tests, docs."""
        rank = {kind: i for i, kind in enumerate(_BEHAVIOUR_ORDER)}
        ordered = sorted(self.files, key=lambda f: rank.get(f.kind, len(rank)))
        return tuple(b for f in ordered for b in f.behaviour)
