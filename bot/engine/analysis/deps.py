"""Dependencies added, removed or re-pinned, read from the diff of dependency files.

Understood files: ``requirements*.txt``/``.in`` and ``constraints*.txt``;
``pyproject.toml`` (``[project] dependencies``, ``[project.optional-dependencies]``,
``[dependency-groups]``, ``[build-system] requires``, ``[tool.uv]`` ``*-dependencies``,
``[tool.poetry.dependencies]`` and poetry groups); ``setup.py`` and ``setup.cfg``
requirement strings; Conda ``environment.yml``; ``Pipfile`` and ``Cargo.toml``
dependency tables; ``package.json`` dependency objects; ``go.mod``; Dockerfiles
(``FROM image:tag``, ``pip install`` arguments, ``ARG``/``ENV`` ``*_VERSION`` values); lock
files (``uv.lock``, ``poetry.lock``, ``pdm.lock``, ``Cargo.lock``, ``package-lock.json``,
``yarn.lock``: one change per package whose version line changed); git submodule
pointers.

A hunk often does not show which list a line belongs to. Inside a list known to hold
dependencies every requirement string counts; where the list cannot be told, only
strings with a version constraint or a direct reference (``pkg>=1``, ``pkg @ url``)
count, so that lint codes or module names in other lists are not taken for packages.

Python package names are reported normalised per PEP 503 ("Normalized names":
``TransferQueue`` and ``qwen_vl_utils`` become ``transferqueue`` and ``qwen-vl-utils``);
npm, Go, Cargo and image names are kept as written. A package on both sides with a
different spec is ``changed``; with the same spec (moved) it is left out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from bot.engine.analysis.config_keys import toml_start, toml_step
from bot.engine.analysis.model import DependencyChange
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, Hunk
from bot.engine.analysis.versions import bump_of

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REQUIREMENT = re.compile(rf"({_NAME})\s*(\[[^\]]*\])?\s*(.*)$")
_SPEC_START = ("==", ">=", "<=", "!=", "~=", "<", ">", "===", "@", ";", "(", "=")
_VERSIONED_START = ("==", ">=", "<=", "!=", "~=", "<", ">", "===", "@", "(")
_STRING_OR_COMMENT = re.compile(r'"([^"]*)"|\'([^\']*)\'|(#)')
_EGG = re.compile(r"#egg=(" + _NAME + ")")

#: Changes per (group, normalised name) on each side: {key: (display name, spec)}.
_Side = dict[tuple[str, str], tuple[str, str]]


_NAME_SEPARATORS = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """PEP 503 normalised form of a Python package name (``Foo_Bar.baz`` -> ``foo-bar-baz``)."""
    return _NAME_SEPARATORS.sub("-", name).lower()


def parse_requirement(text: str, *, require_version: bool = False) -> tuple[str, str] | None:
    """``(name, spec)`` from a PEP 508 requirement string, or ``None`` when it is not one.

    ``spec`` is the rest of the string after the name (extras dropped, whitespace
    squeezed): ``"transformers>=5.5.3,!=5.6.0"`` gives ``("transformers", ">=5.5.3,!=5.6.0")``.
    With ``require_version`` a bare name gives ``None``.
    """
    text = text.strip()
    if not text or len(text) > 300:
        return None
    m = _REQUIREMENT.match(text)
    if m is None:
        return None
    name, spec = m.group(1), " ".join(m.group(3).split())
    if spec and not spec.startswith(_SPEC_START):
        return None
    if require_version and not spec.startswith(_VERSIONED_START):
        return None
    return name, spec


def _pair(path: str, old: _Side, new: _Side) -> tuple[DependencyChange, ...]:
    out: dict[tuple[str, str, str, str], DependencyChange] = {}

    def put(change: DependencyChange) -> None:
        out.setdefault((change.name, change.action, change.old_spec, change.new_spec), change)

    for key, (name, spec) in new.items():
        if key in old:
            old_spec = old[key][1]
            if old_spec != spec:
                put(DependencyChange(name, "changed", old_spec, spec, path, bump_of(old_spec, spec)))
        else:
            put(DependencyChange(name, "added", "", spec, path))
    for key, (name, spec) in old.items():
        if key not in new:
            put(DependencyChange(name, "removed", spec, "", path))
    return tuple(out.values())


def _record(sides: dict[str, _Side], side: str, group: str, name: str, spec: str, *, python: bool = True) -> None:
    if python:
        name = normalize_name(name)
    sides[side].setdefault((group, name), (name, spec))


def _changed_lines(hunks: Iterable[Hunk]) -> Iterable[tuple[str, str]]:
    for hunk in hunks:
        for line in hunk.lines:
            if line.kind != CONTEXT:
                yield line.kind, line.text


def _new_sides() -> dict[str, _Side]:
    return {ADDED: {}, REMOVED: {}}


# --- requirements files, setup.py, setup.cfg, environment.yml ------------------------------


_TRAILING_COMMENT = re.compile(r"\s+#")


#: A pip VCS install: ``git+https://github.com/NVIDIA/TransformerEngine.git@v1.7``.
_VCS_URL = re.compile(r"(?:git|hg|svn|bzr)\+[a-z]+://(?:[^\s/@]+@)?[^\s@#]*/([A-Za-z0-9_.-]+?)(?:\.git)?/?(?:@([^\s#@]+))?(?:#\S*)?$")


def vcs_requirement(token: str) -> tuple[str, str] | None:
    """``(name, spec)`` of a pip VCS install (``git+https://host/owner/Repo.git@ref``): the
    name its ``#egg=`` gives, else the repository's; the spec ``git:ref`` (empty without
    a ref; never ``@ref``, which a summary would show as a mention). None for anything else. pip installs these like any package, so a count of the
    dependencies an image installs must include them."""
    m = _VCS_URL.match(token)
    if m is None:
        return None
    egg = _EGG.search(token)
    return (egg.group(1) if egg else m.group(1)), (f"git:{m.group(2)}" if m.group(2) else "")


def _requirements(hunks: Iterable[Hunk]) -> dict[str, _Side]:
    sides = _new_sides()
    for side, text in _changed_lines(hunks):
        line = text.strip()
        if not line or line[0] == "#":
            continue
        egg = _EGG.search(line)
        if line.startswith("-"):
            if egg and line.startswith(("-e", "--editable")):
                _record(sides, side, "", egg.group(1), line.split(None, 1)[-1])
            continue
        if "://" in line and " @ " not in line:
            vcs = vcs_requirement(line.split()[0])
            if vcs is not None:
                _record(sides, side, "", *vcs)
            elif egg:
                _record(sides, side, "", egg.group(1), line)
            continue
        line = _TRAILING_COMMENT.split(line, maxsplit=1)[0]
        found = parse_requirement(line)
        if found is not None:
            _record(sides, side, "", *found)
    return sides


def _quoted(line: str) -> list[str]:
    strings = []
    for m in _STRING_OR_COMMENT.finditer(line):
        if m.group(3) is not None:
            break
        strings.append(m.group(1) if m.group(1) is not None else m.group(2))
    return strings


_SETUP_LIST = re.compile(r"\w*(?:require|REQUIRE|extras|EXTRAS|deps|DEPS)\w*[\"']?\s*[=:]\s*([\[{(].*)$")


def _depth(text: str) -> int:
    return sum(text.count(c) for c in "[{(") - sum(text.count(c) for c in "]})")


def _setup_py(hunks: Iterable[Hunk]) -> dict[str, _Side]:
    """Requirement strings in setup.py: all in a visible ``*require*`` list, versioned ones anywhere."""
    sides = _new_sides()
    for hunk in hunks:
        m = _SETUP_LIST.search(hunk.section)
        start = max(_depth(m.group(1)), 0) if m else 0
        depth = {ADDED: start, REMOVED: start}
        for line in hunk.lines:
            stripped = line.text.strip()
            opener = _SETUP_LIST.search(stripped) if ("equire" in stripped or "xtras" in stripped or "eps" in stripped) else None
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                in_list = depth[side] > 0 or opener is not None
                depth[side] = max(_depth(opener.group(1)), 0) if opener else max(depth[side] + _depth(stripped), 0)
                if line.kind == CONTEXT:
                    continue
                for text in _quoted(stripped):
                    if _dict_key(stripped, text):
                        continue  # `'math': MATH_REQUIRES` names an extra, not a package (fresh-o #683)
                    found = parse_requirement(text, require_version=not in_list)
                    if found is not None and "::" not in text:
                        _record(sides, side, "", *found)
    return sides


def _dict_key(line: str, text: str) -> bool:
    """True when the quoted ``text`` is a key of a dict on ``line`` (a colon follows its closing quote)."""
    for quote in ("'", '"'):
        at = line.find(f"{quote}{text}{quote}")
        if at >= 0 and line[at + len(text) + 2 :].lstrip().startswith(":"):
            return True
    return False


def _loose_lines(hunks: Iterable[Hunk], *, list_items: bool) -> dict[str, _Side]:
    """Versioned requirements on changed lines (setup.cfg continuation lines, conda lists)."""
    sides = _new_sides()
    for side, text in _changed_lines(hunks):
        line = text.strip()
        if list_items:
            if not line.startswith("- "):
                continue
            line = line[2:].strip()
        line = line.split("#", 1)[0].strip()
        found = parse_requirement(line, require_version=True)
        if found is not None:
            _record(sides, side, "", *found)
    return sides


# --- TOML manifests ---------------------------------------------------------------------

_POETRY_TABLE = re.compile(r"tool\.poetry\.(?:dependencies|dev-dependencies|group\.[^.]+\.dependencies)$")
_CARGO_TABLE = re.compile(r"(?:workspace\.|target\..+\.)?(?:dependencies|dev-dependencies|build-dependencies)$")
_PIPFILE_TABLE = re.compile(r"(?:packages|dev-packages)$")
_TABLE_VERSION = re.compile(r"""version\s*=\s*["']([^"']*)["']""")


def _is_dependency_array(table: str | None, key: str) -> bool | None:
    """True/False when ``table``/``key`` tells whether an array lists requirements; None when unknown."""
    leaf = key.rsplit(".", 1)[-1]
    if table is None:
        return True if leaf in ("dependencies", "requires", "install_requires") else None
    if table == "project":
        return key == "dependencies"
    if table in ("project.optional-dependencies", "dependency-groups"):
        return True
    if table == "build-system":
        return key == "requires"
    if table.startswith("tool.uv"):
        return leaf.endswith("dependencies") or leaf == "requires"
    if table.startswith("tool.pdm") and "dependencies" in table:
        return True
    return False


def _table_style(table: str | None) -> tuple[bool, bool]:
    """(whether ``name = "spec"`` keys of ``table`` are dependencies, whether names are Python's)."""
    if table is None:
        return False, True
    if _POETRY_TABLE.match(table) or _PIPFILE_TABLE.match(table):
        return True, True
    if _CARGO_TABLE.match(table):
        return True, False
    return False, True


def _toml_manifest(hunks: Iterable[Hunk]) -> dict[str, _Side]:
    sides = _new_sides()
    for hunk in hunks:
        states = {ADDED: toml_start(hunk.section), REMOVED: toml_start(hunk.section)}
        for line in hunk.lines:
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                state = states[side]
                table = state.table
                found = toml_step(state, line.text)
                if found is None or line.kind == CONTEXT:
                    continue
                what, key, value = found
                if what == "item" or (what == "key" and value.startswith("[")):
                    array_key = key if what == "item" else key.rsplit(".", 1)[-1] if table else key
                    known = _is_dependency_array(table, array_key)
                    if known is False:
                        continue
                    group = f"{table or ''}:{array_key}"
                    for text in _quoted(value):
                        req = parse_requirement(text, require_version=known is None)
                        if req is not None:
                            _record(sides, side, group, *req)
                elif what == "key":
                    is_deps, python = _table_style(table)
                    if not is_deps:
                        continue
                    name = key[len(table) + 1 :] if table and key.startswith(table + ".") else key
                    if name == "python" or "." in name:
                        continue
                    spec = value.split("#", 1)[0].strip()
                    if spec.startswith("{"):
                        m = _TABLE_VERSION.search(spec)
                        spec = m.group(1) if m else spec
                    else:
                        spec = spec.strip("\"'")
                    _record(sides, side, table or "", name, spec, python=python)
    return sides


# --- JavaScript manifests ----------------------------------------------------------------

_JSON_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(\{))?')
_JS_DEP_OBJECTS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies", "bundleDependencies")
_JS_NOT_PACKAGES = frozenset({"name", "version", "description", "main", "module", "types", "license", "node", "npm", "type"})
_SEMVERISH = re.compile(r"[\^~<>=]*\s*v?\d|\*$|latest$|workspace:|npm:|file:|link:|git|https?:")


def _package_json(hunks: Iterable[Hunk]) -> dict[str, _Side]:
    sides = _new_sides()
    for hunk in hunks:
        current = {ADDED: "", REMOVED: ""}
        for line in hunk.lines:
            stripped = line.text.strip()
            m = _JSON_PAIR.match(stripped)
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                if stripped.startswith("}"):
                    current[side] = ""
                    continue
                if m is None:
                    continue
                key, value, opens = m.group(1), m.group(2), m.group(3)
                if opens:
                    current[side] = key if key in _JS_DEP_OBJECTS else "-"
                    continue
                if line.kind == CONTEXT or value is None:
                    continue
                obj = current[side]
                if obj in _JS_DEP_OBJECTS or (
                    obj == "" and key not in _JS_NOT_PACKAGES and len(line.text) - len(line.text.lstrip()) >= 4 and _SEMVERISH.match(value)
                ):
                    _record(sides, side, obj, key, value, python=False)
    return sides


# --- lock files -------------------------------------------------------------------------


def _lock_versions(
    hunks: Iterable[Hunk],
    name_of: Callable[[str], str | None],
    version_of: Callable[[str], str | None],
    *,
    python: bool,
) -> dict[str, _Side]:
    """One entry per package whose version line was added/removed, named by the nearest name line above."""
    sides = _new_sides()
    for hunk in hunks:
        names = {ADDED: "", REMOVED: ""}
        for line in hunk.lines:
            text = line.text
            name = name_of(text)
            version = version_of(text) if name is None else None
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                if name is not None:
                    names[side] = name
                elif version is not None and line.kind != CONTEXT and names[side]:
                    _record(sides, side, "", names[side], version, python=python)
    return sides


_TOML_LOCK_NAME = re.compile(r'name = "([^"]+)"\s*$')
_TOML_LOCK_VERSION = re.compile(r'version = "([^"]+)"\s*$')


def _toml_lock_name(text: str) -> str | None:
    if text.startswith("[[package]]"):
        return ""
    m = _TOML_LOCK_NAME.match(text) if text.startswith("name = ") else None
    return m.group(1) if m else None


def _toml_lock_version(text: str) -> str | None:
    m = _TOML_LOCK_VERSION.match(text) if text.startswith("version = ") else None
    return m.group(1) if m else None


_NPM_LOCK_NAME = re.compile(r'\s*"(?:[^"]*/)?node_modules/((?:@[^/"]+/)?[^/"]+)"\s*:\s*\{')
_NPM_LOCK_VERSION = re.compile(r'\s*"version"\s*:\s*"([^"]+)"')


def _npm_lock_name(text: str) -> str | None:
    if "node_modules/" not in text:
        return None
    m = _NPM_LOCK_NAME.match(text)
    return m.group(1) if m else None


def _npm_lock_version(text: str) -> str | None:
    m = _NPM_LOCK_VERSION.match(text) if '"version"' in text else None
    return m.group(1) if m else None


def _yarn_lock_name(text: str) -> str | None:
    if not text or text[0] in " #\t" or not text.rstrip().endswith(":"):
        return None
    first = text.rstrip()[:-1].split(",")[0].strip().strip('"')
    at = first.find("@", 1)
    return first[:at] if at > 0 else first


def _yarn_lock_version(text: str) -> str | None:
    stripped = text.strip()
    if not stripped.startswith("version"):
        return None
    value = stripped[len("version") :].strip().lstrip(":").strip().strip('"')
    return value or None


# --- go.mod, Dockerfiles, submodules -------------------------------------------------------

_GO_REQUIRE = re.compile(r"(?:require\s+)?([A-Za-z0-9][\w.~/-]*)\s+(v\d[\w.+-]*)")


def _go_mod(hunks: Iterable[Hunk]) -> dict[str, _Side]:
    sides = _new_sides()
    for side, text in _changed_lines(hunks):
        m = _GO_REQUIRE.match(text.strip())
        if m is not None and "." in m.group(1):
            _record(sides, side, "", m.group(1), m.group(2), python=False)
    return sides


_FROM = re.compile(r"FROM\s+(?:--platform=\S+\s+)?([^\s:@]+)(?::([^\s@]+))?(?:@(\S+))?", re.IGNORECASE)
_ARG_VERSION = re.compile(r"(?:ARG|ENV)\s+([A-Za-z0-9_]+?)_VERSION(?:=|\s+)[\"']?([^\s\"']+)", re.IGNORECASE)
_PIP_INSTALL = re.compile(r"\bpip3?\s+install\b|\bpython3?\s+-m\s+pip\s+install\b")
_PIP_OPTIONS_WITH_VALUE = frozenset(
    "-r --requirement -c --constraint -i --index-url --extra-index-url -f --find-links -t --target --prefix --root"
    " --platform --python-version --implementation --abi --only-binary --no-binary -C --config-settings"
    " --trusted-host --progress-bar --cache-dir --src --global-option --install-option".split()
)
_SHELL_STOP = ("&&", "||", ";", "|", ">", ">>", "2>&1")


class _PipState:
    __slots__ = ("active", "skip_value")

    def __init__(self) -> None:
        self.active = False
        self.skip_value = False


def _pip_tokens(state: _PipState, text: str) -> list[str]:
    """Package arguments of ``pip install`` on this line (continuing a previous ``\\`` line)."""
    body = text
    if not state.active:
        m = _PIP_INSTALL.search(text)
        if m is None:
            return []
        state.active, state.skip_value = True, False
        body = text[m.end() :]
    continues = body.rstrip().endswith("\\")
    tokens: list[str] = []
    for token in body.replace("\\", " ").split():
        if token in _SHELL_STOP or token.startswith(("&&", ";", "|")):
            state.active = False
            return tokens
        if token.endswith((";", "&&", "|")):
            # ``pip install vllm==0.17.0; \`` ends the command at the separator: what
            # follows (``else``, ``fi``, another command) is shell, not packages.
            state.active = False
            token = token.rstrip(";&|")
            if token and not token.startswith("-") and not state.skip_value:
                tokens.append(token.strip("\"'"))
            return tokens
        if state.skip_value:
            state.skip_value = False
            continue
        if token.startswith("-"):
            state.skip_value = token in _PIP_OPTIONS_WITH_VALUE
            continue
        tokens.append(token.strip("\"'"))
    if not continues:
        state.active = False
    return tokens


def _dockerfile(hunks: Iterable[Hunk]) -> dict[str, _Side]:
    sides = _new_sides()
    for hunk in hunks:
        pip = {ADDED: _PipState(), REMOVED: _PipState()}
        for line in hunk.lines:
            text = line.text.strip()
            for side in (ADDED, REMOVED) if line.kind == CONTEXT else (line.kind,):
                tokens = _pip_tokens(pip[side], text) if ("pip" in text or pip[side].active) else []
                if line.kind == CONTEXT:
                    continue
                for token in tokens:
                    if "/" in token or token.startswith(".") or token.endswith((".whl", ".tar.gz", ".zip")):
                        vcs = vcs_requirement(token) if "+" in token else None
                        if vcs is not None:
                            _record(sides, side, "pip", *vcs)
                        continue
                    found = parse_requirement(token)
                    if found is not None:
                        _record(sides, side, "pip", *found)
                upper = text[:4].upper()
                if upper == "FROM":
                    m = _FROM.match(text)
                    # "FROM builder" without a tag or registry path names an earlier stage.
                    # "FROM ${BASE_IMAGE:-x}" names a build argument: which image is not in the line.
                    if m is not None and "$" not in text and (m.group(2) or m.group(3) or "/" in m.group(1)):
                        _record(sides, side, "image", m.group(1), m.group(2) or m.group(3) or "latest", python=False)
                elif upper in ("ARG ", "ENV ") and "VERSION" in text.upper():
                    m = _ARG_VERSION.match(text)
                    if m is not None:
                        name = m.group(1).lower().replace("_", "-")
                        _record(sides, side, "version-arg", name, m.group(2), python=False)
    return sides


def submodule_change(path: str, hunks: Sequence[Hunk]) -> tuple[DependencyChange, ...]:
    """The move of a git submodule pointer (``Subproject commit <sha>`` lines) as one change."""
    old = new = ""
    for side, text in _changed_lines(hunks):
        if text.startswith("Subproject commit "):
            sha = text[len("Subproject commit ") :].strip()
            if side == ADDED:
                new = sha
            else:
                old = sha
    if not old and not new:
        return ()
    action = "changed" if old and new else "added" if new else "removed"
    return (DependencyChange(path, action, old, new, path, "commit" if old and new else ""),)


# --- dispatch -----------------------------------------------------------------------------


#: A shell script that installs the project's dependencies (``install_vllm_mcore.sh``).
_INSTALL_SCRIPT = re.compile(r"(?:install|setup|build)[\w.-]*\.sh")


def dependency_changes(path: str, hunks: Sequence[Hunk]) -> tuple[DependencyChange, ...]:
    """Dependency changes in one file's hunks, chosen by its file name.

    ``path`` is the file's path in the repository; files that are not dependency
    manifests or lock files give ``()``. Never raises.
    """
    if not hunks:
        return ()
    name = posixpath.basename(path).lower()
    sides: dict[str, _Side] | None = None
    if name.endswith((".txt", ".in")) and (name.startswith(("requirements", "constraints")) or "/requirements/" in f"/{path}"):
        sides = _requirements(hunks)
    elif name in ("pyproject.toml", "cargo.toml", "pipfile"):
        sides = _toml_manifest(hunks)
    elif name == "setup.py":
        sides = _setup_py(hunks)
    elif name == "setup.cfg":
        sides = _loose_lines(hunks, list_items=False)
    elif name.startswith("environment") and name.endswith((".yml", ".yaml")):
        sides = _loose_lines(hunks, list_items=True)
    elif name == "package.json":
        sides = _package_json(hunks)
    elif name == "go.mod":
        sides = _go_mod(hunks)
    elif name.startswith("dockerfile") or name.endswith(".dockerfile") or _INSTALL_SCRIPT.fullmatch(name):
        sides = _dockerfile(hunks)  # an install script's `pip install` lines read as a Dockerfile's
        # An `ARG X_VERSION=v` declared or dropped installs nothing by itself (the `RUN` that
        # uses it may be unchanged or use another value): only a changed value is a change.
        for one, other in ((sides[ADDED], sides[REMOVED]), (sides[REMOVED], sides[ADDED])):
            for key in [k for k in one if k[0] == "version-arg" and k not in other]:
                del one[key]
    elif name in ("uv.lock", "poetry.lock", "pdm.lock", "cargo.lock", "pylock.toml") or (name.startswith("pylock.") and name.endswith(".toml")):
        sides = _lock_versions(hunks, _toml_lock_name, _toml_lock_version, python=name != "cargo.lock")
    elif name in ("package-lock.json", "npm-shrinkwrap.json"):
        sides = _lock_versions(hunks, _npm_lock_name, _npm_lock_version, python=False)
    elif name == "yarn.lock":
        sides = _lock_versions(hunks, _yarn_lock_name, _yarn_lock_version, python=False)
    if sides is None:
        return ()
    return _pair(path, sides[REMOVED], sides[ADDED])
