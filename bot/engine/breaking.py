"""Which behaviour facts are breaking for an existing user, and the evidence each rests on.

Pure helpers of :func:`bot.engine.classify.breaking_reasons`. A breaking claim states
a consequence for someone who used the project before this pull request; when that
consequence cannot be known from the diff, the fact is not claimed breaking
(precision before recall):

* a new check that refuses input only on a branch the pull request itself adds, or
  whose condition names an option, field, parameter or function the same pull
  request introduces, or that replaces another check of the same function, cannot
  refuse what an existing configuration did (``Edit.consequence == "new_only"``
  says so directly once exact edits are filled in);
* a return annotation that changes is no contract change on its own;
* a default that becomes an interpolation (``${model_engine}_actor``) or a
  ``_target_`` class path has a value the diff does not show;
* keys removed from a composed config (Hydra ``defaults:`` changed in the same file)
  may still come from the composition;
* keys of a tool's own settings (a file under a dot directory such as ``.gemini/`` or
  ``.github/``) are read by that tool, not set by users' configs.
"""

from __future__ import annotations

import re
from typing import Any

from bot.engine.analysis.model import DiffAnalysis, Evidence, FileAnalysis
from bot.engine.analysis.pybehaviour import code_only

#: Exceptions that refuse input; an ``assert`` is an internal invariant, not a contract.
REFUSALS = (
    "ValueError",
    "TypeError",
    "KeyError",
    "NotImplementedError",
    "RuntimeError",
    "FileNotFoundError",
    "PermissionError",
)
#: A removed-file-wide group of key removals past this many becomes one claim.
MAX_KEYS_PER_FILE = 3

_WORD = re.compile(r"[A-Za-z_]\w*")
_ADDED_PARAM = re.compile(r"added (?:required parameter )?`\**(\w+)")
_CONDITION = re.compile(r"^\s*(?:el)?if\s+(.*?):\s")


#: :func:`callers_rewritten` makes the joined removed lines itself.
_MADE_HERE = object()


def fact_evidence(fact: Any) -> Evidence:
    """The diff line a :class:`~bot.engine.analysis.model.BehaviourFact` rests on."""
    return Evidence(fact.path, fact.line, fact.line, fact.old, fact.new)


def introduced_names(analysis: DiffAnalysis) -> frozenset[str]:
    """Names this pull request brings into being: config keys and class fields added
    (whole and their last part), definitions added, parameters added to a signature."""
    out: set[str] = set()
    for f in analysis.files:
        for key in f.config_keys_added:
            out.add(key)
            out.add(key.rpartition(".")[2])
        for d in f.definitions_added:
            out.add(d.name.rpartition(".")[2])
        for b in f.behaviour:
            if b.kind in ("signature_changed", "parameter_added"):
                out.update(_ADDED_PARAM.findall(b.detail))
    return frozenset(n for n in out if len(n) >= 3)


def breaking_check(
    fact: Any, f: FileAnalysis, introduced: frozenset[str], analysis: DiffAnalysis
) -> str:
    """The condition text (``if x < 0: raise ValueError(...)``) when a new check
    refuses input an existing user could pass, else ``""``.

    Required: a refusal (not an assertion), in a function that existed before, under
    an ``if``/``elif`` that is not itself new (a new branch routes input the old code
    may have refused elsewhere), whose condition names nothing this pull request
    introduces, with no check of the same function removed (a replaced check), and
    no exact edit marking it ``new_only``.
    """
    if f.kind != "source" or not fact.detail.startswith(REFUSALS):
        return ""
    added = {d.name for d in f.definitions_added}
    owner = fact.symbol
    while owner:
        if owner in added:
            return ""
        owner = owner.rpartition(".")[0]
    m = _CONDITION.match(fact.new)
    if m is None:
        return ""
    opener = fact.new[: m.end()].strip()
    if any(line.strip() == opener for line in f.added_lines[:2000]):
        return ""
    if set(_WORD.findall(m.group(1))) & introduced:
        return ""
    if any(b.kind == "check_removed" and b.symbol == fact.symbol for b in f.behaviour):
        return ""
    for e in f.edits:
        if (
            e.kind == "raise_added"
            and e.line == fact.line
            and e.consequence == "new_only"
        ):
            return ""
    return fact.new


def signature_detail(detail: str) -> str:
    """A signature change's parts without return-annotation changes ("" when only those)."""
    return "; ".join(
        p for p in detail.split("; ") if p and not p.startswith("return annotation ")
    )


def consequence_known(fact: Any, f: FileAnalysis) -> bool:
    """False when the diff cannot tell what an existing user would see (see the module doc)."""
    if fact.kind == "signature_changed":
        parts = [p for p in signature_detail(fact.detail).split("; ") if p]
        # Parameters added with a default are compatible; only the breaking parts count.
        return any(not p.startswith("added `") for p in parts)
    if fact.kind == "default_changed" and (
        "${" in fact.new or "${" in fact.old or fact.symbol.endswith("_target_")
    ):
        return False
    if fact.kind in ("key_removed", "default_changed") and tool_settings(f.path):
        return False
    composed = fact.kind in ("key_removed", "default_changed") and f.kind == "config"
    return not (
        composed and (fact.symbol.startswith("defaults") or f.composed or _composition_changed(f))
    )


def key_still_read(key: str, analysis: DiffAnalysis) -> bool:
    """True when an added line of the package's source still reads config key ``key`` by its
    last part (``config.get("remove_previous_ckpt_in_save")``, ``cfg.remove_previous_ckpt_in_save``):
    a key gone from the YAML that the code still maps (fresh-o #724, with a deprecation
    warning) is neither refused nor ignored, so no consequence can be stated. The names read
    are gathered once per analysis (a pull request removing thousands of keys asks for each);
    a key among them is then looked for on its lines: a comment, an error message or a
    membership test (``if "k" in cfg: raise …``) names the key without reading its value,
    and a refused key is still a break."""
    last = key.rpartition(".")[2]
    if len(last) < 4 or not last.isidentifier():
        return False
    cached = _READ_NAMES.get(id(analysis))
    if cached is None or cached[0] is not analysis:
        text = "\n".join(line for f in analysis.files if f.kind == "source" for line in f.added_lines)
        cached = (analysis, frozenset(_READ_NAME.findall(text)), text)
        _READ_NAMES.clear()  # one analysis at a time: a guide asks for its own only
        _READ_NAMES[id(analysis)] = cached
    if last not in cached[1]:
        return False
    text = cached[2]
    at = text.find(last)
    for _ in range(_MAX_LOOKS):
        if at < 0:
            return False
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if not line.lstrip().startswith(("#", "raise ")) and _reads(line, last):
            return True
        at = text.find(last, end + 1)
    return at >= 0  # a name on more lines than are looked at: read somewhere, as the names said


def _reads(line: str, last: str) -> bool:
    """True when ``line`` reads ``last``: ``x.last`` in its code (strings and comment left out),
    or ``.get("last"``, ``["last"]``, ``getattr(x, "last"``; not a write (``x.last = …``) nor a
    test of presence (``"last" in cfg``). String scans, no pattern compiled per key."""
    code = code_only(line)
    at = code.find("." + last)
    while at >= 0:
        end = at + 1 + len(last)
        nxt = code[end : end + 1]
        if not (nxt.isalnum() or nxt == "_") and not _assigned(code[end:]):
            return True
        at = code.find("." + last, end)
    raw = line.split("#", 1)[0]
    for quote in ("'", '"'):
        at = raw.find(f"{quote}{last}{quote}")
        while at >= 0:
            before, after = raw[:at].rstrip(), raw[at + len(last) + 2 :].lstrip()
            if (before.endswith((".get(", "[")) or (before.endswith(",") and "getattr(" in before)) and after[:1] in (",", ")", "]"):
                if not (after[:1] == "]" and _assigned(after[1:])):
                    return True
            at = raw.find(f"{quote}{last}{quote}", at + 1)
    return False


def _assigned(rest: str) -> bool:
    """True when ``rest`` (what follows a name) assigns to it: ``= …``, not ``== …``."""
    rest = rest.lstrip()
    return rest[:1] == "=" and rest[:2] != "=="


#: Lines holding a removed key's name looked at for a read of it.
_MAX_LOOKS = 64
#: A name read by the code: quoted whole, or after a dot (the keys worth a look on their lines).
_READ_NAME = re.compile(r"""(?<=["'.])([A-Za-z_]\w{3,})(?=["']|\b)""")
_READ_NAMES: dict[int, tuple[DiffAnalysis, frozenset[str], str]] = {}


def callers_rewritten(name: str, analysis: DiffAnalysis, removed: str | None | object = _MADE_HERE) -> bool:
    """True when the pull request rewrote calls of ``name``: ``name(``, ``.name(`` or a Ray
    actor's ``.name.remote(``, or the
    name passed as a value (``patch(path, name)``, ``executor(self.name, x)``), is on
    a removed line of some file that is not its ``def`` (the author changed the callers
    the repository has). A definition whose callers moved with it is an internal helper
    refactored, not an API removed under its users; an outside caller cannot be seen,
    so this says less rather than guess a break.

    ``removed`` is :func:`removed_code_lines` of ``analysis``, for a caller asking about
    many names (it is made here when not given)."""
    short = name.rpartition(".")[2]
    if not short.isidentifier() or len(short) < 4:
        return False  # "run(", "get(": too common to tell one function's callers
    text = removed_code_lines(analysis) if removed is _MADE_HERE else removed
    call = None
    if text is None:  # a line holds a line break: read line by line
        for f in analysis.files:
            if f.kind in ("docs", "generated"):
                continue
            for line in f.removed_lines:
                if short not in line:
                    continue
                if call is None:
                    call = re.compile(rf"(?<![\w]){re.escape(short)}(?:\(|\.remote\(|\s*[,)\]])|\bimport\b.*(?<![\w.]){re.escape(short)}\b")
                if _reference(call, line):
                    return True
        return False
    assert isinstance(text, str)
    # Both alternatives of the regex hold the name itself: only the lines holding it are
    # searched, found by C-speed scans of the joined lines (a 3,000-file pull request has
    # thousands of removed definitions and tens of thousands of removed lines).
    at = text.find(short)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[start:end]
        if call is None:
            call = re.compile(rf"(?<![\w]){re.escape(short)}(?:\(|\.remote\(|\s*[,)\]])|\bimport\b.*(?<![\w.]){re.escape(short)}\b")
        if _reference(call, line):
            return True
        at = text.find(short, end + 1)
    return False


def _reference(call: re.Pattern[str], line: str) -> bool:
    """True when removed ``line`` refers to ``short`` in code, its comment and strings left
    out (``# load_x(path) reads …`` is no caller), and is not its ``def``."""
    return not line.lstrip().startswith(("def ", "async def ", "class ")) and call.search(code_only(line)) is not None


def removed_code_lines(analysis: DiffAnalysis) -> str | None:
    """The removed lines of every file but docs and generated ones, joined by line breaks;
    ``None`` when one of them holds a line break itself (a diff line never does)."""
    lines = [line for f in analysis.files if f.kind not in ("docs", "generated") for line in f.removed_lines]
    text = "\n".join(lines)
    return text if text.count("\n") == max(len(lines) - 1, 0) else None


def tool_settings(path: str) -> bool:
    """True for a file in a dot directory or a dotfile (``.gemini/config.yaml``,
    ``.github/dependabot.yml``, ``.pre-commit-config.yaml``): a tool's settings."""
    return any(part.startswith(".") for part in path.split("/"))


def local_helper(name: str, f: FileAnalysis) -> bool:
    """True when the removed function ``name`` was called on removed lines of its own file
    (``get_device_uuid`` called ``device_id_to_physical_device_id``, and both changed): a
    helper of that file whose caller the same diff rewrote, not an API users import."""
    short = name.rpartition(".")[2]
    if not short.isidentifier() or "." in name:
        return False  # a method: its callers go through the object, not visible here
    return any(_calls(line, short) and not line.lstrip().startswith(("def ", "async def ")) and _calls(code_only(line), short) for line in f.removed_lines)


def _calls(line: str, short: str) -> bool:
    """True when ``line`` holds ``short(`` or ``short.`` not preceded by a word character or
    a dot: what the regex ``(?<![\\w.])short[(.]`` finds, without compiling one per name."""
    at = line.find(short)
    while at >= 0:
        before = line[at - 1] if at else ""
        if line[at + len(short) : at + len(short) + 1] in ("(", ".") and not (before and (before == "." or before.isalnum() or before == "_")):
            return True
        at = line.find(short, at + 1)
    return False


def _composition_changed(f: FileAnalysis) -> bool:
    """True when the file's Hydra ``defaults:`` list changed (its keys come from elsewhere too)."""
    return any(
        k.startswith("defaults.") for k in f.config_keys_added + f.config_keys_removed + f.config_keys_changed
    )


def group_key_removals(claims: list[Any]) -> list[Any]:
    """Claims with more than :data:`MAX_KEYS_PER_FILE` config keys removed from one
    file folded into one ``breaking.keys_removed`` claim (first names, count, evidence)."""
    by_file: dict[str | None, list[Any]] = {}
    for c in claims:
        if c.key == "breaking.key_removed":
            by_file.setdefault(c.file, []).append(c)
    crowded = {
        path for path, group in by_file.items() if len(group) > MAX_KEYS_PER_FILE
    }
    if not crowded:
        return claims
    out: list[Any] = []
    for c in claims:
        if c.key != "breaking.key_removed" or c.file not in crowded:
            out.append(c)
            continue
        group = by_file[c.file]
        if c is group[0]:
            names = tuple(x.params["name"] for x in group)
            evidence = tuple(e for x in group[:MAX_KEYS_PER_FILE] for e in x.evidence)
            out.append(
                type(c)(
                    "breaking.keys_removed",
                    {
                        "file": c.file,
                        "names": names[:MAX_KEYS_PER_FILE],
                        "count": len(names),
                    },
                    c.file,
                    evidence,
                )
            )
    return out
