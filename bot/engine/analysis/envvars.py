"""Environment variables the changed lines read or set: knobs users turn without a config file.

Read from the hunks of one file, both sides (context lines count on both), and only in
these forms -- each one proves that the name is an environment variable:

* Python: ``os.environ["X"]`` (not an assignment), ``os.environ.get("X", default)``,
  ``os.getenv("X", default)``, ``os.environ.setdefault("X", value)`` and
  ``"X" in os.environ``; the name may also be a module constant holding an ALL_CAPS
  name that the hunks show (``NVTX_ENV = "NVTX_INJECTION64_PATH"`` ...
  ``os.environ.get(NVTX_ENV)``). A bare ``environ`` is not trusted (a WSGI request
  has one too), nor is a copy (``env = dict(os.environ)``), nor ``monkeypatch.setenv``;
* shell scripts and CI workflows: ``${X:-default}`` and ``${X:=default}`` reads;
  ``export X=value`` (shell) sets; CI workflows' ``env:`` blocks as sets. Shell names
  must be ALL_CAPS: a lower-case ``${x:-1}`` is the script's own variable far more
  often than the environment's. A plain ``$X`` is not read: it cannot tell a script
  variable from the environment;
* Dockerfiles: ``ENV X=value`` (and ``ENV X value``) sets only -- a ``${X:-d}`` there
  is a build ``ARG`` as often as the environment.

Ignored: names shorter than four characters, comment lines, lines that set a log
level (``logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))`` in a module is the
module taking the project's existing knob, not a new one), and variables that are
not the project's knobs (:data:`WELL_KNOWN`: the shell's and the system's own, proxies,
loader paths, what CI runners, schedulers and distributed launchers provide, and
device visibility such as ``CUDA_VISIBLE_DEVICES``, which every CUDA program honours
and launchers set per job).

Each variable is compared across sides, per form class ("read" for reads and
``setdefault``/``:=``, "set" for ``export``/``ENV``/``env:``): on the added side only it
is ``env_added``, on the removed side only ``env_removed``, on both with one explicit
default each that differ ``env_default_changed``. Sets are compared only in files that
exist on both sides (see :func:`env_facts`). :func:`reconcile` then judges each fact
against the other files of the same kind: a removal goes when another file still uses
the variable (the read moved, or is still there), an addition when another file used
it before (one more module reading an existing knob).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from bot.engine.analysis.model import BehaviourFact, FileAnalysis
from bot.engine.analysis.patch import ADDED, REMOVED, Hunk

#: Fact kinds this module emits.
ENV_KINDS = ("env_added", "env_removed", "env_default_changed")

#: ``BehaviourFact.detail`` of an environment fact: how the code uses the variable.
READ = "read"  # os.environ.get / getenv / os.environ[...] / in os.environ / ${X:-d}
DEFAULT = "default"  # os.environ.setdefault / ${X:=d}: sets it unless the user did
SET = "set"  # export X=v / ENV X=v / a CI env: block

#: Variables that are not the project's knobs (see the module docstring).
WELL_KNOWN = frozenset(
    """
    PATH HOME PWD OLDPWD USER LOGNAME SHELL TERM LANG LANGUAGE LC_ALL LC_CTYPE TZ TMPDIR TEMP TMP HOSTNAME
    DISPLAY EDITOR PAGER MAIL SHLVL IFS COLUMNS LINES
    PYTHONPATH PYTHONHOME PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONHASHSEED VIRTUAL_ENV CONDA_PREFIX
    LD_LIBRARY_PATH LD_PRELOAD LIBRARY_PATH CPATH PKG_CONFIG_PATH CUDA_HOME CUDA_PATH ROCM_PATH DEBIAN_FRONTEND
    HTTP_PROXY HTTPS_PROXY NO_PROXY FTP_PROXY ALL_PROXY http_proxy https_proxy no_proxy ftp_proxy all_proxy
    CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES ASCEND_RT_VISIBLE_DEVICES ASCEND_VISIBLE_DEVICES
    RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE NODE_RANK GROUP_RANK MASTER_ADDR MASTER_PORT
    """.split()
)
#: Prefixes of variables a CI runner or a scheduler provides.
_PROVIDED_PREFIXES = ("GITHUB_", "RUNNER_", "SLURM_", "PBS_", "CI_")

#: Longer lines are data (minified, embedded blobs); skipping them keeps scanning linear.
_MAX_LINE = 400
#: Defaults longer than this are shown cut (they are code, not a value to remember).
_MAX_VALUE = 60

_PY_NAME = re.compile(r"[A-Za-z_]\w*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PY_CALL = re.compile(r"(?<![\w.])os\.(?:environ\s*\.\s*(get|setdefault)|(getenv))\s*\(")
_PY_INDEX = re.compile(r"(?<![\w.])os\.environ\s*\[")
_PY_IN = re.compile(r"""("[A-Za-z_]\w*"|'[A-Za-z_]\w*'|\b[A-Za-z_]\w*)\s+(?:not\s+)?in\s+os\.environ\b(?!\s*\.)""")
_PY_CONSTANT = re.compile(r"""([A-Z][A-Z0-9_]*)\s*(?::\s*(?:str|Final(?:\[str\])?)\s*)?=\s*(?:"([A-Z][A-Z0-9_]*)"|'([A-Z][A-Z0-9_]*)')\s*(?:#.*)?\Z""")
_SH_EXPAND = re.compile(r"\$\{([A-Z][A-Z0-9_]*):([-=])")
_SH_EXPORT = re.compile(r"(?:^|[\s;&|(])export\s+(?:-\w+\s+)*([A-Z][A-Z0-9_]*)=")
_DOCKER_ENV = re.compile(r"\s*ENV\s+")
_DOCKER_PAIR = re.compile(r"""([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|(?:[^\s\\"']|\\.)*)""")
_YAML_ENV = re.compile(r"(\s*)(?:-\s+)?env:\s*(?:#.*)?\Z")
_YAML_PAIR = re.compile(r"""(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*\Z""")


def dialect_of(language: str | None, kind: str, patch: object = None) -> str | None:
    """Which reads and sets this file can hold: ``"python"``, ``"shell"``, ``"dockerfile"``,
    ``"workflow"`` (YAML of a CI file), or ``None``: docs, generated and binary files,
    other languages, and -- when ``patch`` is given -- a patch without any marker of a
    read or set (``os.environ``, ``:-``, ``export ``...). Substring tests only, so that
    most files cost nothing more."""
    if language is None or kind in ("docs", "generated", "binary"):
        return None
    if patch is not None and not isinstance(patch, str):
        return None
    if language == "python":
        if patch is None or "os.environ" in patch or "os.getenv" in patch:
            return "python"
    elif language == "shell":
        if patch is None or ":-" in patch or ":=" in patch or "export " in patch:
            return "shell"
    elif language == "dockerfile":
        if patch is None or "ENV " in patch:
            return "dockerfile"
    elif language == "yaml" and kind == "ci":
        if patch is None or "env:" in patch or ":-" in patch or ":=" in patch:
            return "workflow"
    return None


def ignored(name: str) -> bool:
    """True for names that are not the project's knobs: short, well known or provided."""
    return len(name) < 4 or name in WELL_KNOWN or name.startswith(_PROVIDED_PREFIXES)


# --- one side of a file ----------------------------------------------------------------------------


class _Use:
    """What one side of a file does with one variable: how, the defaults seen (in order), the first line."""

    __slots__ = ("how", "defaults", "line")

    def __init__(self, how: str, line: int):
        self.how = how
        self.defaults: list[str] = []
        self.line = line


#: A side's uses, by (name, "read" or "set").
_Side = dict[tuple[str, str], _Use]


def _note(side: _Side, name: str, how: str, default: str | None, line: int) -> None:
    if not _ENV_NAME.match(name) or ignored(name):
        return
    key = (name, SET if how == SET else READ)
    use = side.get(key)
    if use is None:
        use = side[key] = _Use(how, line)
    elif how == DEFAULT and use.how == READ:
        use.how = DEFAULT  # a setdefault says more than a read of the same name
    if default is not None and default not in use.defaults:
        use.defaults.append(default)


def _literal(text: str) -> str | None:
    """The contents of a simple string literal (no prefix, no escapes needed), or None."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" and text[0] not in text[1:-1]:
        return text[1:-1]
    return None


def _args(line: str, start: int, close: str = ")") -> tuple[list[str], int] | None:
    """The top-level arguments of a call whose bracket opened just before ``start``, as
    written, and the index of the closing bracket; None when the line ends before the
    bracket closes (a call over several lines) or another bracket closes it."""
    args: list[str] = []
    depth = 0
    quote = ""
    begin = start
    i = start
    n = len(line)
    while i < n:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                if ch != close:
                    return None
                args.append(line[begin:i].strip())
                return (args if args != [""] else []), i
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(line[begin:i].strip())
            begin = i + 1
        i += 1
    return None


def _py_value(text: str) -> str | None:
    """A Python default as shown: a string's contents (``""`` for an empty one), other
    expressions as written (cut); None for no default (``None``)."""
    text = text.strip()
    if not text or text == "None":
        return None
    inner = _literal(text)
    if inner is not None:
        return inner if inner else '""'
    return text[:_MAX_VALUE]


def _py_name(arg: str, constants: dict[str, str]) -> str | None:
    inner = _literal(arg)
    if inner is not None:
        return inner
    if _PY_NAME.fullmatch(arg):
        return constants.get(arg)
    return None


def _python_line(text: str, side: _Side, constants: dict[str, str], line: int) -> None:
    if "setLevel(" in text:
        return  # a module taking the project's log level knob: the knob is not new, nor gone
    for m in _PY_CALL.finditer(text):
        how = DEFAULT if m.group(1) == "setdefault" else READ
        found = _args(text, m.end())
        if found is None:
            # A call continued on the next line: the name is still on this one.
            first = text[m.end():].split(",", 1)[0].strip()
            name = _py_name(first, constants) if first else None
            if name:
                _note(side, name, how, None, line)
            continue
        args = found[0]
        name = _py_name(args[0], constants) if args else None
        if name is not None:
            _note(side, name, how, _py_value(args[1]) if len(args) > 1 else None, line)
    for m in _PY_INDEX.finditer(text):
        found = _args(text, m.end(), "]")
        if found is None or len(found[0]) != 1:
            continue
        after = text[found[1] + 1 :].lstrip()
        if (after[:1] == "=" and after[:2] != "==") or after[1:2] == "=" and after[:1] in "+-|&" or text[: m.start()].rstrip().endswith("del"):
            continue  # a write or a deletion, not a read
        name = _py_name(found[0][0], constants)
        if name is not None:
            _note(side, name, READ, None, line)
    if " in os.environ" in text:
        for m in _PY_IN.finditer(text):
            name = _py_name(m.group(1), constants)
            if name is not None:
                _note(side, name, READ, None, line)


def _shell_value(text: str, start: int) -> str:
    """The default of ``${X:-...}`` from ``start`` to its closing brace (nested ``${}`` kept)."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                break
            depth -= 1
        i += 1
    value = text[start:i].strip()
    inner = _literal(value)
    if inner is not None:
        value = inner if inner else '""'
    return value[:_MAX_VALUE]


_SHELL_WORD = re.compile(r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^\s;&|]*)""")


def _word_value(text: str) -> str:
    """A shell word after ``=`` (quotes dropped), up to the first unquoted blank."""
    m = _SHELL_WORD.match(text)
    raw = m.group(1) if m else ""
    inner = _literal(raw)
    value = (inner if inner else '""') if inner is not None else raw
    return value[:_MAX_VALUE]


def _shell_reads(text: str, side: _Side, line: int) -> None:
    if "${" not in text:
        return
    for m in _SH_EXPAND.finditer(text):
        _note(side, m.group(1), READ if m.group(2) == "-" else DEFAULT, _shell_value(text, m.end()), line)


def _comment(text: str) -> bool:
    stripped = text.lstrip()
    return not stripped or stripped[0] == "#" or len(text) > _MAX_LINE


class _SideState:
    """Where one side of a hunk is: inside an ``ENV`` continuation, inside an ``env:`` block."""

    __slots__ = ("docker_env", "yaml_env", "yaml_child")

    def __init__(self) -> None:
        self.docker_env = False
        self.yaml_env = -1  # indent of the open env: key, or -1
        self.yaml_child = -1  # indent of its entries, once seen


def _dockerfile_line(text: str, side: _Side, state: _SideState, line: int) -> None:
    # Only ENV: a ``${X:-d}`` in a Dockerfile is a build ARG as often as the environment.
    if state.docker_env:
        body = text  # the continuation of an ENV instruction
    else:
        m = _DOCKER_ENV.match(text)
        if m is None:
            return
        body = text[m.end() :]
        words = body.split(None, 1)
        if words and "=" not in words[0]:
            # The legacy form ``ENV NAME value``: the rest of the line is the value.
            _note(side, words[0], SET, _word_value(words[1]) if len(words) > 1 else '""', line)
            return
    state.docker_env = text.rstrip().endswith("\\")
    for m in _DOCKER_PAIR.finditer(body):
        if m.start() == 0 or body[m.start() - 1] in " \t":
            _note(side, m.group(1), SET, _word_value(m.group(2)), line)


def _workflow_line(text: str, side: _Side, state: _SideState, line: int) -> None:
    m = _YAML_ENV.match(text)
    if m is not None:
        state.yaml_env, state.yaml_child = len(m.group(1)), -1
        return
    if state.yaml_env >= 0:
        pair = _YAML_PAIR.match(text)
        indent = len(text) - len(text.lstrip())
        if indent <= state.yaml_env:
            state.yaml_env = -1
        elif pair is not None and state.yaml_child in (-1, indent):
            state.yaml_child = indent
            value = pair.group(3)
            inner = _literal(value)
            _note(side, pair.group(2), SET, (inner if inner else '""') if inner is not None else value[:_MAX_VALUE], line)
            return
    _shell_reads(text, side, line)


def _constants(hunks: Sequence[Hunk]) -> tuple[dict[str, str], dict[str, str]]:
    """Module constants naming an ALL_CAPS variable, on the old and the new side."""
    old: dict[str, str] = {}
    new: dict[str, str] = {}
    for hunk in hunks:
        for kind, text, _o, _n in hunk.lines:
            if not text or text[0] not in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" or '"' not in text and "'" not in text:
                continue  # module level: no indentation
            m = _PY_CONSTANT.match(text)
            if m is None:
                continue
            value = m.group(2) or m.group(3)
            if kind != ADDED:
                old[m.group(1)] = value
            if kind != REMOVED:
                new[m.group(1)] = value
    return old, new


def _sides(hunks: Sequence[Hunk], dialect: str) -> tuple[_Side, _Side]:
    """Every use of a variable on the old and on the new side of the hunks."""
    old: _Side = {}
    new: _Side = {}
    consts: tuple[dict[str, str], dict[str, str]] | None = None
    stateful = dialect in ("dockerfile", "workflow")
    for hunk in hunks:
        states = (_SideState(), _SideState())  # old side, new side
        for kind, text, old_line, new_line in hunk.lines:
            # Most lines hold no marker: a substring test skips them before any other work.
            if dialect == "python":
                if "os." not in text or ("environ" not in text and "getenv" not in text):
                    continue
            elif dialect == "shell":
                if "${" not in text and "export" not in text:
                    continue
            elif dialect == "dockerfile":
                if "ENV" not in text and not (states[0].docker_env or states[1].docker_env):
                    continue
            elif "env:" not in text and "${" not in text and states[0].yaml_env < 0 and states[1].yaml_env < 0:
                continue
            if _comment(text):
                continue
            for which in (0, 1):
                if (kind == ADDED and which == 0) or (kind == REMOVED and which == 1):
                    continue
                side = new if which else old
                number = new_line if which else old_line
                if dialect == "python":
                    if consts is None:
                        consts = _constants(hunks)
                    _python_line(text, side, consts[which], number)
                elif dialect == "shell":
                    _shell_reads(text, side, number)
                    if "export" in text:
                        for m in _SH_EXPORT.finditer(text):
                            _note(side, m.group(1), SET, _word_value(text[m.end() :]), number)
                elif stateful and dialect == "dockerfile":
                    _dockerfile_line(text, side, states[which], number)
                else:
                    _workflow_line(text, side, states[which], number)
    return old, new


#: A variable as a side of a file uses it: ``(name, "read" or "set")``.
Use = tuple[str, str]


class EnvFacts(NamedTuple):
    """What :func:`env_facts` finds in one file: its facts, and every :data:`Use` of its
    old and of its new side (context lines included), for :func:`reconcile`."""

    facts: tuple[BehaviourFact, ...] = ()
    before: frozenset[Use] = frozenset()
    after: frozenset[Use] = frozenset()


def env_facts(hunks: Sequence[Hunk], dialect: str | None, path: str, kind: str, status: str = "modified") -> EnvFacts:
    """``env_added``/``env_removed``/``env_default_changed`` facts of one file's hunks.

    ``dialect`` comes from :func:`dialect_of`. ``symbol`` is the variable's name,
    ``detail`` how it is used (:data:`READ`, :data:`DEFAULT`, :data:`SET`), ``new``/``old``
    its default or value as written (quotes dropped, ``""`` for an empty string; empty
    when none is given). ``user_facing`` is false in tests, docs, CI and dot-folders.

    A file removed whole gives no facts (its removal says it all), nor does a new shell
    script, Dockerfile or workflow: every parameter of a new script is new, and saying so
    one by one tells nothing. A new Python module's reads are facts: they are new knobs
    of the package. Never raises.
    """
    if dialect is None or not hunks or status == "removed":
        return EnvFacts()
    old, new = _sides(hunks, dialect)
    if not new and not old:
        return EnvFacts()
    if status == "added" and dialect != "python":
        return EnvFacts((), frozenset(old), frozenset(new))
    user_facing = kind not in ("test", "docs", "ci") and "/." not in "/" + path
    out: list[BehaviourFact] = []
    for key, use in new.items():
        before = old.get(key)
        if before is None:
            out.append(BehaviourFact("env_added", path, key[0], "", _one(use.defaults), use.how, use.line, user_facing))
        elif len(before.defaults) == 1 and len(use.defaults) == 1 and before.defaults[0] != use.defaults[0]:
            out.append(BehaviourFact("env_default_changed", path, key[0], before.defaults[0], use.defaults[0], use.how, use.line, user_facing))
    for key, use in old.items():
        if key not in new:
            out.append(BehaviourFact("env_removed", path, key[0], _one(use.defaults), "", use.how, use.line, user_facing))
    return EnvFacts(tuple(out), frozenset(old), frozenset(new))


def _one(defaults: Sequence[str]) -> str:
    """The default when one side gives exactly one; ``""`` for none or several."""
    return defaults[0] if len(defaults) == 1 else ""


def project_prefix(repository: str) -> str:
    """The prefix of variables named after the project: ``VERL_`` for ``volcengine/verl``;
    ``""`` for names shorter than three characters (``R_`` would claim too much)."""
    name = repository.rpartition("/")[2]
    word = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()
    return word + "_" if len(word) >= 3 else ""


def breaks_users(fact: BehaviourFact, kind: str, status: str, repository: str) -> bool:
    """True when an environment fact breaks existing users.

    Only a read of a variable named after the project (:func:`project_prefix`) in a
    source file that exists on both sides: the code stops reading it (``env_removed``,
    and no other changed file still reads it -- :func:`reconcile` dropped those), or its
    default changes (``env_default_changed``). Tests, examples, CI and images set
    variables for themselves; a variable of another tool (``NNODES``, ``RAY_...``) that
    one code path stops reading is plumbing more often than a promise to users, and the
    diff cannot show whether unchanged files still read it.
    """
    if fact.kind not in ("env_removed", "env_default_changed") or kind != "source" or status in ("added", "removed"):
        return False
    if not fact.user_facing or fact.detail == SET or (fact.kind == "env_removed" and fact.detail != READ):
        return False
    prefix = project_prefix(repository)
    return bool(prefix) and fact.symbol.startswith(prefix)


# --- across files ----------------------------------------------------------------------------------


def _class(detail: str) -> str:
    """The form class of a fact's ``detail``: ``"set"`` or ``"read"`` (setdefault included)."""
    return SET if detail == SET else READ


def reconcile(files: Sequence[FileAnalysis], uses: Sequence[EnvFacts | None]) -> list[FileAnalysis]:
    """Judge each file's environment facts against the other files of the same kind.

    ``uses`` are each file's :class:`EnvFacts` (or None), in the order of ``files``.

    * An ``env_removed`` fact goes when another file still uses the variable on its new
      side: the read moved, or is still there (then setting it still does something).
      If that file adds the use (``env_added``), that fact goes too, or becomes
      ``env_default_changed`` when both give a different default.
    * An ``env_added`` fact goes when another file used the variable before (its old
      side, context lines included): the variable is not new to the code, one more
      module reads it.
    """
    files = list(files)
    before: dict[tuple[str, str, str], set[int]] = {}
    after: dict[tuple[str, str, str], set[int]] = {}
    for i, f in enumerate(files):
        env = uses[i]
        if env is None:
            continue
        for name, cls in env.before:
            before.setdefault((f.kind, name, cls), set()).add(i)
        for name, cls in env.after:
            after.setdefault((f.kind, name, cls), set()).add(i)
    removed: dict[tuple[str, str, str], list[BehaviourFact]] = {}
    for f in files:
        for b in f.behaviour:
            if b.kind == "env_removed":
                removed.setdefault((f.kind, b.symbol, _class(b.detail)), []).append(b)
    drop: set[int] = set()
    swap: dict[int, BehaviourFact] = {}
    for i, f in enumerate(files):
        for b in f.behaviour:
            if b.kind == "env_removed":
                if after.get((f.kind, b.symbol, _class(b.detail)), set()) - {i}:
                    drop.add(id(b))
            elif b.kind == "env_added":
                key = (f.kind, b.symbol, _class(b.detail))
                gone = removed.get(key)
                if gone:
                    olds = {x.old for x in gone}
                    old = next(iter(olds)) if len(olds) == 1 else ""
                    if old and b.new and b.new != old:
                        swap[id(b)] = replace(b, kind="env_default_changed", old=old)
                    else:
                        drop.add(id(b))
                elif before.get(key, set()) - {i}:
                    drop.add(id(b))
    if not drop and not swap:
        return files
    out = []
    for f in files:
        if any(id(b) in drop or id(b) in swap for b in f.behaviour):
            f = replace(f, behaviour=tuple(swap.get(id(b), b) for b in f.behaviour if id(b) not in drop))
        out.append(f)
    return out
