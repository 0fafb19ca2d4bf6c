"""Risk lines from exact code tokens: what a changed code line adds or removes, never a keyword hit.

Pure. A risk factor of :mod:`bot.engine.classify` rests on one token of a Python file
whose count differs between the file's removed and added code lines (comments and
string literals left out, whole calls, not substrings): a ``.float()`` cast added, an
``eval(`` removed, a ``threading.Lock()`` added. A token present as often on both
sides (a moved or re-indented line, an unchanged call given new arguments) is no
change and says nothing. The sentence states what was seen, with the line it was
seen on; it never guesses a consequence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from bot.engine.analysis.model import Evidence, FileAnalysis
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, parse_patch
from bot.engine.snapshot import PullRequestSnapshot

#: Exact tokens by risk kind. Each alternative is a whole call or keyword argument
#: (``(?<![\w.])`` keeps ``literal_eval(`` and ``my_eval(`` out of ``eval(``).
_TOKENS: dict[str, re.Pattern[str]] = {
    # casts and dtype moves, and the operations that decide what a gradient is
    "numerics": re.compile(
        r"\.(?:float|half|bfloat16|double)\(\)"
        r"|\.to\((?:torch\.(?:float|bfloat|half|double)\w*|[\w.]*dtype)\)"
        r"|\.detach\(\)|\.backward\(|(?<![\w.])torch\.no_grad\(\)|\.requires_grad_\(|(?<![\w.])clip_grad_norm_\("
    ),
    # threads, locks, tasks and collectives: things that run at the same time or wait for each other
    "concurrency": re.compile(
        r"(?<![\w.])(?:threading\.(?:Thread|Lock|RLock|Semaphore|Condition|Event)"
        r"|asyncio\.(?:gather|create_task|Lock|Semaphore|Event|wait_for)"
        r"|(?:torch\.)?(?:dist|distributed)\.(?:all_reduce|reduce_scatter\w*|all_gather\w*|broadcast|barrier)"
        r"|multiprocessing\.(?:Process|Pool|Queue))\("
    ),
    # code that executes or deserialises what it is given
    "untrusted": re.compile(
        r"(?<![\w.])(?:eval|exec|os\.system|pickle\.loads?|yaml\.load|yaml\.unsafe_load|torch\.load)\(|shell=True|trust_remote_code=True"
    ),
}
#: A cheap substring test per kind before its regex: most files contain none of them.
_HINTS: dict[str, tuple[str, ...]] = {
    "numerics": (
        ".float()",
        ".half()",
        ".bfloat16()",
        ".double()",
        ".to(",
        ".detach()",
        ".backward(",
        "no_grad",
        "requires_grad_",
        "clip_grad_norm_",
    ),
    "concurrency": (
        "threading.",
        "asyncio.",
        "dist.",
        "distributed.",
        "multiprocessing.",
    ),
    "untrusted": (
        "eval(",
        "exec(",
        "system(",
        "pickle.",
        "yaml.",
        "torch.load(",
        "shell=True",
        "trust_remote_code=True",
    ),
}
KINDS = tuple(_TOKENS)

#: Files and lines per side read (a 3,000-file pull request stays fast).
MAX_FILES = 300
MAX_LINES = 400

_STRING = re.compile(
    r"'''.*?'''|\"\"\".*?\"\"\"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.DOTALL
)
_COMMENT = re.compile(r"#[^\n]*")


class RiskToken(NamedTuple):
    """A token of kind ``kind`` that the diff of ``path`` adds (``added``) or removes,
    with the line it is on as :class:`Evidence`."""

    kind: str
    path: str
    token: str
    added: bool
    evidence: Evidence


def code_text(lines: Sequence[str]) -> str:
    """``lines`` joined, without comments and string literals (so a word in a docstring,
    a log message or a comment is not code)."""
    text = "\n".join(lines)
    if "'" in text or '"' in text:
        text = _STRING.sub('""', text)
    if "#" in text:
        text = _COMMENT.sub("", text)
    return text


def _counts(text: str, kind: str) -> Counter[str]:
    if not any(h in text for h in _HINTS[kind]):
        return Counter()
    return Counter(m.group(0) for m in _TOKENS[kind].finditer(text))


def risk_tokens(
    snapshot: PullRequestSnapshot, files: Sequence[FileAnalysis]
) -> list[RiskToken]:
    """The first changed risk token of each kind (:data:`KINDS` order) over ``files``
    (Python files only), with the diff line it is on."""
    found: dict[str, tuple[FileAnalysis, str, bool]] = {}
    lines: dict[str, Evidence] = {}
    by_name: dict[str, object] | None = None
    totals: dict[str, tuple[Counter[str], Counter[str]]] = {}
    for f in files[:MAX_FILES]:
        if f.language != "python" or len(found) == len(KINDS):
            continue
        raw = "\n".join(f.added_lines[:MAX_LINES]) + "\n".join(f.removed_lines[:MAX_LINES])
        if not any(h in raw for kind in KINDS if kind not in found for h in _HINTS[kind]):
            continue  # most files hold no hint at all: no comment or string stripping needed
        added = removed = None
        for kind in KINDS:
            if kind in found:
                continue
            if added is None:
                added, removed = (
                    code_text(f.added_lines[:MAX_LINES]),
                    code_text(f.removed_lines[:MAX_LINES]),
                )
            new, old = _counts(added, kind), _counts(removed or "", kind)
            for token in list(new) + list(old):
                if new[token] != old[token]:
                    if kind not in totals:
                        totals[kind] = _pr_counts(files, kind)
                    pr_new, pr_old = totals[kind]
                    if pr_new[token] == pr_old[token]:
                        continue  # moved between files: as many removed elsewhere as added here
                    up = new[token] > old[token]
                    if _CAST.match(token):
                        if by_name is None:
                            by_name = {c.filename: c for c in snapshot.files}
                        patch = getattr(by_name.get(f.path), "patch", None)
                        moved = _unmatched_casts(patch, f.path, token) if patch else None
                        if moved is not None:
                            # A cast counts only where no line on the other side of the same
                            # definition applies it to the same operand: one moved into
                            # another expression (`result = {"p": p.float()}`) is kept.
                            if not moved[up]:
                                up = not up
                            if not moved[up]:
                                continue
                            found[kind] = (f, token, up)
                            lines[kind] = moved[up][0]
                            break
                    found[kind] = (f, token, up)
                    break
    if found and by_name is None:
        by_name = {c.filename: c for c in snapshot.files}
    return [
        RiskToken(
            kind, f.path, token, up, lines[kind] if kind in lines else _evidence((by_name or {}).get(f.path), f.path, token, up)
        )
        for kind, (f, token, up) in found.items()
    ]


#: The numerics tokens that are casts or dtype moves (not ``.detach()``, ``no_grad``...).
_CAST = re.compile(r"\.(?:float|half|bfloat16|double)\(\)$|\.to\(")
#: The operand a cast applies to: the name or attribute chain right before it.
_OPERAND = r"([\w.]*\w)\s*"


_DEF_LINE = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")


def _definition_above(lines: Sequence[object], index: int, side: str, section: str) -> str:
    """The ``def``/``class`` line (its text) that holds ``lines[index]`` on ``side``: the
    nearest one above with less indent, else the hunk header's section. Lines inside an
    open bracket (a dict written over several lines) are passed over, not taken for its end."""
    text = lines[index].text
    level = len(text) - len(text.lstrip())
    for j in range(index - 1, -1, -1):
        line = lines[j]
        if line.kind != side and line.kind != CONTEXT:
            continue
        stripped = line.text.lstrip()
        indent = len(line.text) - len(stripped)
        if stripped and indent < level:
            if _DEF_LINE.match(stripped):
                return stripped
            level = indent
            if not level:
                return ""  # module level
    return section


def _unmatched_casts(patch: object, path: str, token: str) -> dict[bool, list[Evidence]] | None:
    """Where ``token`` (a cast) is applied on one side of ``patch`` to an operand that
    no line on the other side of the same enclosing definition casts the same way:
    ``{True: evidence of such added lines, False: of such removed lines}``. None when
    the patch has no line holding it (a cut-off patch)."""
    sites: dict[bool, list[tuple[str, str, Evidence]]] = {True: [], False: []}
    pattern = re.compile(_OPERAND + re.escape(token))
    for hunk in parse_patch(patch):
        for i, line in enumerate(hunk.lines):
            if line.kind not in (ADDED, REMOVED) or token not in line.text:
                continue
            up = line.kind == ADDED
            code = code_text([line.text])
            operands = [m.group(1) for m in pattern.finditer(code)] or ([""] if token in code else [])
            if not operands:
                continue
            symbol = _definition_above(hunk.lines, i, line.kind, hunk.section)
            n = line.new_line if up else line.old_line
            text = line.text.strip()[:160]
            evidence = Evidence(path, n, n, "" if up else text, text if up else "")
            sites[up].extend((symbol, operand, evidence) for operand in operands)
    if not sites[True] and not sites[False]:
        return None
    out: dict[bool, list[Evidence]] = {}
    for up in (True, False):
        other = {(symbol, operand) for symbol, operand, _ in sites[not up]}
        out[up] = [e for symbol, operand, e in sites[up] if (symbol, operand) not in other]
    return out


def _pr_counts(files: Sequence[FileAnalysis], kind: str) -> tuple[Counter[str], Counter[str]]:
    """How often each ``kind`` token is on the added and on the removed code lines of all
    the pull request's Python files (code moved to another file counts on both sides)."""
    new: Counter[str] = Counter()
    old: Counter[str] = Counter()
    hints = _HINTS[kind]
    for f in files[:MAX_FILES]:
        if f.language == "python":
            for lines, counts in ((f.added_lines[:MAX_LINES], new), (f.removed_lines[:MAX_LINES], old)):
                # code_text only empties strings and drops comments, and no hint holds a quote,
                # a "#" or a line end: lines without a hint give no token, unstripped.
                raw = "\n".join(lines)
                if any(h in raw for h in hints):
                    counts.update(_counts(code_text(lines), kind))
    return new, old


def _evidence(changed: object, path: str, token: str, added: bool) -> Evidence:
    """The first added (or removed) line of ``path`` holding ``token``, with its line number."""
    patch = getattr(changed, "patch", None)
    for hunk in parse_patch(patch) if patch else ():
        for line in hunk.lines:
            if line.kind == ("+" if added else "-") and token in line.text:
                n = line.new_line if added else line.old_line
                text = line.text.strip()[:160]
                return Evidence(
                    path, n, n, "" if added else text, text if added else ""
                )
    return Evidence(path, 0, 0, "" if added else token, token if added else "")


_ENTRY_SCRIPT = re.compile(
    r"(?:^|/)(?:scripts?/[^/]*|__main__\.py|(?:main|run|launch)_\w+\.py|(?:main|run|launch)\.py)$"
)


def entry_script(path: str) -> bool:
    """True for a script run from the command line (``scripts/x.py``, ``main_ppo.py``,
    ``__main__.py``): its functions are nobody's API."""
    return _ENTRY_SCRIPT.search(path) is not None


def existing_functions(files: Sequence[FileAnalysis]) -> list[tuple[str, Evidence]]:
    """``(name, evidence)`` of functions that existed before whose body the diff changes:
    functions around changed lines of modified Python files, minus those the diff adds."""
    out: list[tuple[str, Evidence]] = []
    for f in files[:MAX_FILES]:
        if f.status != "modified" or f.language != "python" or not f.symbols_touched:
            continue
        fresh = {d.name for d in f.definitions_added}
        for name in f.symbols_touched:
            if name not in fresh and name.rpartition(".")[0] not in fresh:
                out.append((name, Evidence(f.path, new=name, source="diff")))
    unique = {n: (n, e) for n, e in out}
    # A class whose method is listed is not a function of its own ("AgentLoopWorker" beside
    # "AgentLoopWorker._compute_score" counted one change twice).
    owners = {m[:i] for m in unique for i, ch in enumerate(m) if ch == "."}  # every n with m.startswith(n + ".")
    return [(n, e) for n, e in unique.values() if n not in owners]
