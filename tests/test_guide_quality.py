"""The guides' judgement against a blind expert evaluation: targets that must keep holding.

``bench/guide_quality.py`` builds a guide for every entry of ``tests/data/guide_eval.yml``
(27 verl PRs judged by a maintainer from the PR record alone) and for the whole corpus
(verl + verl-2026h1). This test asserts its targets, so a change that makes guides worse
than the expert's judgement fails CI. Skipped when the corpus is not beside the checkout.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import ROOT, SHARED

BENCH = ROOT / "bench" / "guide_quality.py"


def _module():
    spec = importlib.util.spec_from_file_location("guide_quality", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["guide_quality"] = module
    spec.loader.exec_module(module)
    return module


quality = _module()
needs_corpus = pytest.mark.skipif(
    not (SHARED / "corpus" / "verl-2026h1").is_dir(), reason=f"corpus not found at {SHARED / 'corpus'} (set PRGUIDE_SHARED)"
)


@lru_cache(maxsize=1)
def report():
    return quality.measure(SHARED, quality.EVAL_FILE)


def test_names_count_only_as_whole_identifiers():
    found, missed = quality.names_in("see `Layer.is_shuffled` and verl/x/run.sh", ["is_shuffled", "run.sh", "shuffled", "x/run"])
    assert found == ["is_shuffled", "run.sh", "x/run"]
    assert missed == ["shuffled"]  # a part of a longer identifier is not a mention


def test_eval_file_has_the_expected_shape():
    entries = quality.load_eval()
    assert len(entries) >= 20
    for e in entries:
        assert e["level"] in ("deep", "quick", "skim", "skip"), e["pr"]
        assert 1 <= e["importance"] <= 10 and e["minutes"] > 0, e["pr"]
        assert 1 <= len(e["must_name"]) <= 5, e["pr"]


def test_metrics_of_a_hand_made_report():
    case = quality.Case(
        pr="verl/1", expected={"level": "quick", "minutes": 10, "importance": 5, "breaking": True},
        level="quick", minutes=21, importance=8, breaking=False, named=["a"], missed=["b"],
    )
    r = quality.Report(cases=[case], corpus_prs=4, corpus_importance=[10, 2, 3, 4])
    m = r.metrics()
    assert m["must_name_recall"] == 0.5 and m["level_agreement"] == 1.0
    assert m["minutes_within_2x"] == 0.0 and m["importance_within_2"] == 0.0
    assert m["breaking_recall"] == 0.0 and m["corpus_share_at_10"] == 0.25 and m["corpus_median_importance"] == 3.5
    assert any(line.startswith("must_name_recall") for line in r.misses())
    assert "MISSED" in quality.render(r)


#: Targets known to be missed, with the floor a change may not fall below. Must-name recall fell
#: from 0.81 to 0.72 when focus points stopped listing names from unchanged, moved and prose
#: lines (precision before recall: those lists were the most misleading statements of the
#: guide); the 0.8 target stays printed as MISSED by bench/guide_quality.py until names are
#: found again in exact statements.
KNOWN_MISSES = {"must_name_recall": 0.7}


@needs_corpus
def test_every_target_holds():
    r = report()
    misses = [line for line in r.misses() if line.split(" ", 1)[0] not in KNOWN_MISSES]
    assert misses == [], quality.render(r)
    for name, floor in KNOWN_MISSES.items():
        assert r.metrics()[name] >= floor, quality.render(r)


@needs_corpus
def test_no_generated_file_is_a_numbered_point_and_claims_are_rare():
    r = report()
    assert r.claims.get("generated (numbered)", 0) == 0
    # "entry point" and "compatibility" need evidence, so they are claimed on few PRs.
    assert r.claim_prs.get("entry point", 0) <= r.corpus_prs * 0.15
    assert r.claim_prs.get("compatibility", 0) <= r.corpus_prs * 0.1
    assert r.claim_prs.get("major version", 0) <= 3


@needs_corpus
def test_the_command_line_prints_the_report(capsys, monkeypatch):
    # The numbers are measured once for this module (see test_every_target_holds); here the
    # command line prints them, in both forms, from the folder it is given.
    asked = []
    measured = report()  # before the patch: run alone, report() itself calls quality.measure
    monkeypatch.setattr(quality, "measure", lambda shared, eval_path: asked.append((shared, eval_path)) or measured)
    code = quality.main(["--shared", str(SHARED)])
    out = capsys.readouterr().out
    assert "must-name recall" in out
    # Exit 1 and MISSED exactly when a target is missed (see KNOWN_MISSES).
    assert (code == 0) == ("targets: all met" in out) and (code == 1) == ("MISSED" in out)
    assert quality.main(["--shared", str(SHARED), "--json"]) == code
    assert '"must_name_recall"' in capsys.readouterr().out
    assert asked == [(SHARED, quality.EVAL_FILE)] * 2
