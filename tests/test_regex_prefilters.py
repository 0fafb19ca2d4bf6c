"""Substring tests put in front of regexes (and a set look-up in place of one) answer as the regexes do.

Each engine function here skips a regex search (and often its compilation) when a cheap
test proves it cannot match; each property test holds the function to the regex alone,
written as the engine had it.
"""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import given, settings, strategies as st

from bot.engine import risk
from bot.engine.analysis.model import DiffAnalysis, FileAnalysis
from bot.engine.analysis.versions import named_on
from bot.engine.breaking import callers_rewritten
from bot.engine.focus.names import _contradicted
from bot.engine.rules.conditions import NameCondition
from bot.engine.rules.schema import _simple_glob

# Pieces that make the regexes' edge cases likely: word and non-word neighbours, letters
# that re.IGNORECASE folds onto ASCII ones (long s, Kelvin sign), dots, dashes, brackets.
_PIECES = ["load_model", "\n", "Load_Model", "import", "from x ", " ", ".", "(", "-", "_", "a", "é", "ſ", "K", "k", "=", ":", "def ", "class ", "\t"]
_line = st.lists(st.sampled_from(_PIECES), max_size=10).map("".join)
_lines = st.lists(_line, max_size=5)


def _reference_callers_rewritten(name: str, analysis: DiffAnalysis) -> bool:
    short = name.rpartition(".")[2]
    if not short.isidentifier() or len(short) < 4:
        return False
    call = re.compile(rf"(?<![\w]){re.escape(short)}\(|\bimport\b.*(?<![\w.]){re.escape(short)}\b")
    for f in analysis.files:
        if f.kind in ("docs", "generated"):
            continue
        for line in f.removed_lines:
            if call.search(line) and not line.lstrip().startswith(("def ", "async def ", "class ")):
                return True
    return False


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["source", "docs", "test"]), _lines), max_size=3),
       st.sampled_from(["load_model", "pkg.load_model", "Load_Model", "ſoad_model", "run"]))
def test_callers_rewritten_answers_as_its_regex(files, name):
    analysis = DiffAnalysis(tuple(FileAnalysis(f"f{i}.py", "modified", kind, removed_lines=tuple(lines))
                                  for i, (kind, lines) in enumerate(files)))
    assert callers_rewritten(name, analysis) == _reference_callers_rewritten(name, analysis)


@settings(max_examples=400, deadline=None)
@given(_lines, st.sampled_from(["load_model", "LOAD_MODEL", "ſoad_model", "kk", "é-x", "a.b", "a\nb", "-x"]))
def test_named_on_answers_as_its_regex(lines, name):
    pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
    assert named_on(name, lines) == any(pattern.search(line) for line in lines)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["`load_model = True`", "`x.load_model: bool = False`", "`k=1` and `load_model=2`", "no span"]),
       st.lists(st.sampled_from(["load_model = True", "load_model: int = 2", "x.load_model=3", "other = 1", "\n", " "]),
                max_size=6).map("".join))
def test_contradicted_answers_as_its_regex(bullet, text):
    def reference(bullet: str, text: str) -> bool:
        for name, value in re.findall(r"`\s*([A-Za-z_][\w.]*)\s*(?::[^`=]*)?=\s*([^`=][^`]*?)\s*`", bullet):
            leaf = re.escape(name.rpartition(".")[2])
            found = re.findall(rf"(?<![\w.]){leaf}\s*(?::[^=\n]*)?=\s*([^\s,)#]+)", text)
            if found and value.strip().rstrip(",") not in {v.rstrip(",") for v in found}:
                return True
        return False

    assert _contradicted(bullet, text) == reference(bullet, text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["megatron", "MCore", "fsdp2", "k8s", "ſglang", "sglang", "a*b", "x?", " vllm "]), min_size=1, max_size=3),
       st.lists(st.sampled_from(["megatron", "mcore", "fsdp2", "k8s", "sglang", "ſglang", "kelvin", "k8s", "axxb", "x!", "vllm"]), max_size=4))
def test_scope_globs_match_as_their_regexes(globs, scopes):
    condition = NameCondition("scopes", tuple((text, _simple_glob(text, case=False)) for text, in zip(globs)))
    for scope in scopes:
        assert condition._scope_matches(scope) == any(rx.fullmatch(scope) for _, rx in condition.globs)


def test_plain_ascii_scope_globs_become_a_set():
    condition = NameCondition("scopes", (("Megatron", _simple_glob("Megatron", case=False)),))
    assert condition.literals == frozenset({"megatron"})
    wild = NameCondition("scopes", (("mega*", _simple_glob("mega*", case=False)),))
    assert wild.literals is None


def test_risk_hints_hold_nothing_code_text_removes_or_joins():
    # _pr_counts tests the raw lines for a hint before stripping strings and comments:
    # exact only while no hint holds a quote, a comment sign or a line end.
    for hints in risk._HINTS.values():
        for hint in hints:
            assert not set(hint) & {"'", '"', "#", "\n"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_lines, _lines), max_size=3),
       st.sampled_from(list(risk.KINDS)))
def test_pr_counts_answer_as_before(files, kind):
    pieces = ["x.float()", "eval(", "'eval('", "# torch.load(", "dist.barrier()", "threading.Lock()", '"""', "\n"]
    rnd_files = []
    for i, (added, removed) in enumerate(files):
        added = tuple(a + pieces[i % len(pieces)] for a in added)
        removed = tuple(r + pieces[(i + 3) % len(pieces)] for r in removed)
        rnd_files.append(FileAnalysis(f"f{i}.py", "modified", "source", language="python", added_lines=added, removed_lines=removed))
    new: Counter[str] = Counter()
    old: Counter[str] = Counter()
    for f in rnd_files:
        new.update(risk._counts(risk.code_text(f.added_lines[: risk.MAX_LINES]), kind))
        old.update(risk._counts(risk.code_text(f.removed_lines[: risk.MAX_LINES]), kind))
    assert risk._pr_counts(rnd_files, kind) == (new, old)
