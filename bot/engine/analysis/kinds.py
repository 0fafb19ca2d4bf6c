"""What a changed file is: its language and its kind (source, test, docs, ...).

Kinds are decided by path globs (``wcmatch`` syntax with ``**`` and dot-folders),
checked in this order, first match wins:

``binary``
    images, archives, wheels, shared objects, fonts... (SVG included: an asset, not
    something to read), and any file GitHub gave no patch for although it is not a pure
    rename and has no known text extension.
``generated``
    lock files (``uv.lock``, ``poetry.lock``, ``package-lock.json``, ``yarn.lock``,
    ``Cargo.lock``, ``go.sum``...), protobuf output (``*_pb2.py``, ``*.pb.go``),
    minified files, source maps, ``vendor``/``_vendor``/``vendored`` and ``generated``
    folders, and files named ``_generated_*`` or ``*_generated.*``.
``docs``
    ``docs/``/``doc/`` folders, Markdown/reST/AsciiDoc anywhere, READMEs, licences,
    change logs, and notebooks outside example folders.
``ci``
    ``.github/workflows/``, ``.github/actions/``, ``.gitlab-ci.yml``, ``.circleci/``,
    ``.buildkite/``, ``ci/``, ``.ci/``, Travis/Azure/AppVeyor/Jenkins files,
    ``.pre-commit-config.yaml`` and Dependabot/Renovate settings.
``test``
    ``tests/``/``test/``/``__tests__/`` folders, ``test_*.py``, ``*_test.py``,
    ``conftest.py``, ``*_test.go``, ``*.spec.ts``/``*.test.js`` and friends.
``build``
    requirements files, ``pyproject.toml``, ``setup.py``/``setup.cfg``, Dockerfiles
    and ``docker/`` folders, Makefiles, CMake, ``package.json``, ``go.mod``,
    ``Cargo.toml``, Bazel/Gradle/Maven files, ``.gitmodules``, ``VERSION`` files and
    submodule pointers.
``example``
    ``examples/``, ``example/``, ``samples/``, ``demo(s)/`` folders, and launch scripts
    named ``run_*.sh`` or ``*.slurm`` elsewhere, and any other shell script whose diff
    shows it starting a Python job (``python3 -m ...``, ``torchrun``): they are what users
    copy to start a job. Folders called ``recipe(s)/`` stay ``source``: in most projects they hold
    importable code, even when their launch scripts count as examples.
``config``
    YAML/TOML/JSON/INI/CFG files and dot-files such as ``.gitignore`` or
    ``CODEOWNERS``.
``source``
    everything else.

Callers may put their own globs in front (:func:`kind_of` ``extra``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

import bracex
from wcmatch import fnmatch, glob

from bot.engine.analysis.model import KINDS

_FLAGS = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.IGNORECASE
_NAME_FLAGS = fnmatch.DOTMATCH | fnmatch.BRACE | fnmatch.IGNORECASE

BINARY_EXTENSIONS = frozenset(
    """
    png jpg jpeg gif bmp ico icns webp tif tiff svg psd avif heic
    pdf doc docx xls xlsx ppt pptx odt
    zip gz tgz bz2 xz zst 7z rar tar jar war whl egg
    so dylib dll exe bin o a lib obj class pyc pyd wasm
    ttf otf woff woff2 eot
    mp3 mp4 wav ogg flac avi mov mkv webm
    pt pth ckpt safetensors onnx h5 npy npz pkl pickle parquet arrow db sqlite
    """.split()
)

#: (kind, globs) in the order they are tried; a kind may appear twice.
_KIND_GLOBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("generated", (
        "**/{uv,poetry,pdm,Pipfile,Cargo,Gemfile,composer,flake,pnpm-lock,bun}.lock",
        "**/{package-lock,npm-shrinkwrap}.json",
        "**/yarn.lock",
        "**/pnpm-lock.yaml",
        "**/go.sum",
        "**/*.lock",
        "**/*_pb2.py",
        "**/*_pb2_grpc.py",
        "**/*_pb2.pyi",
        "**/*.pb.go",
        "**/*.pb.{h,cc}",
        "**/*.min.{js,css}",
        "**/*.{js,css}.map",
        "**/{vendor,_vendor,vendored,generated,__generated__}/**",
        "**/_generated_*",
        "**/*_generated.*",
        "**/*.generated.*",
        "**/*.pot",  # gettext templates: extracted from the source by xgettext or pybabel
    )),
    ("docs", (
        "**/{docs,doc,documentation}/**",
        "**/*.{md,markdown,rst,adoc,asciidoc}",
        "**/{README,CHANGELOG,CHANGES,HISTORY,NEWS,AUTHORS,CONTRIBUTORS,NOTICE}",
        "**/{README,CHANGELOG,CHANGES,HISTORY,NEWS,AUTHORS,CONTRIBUTORS,NOTICE}.txt",
        "**/{LICENSE,LICENCE,COPYING}{,.*}",
        "mkdocs.{yml,yaml}",
    )),
    ("ci", (
        ".github/workflows/**",
        ".github/actions/**",
        ".github/{dependabot,renovate}.{yml,yaml,json}",
        "{renovate,.renovaterc}{,.json,.json5}",
        ".gitlab-ci.yml",
        ".gitlab/ci/**",
        ".circleci/**",
        ".buildkite/**",
        "{ci,.ci}/**",
        ".travis.yml",
        "azure-pipelines.{yml,yaml}",
        "appveyor.{yml,yaml}",
        "**/Jenkinsfile",
        ".pre-commit-config.{yml,yaml}",
        ".pre-commit-hooks.{yml,yaml}",
    )),
    ("test", (
        "**/{tests,test,testing,__tests__,spec}/**",
        "**/test_*.py",
        "**/*_test.py",
        "**/conftest.py",
        "**/*_test.go",
        "**/*.{spec,test}.{js,jsx,ts,tsx,mjs,cjs}",
        "**/*_spec.rb",
        "**/*{Test,Tests}.{java,kt,cs,swift}",
    )),
    ("build", (
        "**/requirements*.{txt,in}",
        "**/requirements/*.{txt,in}",
        "**/constraints*.txt",
        "**/pyproject.toml",
        "**/setup.{py,cfg}",
        "**/MANIFEST.in",
        "**/Pipfile",
        "**/environment*.{yml,yaml}",
        "**/Dockerfile*",
        "**/*.dockerfile",
        "**/{docker-compose,compose}*.{yml,yaml}",
        "**/.dockerignore",
        "docker/**",
        "**/{Makefile,GNUmakefile,makefile}",
        "**/*.mk",
        "**/CMakeLists.txt",
        "**/*.cmake",
        "**/package.json",
        "**/go.mod",
        "**/Cargo.toml",
        "**/*.gradle{,.kts}",
        "**/pom.xml",
        "**/{BUILD,BUILD.bazel,WORKSPACE,WORKSPACE.bazel,MODULE.bazel}",
        "**/*.bzl",
        "**/meson.build",
        ".gitmodules",
        "**/{VERSION,version}{,.txt}",
        "**/{install,setup,build}{,_*,-*}.sh",
    )),
    ("example", (
        "**/{examples,example,samples,sample,demo,demos}/**",
        "**/run_*.sh",
        "**/*.slurm",
    )),
    ("docs", ("**/*.ipynb",)),
    ("config", (
        "**/*.{yml,yaml,toml,json,json5,jsonc,ini,cfg,conf,properties,env}",
        "**/.{gitignore,gitattributes,editorconfig,flake8,pylintrc,coveragerc,clang-format,clang-tidy}",
        "**/.{prettierrc,eslintrc,npmrc,yarnrc,nvmrc,python-version,tool-versions}{,.*}",
        "**/CODEOWNERS",
    )),
)


_LANGUAGE_BY_EXTENSION = {
    "py": "python", "pyi": "python", "pyx": "cython",
    "sh": "shell", "bash": "shell", "zsh": "shell", "slurm": "shell", "ksh": "shell",
    "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp", "inl": "cpp",
    "cu": "cuda", "cuh": "cuda",
    "go": "go", "rs": "rust",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "javascript",
    "ts": "typescript", "tsx": "typescript", "mts": "typescript", "cts": "typescript",
    "java": "java", "kt": "kotlin", "kts": "kotlin", "scala": "scala", "swift": "swift",
    "rb": "ruby", "php": "php", "cs": "csharp", "lua": "lua", "r": "r", "jl": "julia",
    "sql": "sql", "proto": "protobuf", "html": "html", "css": "css", "scss": "css",
    "md": "markdown", "markdown": "markdown", "rst": "restructuredtext", "adoc": "asciidoc",
    "ipynb": "jupyter",
    "yml": "yaml", "yaml": "yaml", "toml": "toml", "lock": "toml", "json": "json",
    "ini": "ini", "cfg": "ini",
    "cmake": "cmake", "mk": "make", "dockerfile": "dockerfile",
}

_LANGUAGE_BY_NAME = {
    "dockerfile": "dockerfile", "makefile": "make", "gnumakefile": "make", "cmakelists.txt": "cmake",
    "jenkinsfile": "groovy", "go.mod": "go-mod", "pipfile": "toml", "setup.cfg": "ini", "tox.ini": "ini",
    ".gitmodules": "ini", "yarn.lock": "yarn-lock",
}

_SHEBANG_LANGUAGES = (("python", "python"), ("bash", "shell"), ("/sh", "shell"), ("zsh", "shell"), ("node", "javascript"))

#: Extensions known to be text, so a missing patch on them does not mean binary.
_TEXT_EXTENSIONS = frozenset(_LANGUAGE_BY_EXTENSION) | {"txt", "in", "cfg", "conf", "env", "csv", "tsv", "xml"}


_WILD = re.compile(r"[*?\[]")
_WILD_RUN = re.compile(r"[*?]+")


def _literals(globs: Sequence[str]) -> tuple[str, ...] | None:
    """For each glob, the longest text every path it matches contains; None when one has none.

    A path holding none of them cannot match, so the (slow) regex need not run. The
    slashes at the ends of a run are dropped: ``**/`` also matches nothing. Globs with a
    bracket class (``[]x]``, ``[[:digit:]]``), an escape or non-ASCII text get no guard:
    their literal text is not worth parsing the class syntax for.
    """
    found = []
    for pattern in globs:
        if "[" in pattern or "\\" in pattern or not pattern.isascii():
            return None
        best = max((run.strip("/") for run in _WILD_RUN.split(pattern)), key=len, default="")
        if len(best) < 2:
            return None
        found.append(best)
    return tuple(dict.fromkeys(found))


def _may_match(literals: tuple[str, ...] | None, path: str) -> bool:
    # Case-insensitive regexes also fold non-ASCII letters (``ſ`` matches ``s``); the
    # substring test is only a shortcut for ASCII paths.
    if literals is None or not path.isascii():
        return True
    for text in literals:  # a loop, not any(): no generator to make for every path
        if text in path:
            return True
    return False


class GlobSet:
    """A list of ``wcmatch`` globs (``**``, braces, dot-folders, case-insensitive) compiled for speed.

    Most path globs are a folder name anywhere (``**/tests/**``), a folder at the root
    (``docs/**``), a file name anywhere (``**/conftest.py``) or a file-name prefix or
    suffix (``**/Dockerfile*``, ``**/*_test.go``). Those become set and ``startswith``/
    ``endswith`` checks; only the rest go through ``wcmatch``'s regexes, which cost tens of
    microseconds per path - too much for 3000 files times nine kinds. Raises
    ``ValueError`` for a glob ``wcmatch`` rejects.
    """

    __slots__ = (
        "paths", "prefixes", "dirs", "names", "name_prefixes", "name_suffixes", "name_regex", "name_literals", "path_regex",
        "path_literals",
    )

    def __init__(self, patterns: Sequence[str]):
        self.paths: set[str] = set()
        self.dirs: set[str] = set()
        self.names: set[str] = set()
        prefixes: list[str] = []
        name_prefixes: list[str] = []
        name_suffixes: list[str] = []
        name_globs: list[str] = []
        path_globs: list[str] = []
        for pattern in patterns:
            for p in bracex.expand(pattern.lower().lstrip("/"), limit=1000):
                if not _WILD.search(p):
                    self.paths.add(p)
                    continue
                if p.endswith("/**"):
                    head = p[:-3]
                    inner = head[3:] if head.startswith("**/") else ""
                    if inner and "/" not in inner and not _WILD.search(inner):
                        self.dirs.add(inner)
                        continue
                    if not _WILD.search(head):
                        prefixes.append(head + "/")
                        continue
                if p.startswith("**/") and "/" not in p[3:]:
                    name = p[3:]
                    wild = _WILD.findall(name)
                    if not wild:
                        self.names.add(name)
                    elif wild == ["*"] and name.endswith("*"):
                        name_prefixes.append(name[:-1])
                    elif wild == ["*"] and name.startswith("*"):
                        name_suffixes.append(name[1:])
                    else:
                        name_globs.append(name)
                    continue
                path_globs.append(p)
        self.prefixes = tuple(prefixes)
        self.name_prefixes = tuple(name_prefixes)
        self.name_suffixes = tuple(name_suffixes)
        self.name_regex = _compile(fnmatch.translate(name_globs, flags=_NAME_FLAGS)[0]) if name_globs else None
        self.path_regex = _compile(glob.translate(path_globs, flags=_FLAGS)[0]) if path_globs else None
        self.path_literals = _literals(path_globs)
        self.name_literals = _literals(name_globs)

    def match(self, path: str) -> bool:
        """True when ``path`` (repository-relative, ``/``-separated) matches one of the globs."""
        path = path.lower().lstrip("/")
        folders, _, name = path.rpartition("/")
        return self.match_split(path, folders.split("/") if folders else (), name)

    def match_split(self, path: str, folders: Sequence[str], name: str) -> bool:
        """:meth:`match` for an already lower-cased ``path``, its folder names and file name."""
        if self.match_name(name) or path in self.paths:
            return True
        if self.dirs and not self.dirs.isdisjoint(folders):
            return True
        if self.prefixes and path.startswith(self.prefixes):
            return True
        return self.path_regex is not None and _may_match(self.path_literals, path) and self.path_regex.match(path) is not None

    def match_name(self, name: str) -> bool:
        """True when the globs that look only at the file name match ``name`` (lower-cased)."""
        if name in self.names:
            return True
        if self.name_prefixes and name.startswith(self.name_prefixes):
            return True
        if self.name_suffixes and name.endswith(self.name_suffixes):
            return True
        return self.name_regex is not None and _may_match(self.name_literals, name) and self.name_regex.match(name) is not None


class _Classifier:
    """Ordered (kind, globs) rules answering "first matching kind" with a few lookups per path.

    File-name verdicts are cached (big PRs repeat ``__init__.py``, ``README.md``...),
    folder names and exact paths are dictionary lookups, and only the rare globs that
    need a full-path regex are run as such.
    """

    _NONE = 1 << 30

    def __init__(self, rules: Sequence[tuple[str, GlobSet]]):
        self.rules = tuple(rules)
        self.dir_rank: dict[str, int] = {}
        self.path_rank: dict[str, int] = {}
        self.prefixes: list[tuple[str, int]] = []
        self.regexes: list[tuple[re.Pattern[str], tuple[str, ...] | None, int]] = []
        self.name_cache: dict[str, int] = {}
        # The file-name globs of every rule, by shape, in rank order: a name is looked up
        # once in the exact names and tested once against all prefixes and all suffixes
        # before any rule's own are tried.
        self.name_rank: dict[str, int] = {}
        self.name_prefixes: list[tuple[str, int]] = []
        self.name_suffixes: list[tuple[str, int]] = []
        self.name_regexes: list[tuple[re.Pattern[str], tuple[str, ...] | None, int]] = []
        for rank, (_kind, globs) in enumerate(self.rules):
            for folder in globs.dirs:
                self.dir_rank.setdefault(folder, rank)
            for path in globs.paths:
                self.path_rank.setdefault(path, rank)
            self.prefixes.extend((prefix, rank) for prefix in globs.prefixes)
            if globs.path_regex is not None:
                self.regexes.append((globs.path_regex, globs.path_literals, rank))
            for name in globs.names:
                self.name_rank.setdefault(name, rank)
            self.name_prefixes.extend((prefix, rank) for prefix in globs.name_prefixes)
            self.name_suffixes.extend((suffix, rank) for suffix in globs.name_suffixes)
            if globs.name_regex is not None:
                self.name_regexes.append((globs.name_regex, globs.name_literals, rank))
        self.any_name_prefix = tuple(prefix for prefix, _rank in self.name_prefixes)
        # Suffixes by the extension they end with (in rank order): a name can only end with
        # a suffix that ends with its own extension, so a name is tested against those few
        # rather than against every suffix; suffixes without a dot are tested as before.
        self.suffixes_by_ext: dict[str, list[tuple[str, int]]] = {}
        for suffix, rank in self.name_suffixes:
            if "." in suffix:
                self.suffixes_by_ext.setdefault(suffix.rpartition(".")[2], []).append((suffix, rank))
        self.undotted_suffixes = [(suffix, rank) for suffix, rank in self.name_suffixes if "." not in suffix]
        self.any_undotted_suffix = tuple(suffix for suffix, _rank in self.undotted_suffixes)
        self.any_prefix = tuple(prefix for prefix, _rank in self.prefixes)

    def _name_rank(self, name: str) -> int:
        """The first rule whose file-name globs match ``name`` (:meth:`GlobSet.match_name` of each, in order)."""
        rank = self.name_cache.get(name)
        if rank is None:
            rank = self.name_rank.get(name, self._NONE)
            if self.any_name_prefix and name.startswith(self.any_name_prefix):
                rank = min(rank, next(r for p, r in self.name_prefixes if name.startswith(p)))
            dot = name.rfind(".")
            if dot >= 0:
                for suffix, r in self.suffixes_by_ext.get(name[dot + 1 :], ()):
                    if name.endswith(suffix):
                        rank = min(rank, r)
                        break
            if self.any_undotted_suffix and name.endswith(self.any_undotted_suffix):
                rank = min(rank, next(r for x, r in self.undotted_suffixes if name.endswith(x)))
            for regex, literals, r in self.name_regexes:
                if r >= rank:
                    break
                if literals is not None and name.isascii():
                    # :func:`_may_match` written out: a name holding none of the glob's
                    # literal texts cannot match, and the test is cheaper than the regex.
                    for text in literals:
                        if text in name:
                            break
                    else:
                        continue
                if regex.match(name) is not None:
                    rank = r
                    break
            if len(self.name_cache) > 8192:
                self.name_cache.clear()
            self.name_cache[name] = rank
        return rank

    def kind(self, path: str, folders: Sequence[str], name: str) -> str | None:
        """The first kind whose globs match the lower-cased ``path``, or ``None``."""
        best = self._name_rank(name)
        dir_rank = self.dir_rank
        for folder in folders:
            rank = dir_rank.get(folder)
            if rank is not None and rank < best:
                best = rank
        rank = self.path_rank.get(path)
        if rank is not None and rank < best:
            best = rank
        if self.any_prefix and path.startswith(self.any_prefix):
            for prefix, rank in self.prefixes:
                if rank < best and path.startswith(prefix):
                    best = rank
        for regex, literals, rank in self.regexes:
            if rank < best and _may_match(literals, path) and regex.match(path):
                best = rank
        return self.rules[best][0] if best != self._NONE else None


def _compile(regexes: Sequence[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{r})" for r in regexes))


_BUILT_IN = _Classifier([(kind, GlobSet(patterns)) for kind, patterns in _KIND_GLOBS])


@lru_cache(maxsize=64)
def _compile_extra(items: tuple[tuple[str, tuple[str, ...]], ...]) -> _Classifier:
    return _Classifier([(kind, GlobSet(patterns)) for kind, patterns in items if patterns])


def validate_kind_globs(extra: Mapping[str, Sequence[str]]) -> None:
    """Raise ``ValueError`` naming the first unknown kind or bad glob in ``extra``."""
    for kind, patterns in extra.items():
        if kind not in KINDS:
            raise ValueError(f"unknown file kind {kind!r}; known kinds: {', '.join(KINDS)}")
        if isinstance(patterns, str) or not all(isinstance(p, str) and p for p in patterns):
            raise ValueError(f"kind {kind!r}: globs must be a list of non-empty strings")
        try:
            GlobSet(list(patterns))
        except (re.error, ValueError) as exc:
            raise ValueError(f"kind {kind!r}: bad glob: {exc}") from exc


def extension_of(path: str) -> str:
    """The lower-case extension of ``path`` without the dot (``""`` when none)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot + 1 :].lower() if dot > 0 else ""


def language_of(path: str, first_line: str | None = None) -> str | None:
    """The language of ``path`` (``"python"``, ``"yaml"``, ``"shell"``...), or ``None``.

    Decided by file name (``Dockerfile.rocm``, ``Makefile``), then extension, then a
    ``#!`` line in ``first_line`` (the first line of an added file) when the extension
    says nothing.
    """
    name = path.rpartition("/")[2].lower()
    if name in _LANGUAGE_BY_NAME:
        return _LANGUAGE_BY_NAME[name]
    if name.startswith("dockerfile") or name.endswith(".dockerfile"):
        return "dockerfile"
    if (name.startswith(("requirements", "constraints"))) and name.endswith((".txt", ".in")):
        return "pip-requirements"
    language = _LANGUAGE_BY_EXTENSION.get(extension_of(path))
    if language is None and first_line and first_line.startswith("#!"):
        for needle, shebang_language in _SHEBANG_LANGUAGES:
            if needle in first_line:
                return shebang_language
    return language


_SUBMODULE_PATCH = re.compile(r"@@ [^\n]*@@[^\n]*\n(?:[-+]Subproject commit [0-9a-f]{7,64}(?:-dirty)?(?:\n|$)){1,2}")


def is_submodule_patch(patch: str | None) -> bool:
    """True when a patch only moves a git submodule pointer (``Subproject commit <sha>`` lines)."""
    if not patch or len(patch) >= 300 or "Subproject commit" not in patch:
        return False
    return _SUBMODULE_PATCH.fullmatch(patch) is not None


def looks_binary(path: str, *, status: str, patch: str | None, changes: int) -> bool:
    """True for assets by extension, and for files GitHub gave no patch although they changed text.

    A pure rename (``renamed``/``copied`` with 0 changes) and an empty text file added
    or removed also come without a patch; those are not binary.
    """
    ext = extension_of(path)
    if ext in BINARY_EXTENSIONS:
        return True
    if patch is not None:
        return False
    if status in ("renamed", "copied", "unchanged"):
        return False
    if changes > 0:
        return False  # text too large to show: GitHub omits the patch, the file stays what its path says
    return ext not in _TEXT_EXTENSIONS and language_of(path) is None


#: A line of a shell script that starts a Python job: such a script is a launch recipe.
_LAUNCH = re.compile(r"^(?:[ +\-]|@@[^@\n]*@@ )\s*(?:[A-Z_]+=\S*\s+)*(?:python3?\s+-m\s|python3?\s+\S+\.py\b|torchrun\s)", re.M)


def kind_of(
    path: str,
    *,
    status: str = "modified",
    patch: str | None = "",
    changes: int = 0,
    extra: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The kind of one changed file: one of :data:`bot.engine.analysis.model.KINDS`.

    ``status``, ``patch`` and ``changes`` are the fields of GitHub's "List pull requests
    files" entry (``patch=None`` when GitHub omitted it). ``extra`` maps kinds to globs
    checked before the built-in ones (validate them with :func:`validate_kind_globs`;
    an invalid mapping raises ``ValueError``).
    """
    path = path.lstrip("/")
    lower = path.lower()
    folder_path, _, name = lower.rpartition("/")
    folders = folder_path.split("/") if folder_path else ()
    if extra:
        kind = _compile_extra(tuple((k, tuple(v)) for k, v in extra.items())).kind(lower, folders, name)
        if kind is not None:
            return kind
    if looks_binary(path, status=status, patch=patch, changes=changes):
        return "binary"
    if is_submodule_patch(patch):
        return "build"
    kind = _BUILT_IN.kind(lower, folders, name)
    if kind is None and name.endswith(".sh") and patch and ("python" in patch or "torchrun" in patch) and _LAUNCH.search(patch):
        return "example"  # a script that starts a job (``python3 -m verl.trainer.main_ppo ...``)
    return kind or "source"
