"""bench/claim_precision.py: the claim audit's labels are well formed and precision is counted right."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("claim_precision", ROOT / "bench" / "claim_precision.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_every_label_is_one_of_the_three_and_every_guide_has_its_rubric() -> None:
    sets = bench.load_sets(bench.LABELS)
    assert sets, "no audit set"
    for name, entry in sets.items():
        assert len(entry["prs"]) >= 30, name
        for ref, pr in entry["prs"].items():
            assert "/" in ref
            assert pr["statements"], ref
            assert {s["label"] for s in pr["statements"]} <= set(bench.LABEL_VALUES), ref
            if entry.get("scope") == "kind":
                continue  # one claim kind audited statement by statement: no whole-guide rubric
            assert pr["summary_ok"] in ("yes", "partly", "no"), ref
            assert 0 <= pr["helpfulness"] <= 3, ref


def test_precision_counts_vague_against_the_kind() -> None:
    table = bench.precision_table([("focus", "true"), ("focus", "vague"), ("focus", "misleading"), ("tests", "true")])
    assert table["focus"] == {"n": 3, "true": 1, "vague": 1, "misleading": 1, "precision": pytest.approx(1 / 3)}
    assert table["tests"]["precision"] == 1.0


def test_rubric_summary_counts_guides_with_a_misleading_statement() -> None:
    prs = {
        "a/1": {"statements": [{"label": "misleading"}, {"label": "misleading"}], "helpfulness": 1, "summary_ok": "no"},
        "a/2": {"statements": [{"label": "true"}], "helpfulness": 3, "summary_ok": "yes"},
    }
    r = bench.rubric_summary(prs)
    assert (r["with_misleading"], r["misleading_per_guide"], r["helpfulness"]) == (1, 1.0, 2.0)
    assert r["summary"] == {"no": 1, "yes": 1}


def test_markdown_statements_split_sections_and_skip_tables_and_labels() -> None:
    md = "\n".join([
        "<!-- prguide:v1 {} -->", "### 📖 Reading guide for #1", "", "Title: x", "",
        "**Fixes the thing.** (1 file, +1/−1 lines)", "", "**Quick read** (~5 min) · importance **6/10**\\",
        "For anyone working on `a/`.", "", "#### What to focus on", "1. `a.py` — line 3 now passes `x`",
        "", "#### What changed", "| a | b |", "| --- | --- |", "#### Labels", "- `type/fix` ← rule `type-fix`",
        "#### Follow-ups", "- add a test",
    ])
    got = bench.markdown_statements(md)
    assert [s["kind"] for s in got] == ["summary", "verdict", "audience", "focus", "follow_up"]
    assert got[3]["text"] == "1. `a.py` — line 3 now passes `x`"


def test_now_matches_statements_by_text_and_counts_the_unrated() -> None:
    prs = {"a/1": {"statements": [{"kind": "focus", "text": "1. `a.py` changed", "label": "true"}]}}
    data = {"claims": [{"kind": "focus.edit", "text": "`a.py`  changed"}, {"kind": "summary", "text": "new"}]}
    table, unrated = bench.now(prs, lambda ref: data)
    assert table["focus.edit"]["true"] == 1
    assert unrated == {"summary": 1}
    assert bench.now(prs, lambda ref: None) == ({}, {})


def test_the_bench_prints_every_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--set", "audit-a"]) == 0
    out = capsys.readouterr().out
    assert "## audit-a" in out and "| focus |" in out
    assert bench.main(["--set", "no-such-set"]) == 2
