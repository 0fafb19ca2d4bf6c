"""Property: whatever the model writes, no name outside the fact sheet reaches the guide."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.narrator.facts import TOKEN, build_fact_sheet
from bot.narrator.render import narrate_markdown, narration_from
from bot.narrator.validate import SchemaError, check_answer, parse_answer
from tests.narrator_helpers import engine_markdown

# The identifiers of r"[a-z]{1,6}(_[a-z]{1,6}){0,2}|[A-Z][a-z]{1,5}[A-Z][a-z]{1,4}|[a-z]{1,5}/[a-z]{1,5}\.py|\d{1,4}|\d\.\d{1,2}\.\d",
# built from text strategies: each piece is one choice where st.from_regex makes one per character,
# so the same strings take half the draws.
_LOWER, _UPPER, _DIGITS = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"


def _letters(alphabet: str, most: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=1, max_size=most)


_ident = st.one_of(
    st.lists(_letters(_LOWER, 6), min_size=1, max_size=3).map("_".join),
    st.tuples(_letters(_UPPER, 1), _letters(_LOWER, 5), _letters(_UPPER, 1), _letters(_LOWER, 4)).map("".join),
    st.tuples(_letters(_LOWER, 5), _letters(_LOWER, 5)).map(lambda t: f"{t[0]}/{t[1]}.py"),
    _letters(_DIGITS, 4),
    st.tuples(_letters(_DIGITS, 1), _letters(_DIGITS, 2), _letters(_DIGITS, 1)).map(".".join),
)
_words = st.sampled_from(["the", "change", "keeps", "callers", "safe", "because", "it", "retries", "上传", "更稳定", "，", "。", "e.g.", "and"])

data_strategy = st.fixed_dictionaries({
    "lang": st.sampled_from(["en", "zh"]),
    "summary": st.lists(st.one_of(_words, _ident), max_size=8).map(" ".join),
    "behaviour": st.lists(st.fixed_dictionaries({"kind": st.just("changed"), "path": _ident, "symbol": _ident, "old": _ident, "new": _ident}), max_size=3),
    "focus": st.lists(st.fixed_dictionaries({"file": _ident, "symbol": _ident, "reason": st.lists(_words, max_size=4).map(" ".join)}), max_size=3),
    "follow_ups": st.lists(st.lists(st.one_of(_words, _ident), max_size=5).map(" ".join), max_size=2),
})  # fmt: skip


@st.composite
def outputs(draw):
    piece = st.one_of(_words, _ident, st.tuples(st.sampled_from("SF"), _letters(_DIGITS, 2)).map(lambda t: "{" + t[0] + t[1] + "}"), st.sampled_from(["`x_y`", "<b>", "@dev", "[a](http://x)", "2.0", "{", "}"]))
    sentence = st.lists(piece, min_size=1, max_size=10).map(" ".join)
    return {"summary": draw(sentence), "why_it_matters": draw(st.lists(sentence, max_size=3)),
            "focus_reasons": draw(st.dictionaries(st.sampled_from(["P1", "P2", "P3", "P7"]), sentence, max_size=3))}  # fmt: skip


_CODE = re.compile(r"(`+) ?(.*?) ?\1")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data_strategy, outputs())
def test_no_identifier_outside_the_fact_sheet_reaches_the_guide(data, output):
    sheet = build_fact_sheet(data)
    try:
        answer = parse_answer(json.dumps(output, ensure_ascii=False))
    except SchemaError:
        return
    narration = narration_from(check_answer(answer, sheet), sheet, "m")
    names = set(sheet.symbols.values())
    fact_text = " ".join(f.text for f in sheet.facts)
    for text in (narration.summary or "", *narration.why, *narration.focus.values()):
        for span in _CODE.finditer(text):
            assert span.group(2) in names, span.group(0)  # every code span is a sheet symbol
        prose = _CODE.sub(" ", text).replace("e.g.", " ")  # the one abbreviation the validator allows
        assert "`" not in prose and "<" not in prose and "](" not in prose
        for token in TOKEN.finditer(prose):
            assert token.group(0) in names or token.group(0) in fact_text, token.group(0)
    md = narrate_markdown(engine_markdown(data["lang"]), narration, data["lang"])
    assert "@dev" not in md
