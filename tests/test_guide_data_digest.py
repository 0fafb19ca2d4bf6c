"""What a stored guide carries for the digest: area display names, which labels name an area, review facts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import SHARED

from bot.engine.build import _area_data, _review_data, build_guide
from bot.engine.focus.model import ReviewSummary, Thread
from bot.engine.rules import load_rules
from bot.paths import config_dir
from bot.sources.bundle import load_bundle

REVIEWS = SHARED / "corpus" / "verl-reviews"


@pytest.fixture(scope="module")
def rules():
    return load_rules([config_dir() / "examples" / "verl.yml"])


def test_templated_area_labels_name_their_area(rules):
    assert rules.label_area("area/megatron") == "megatron"
    assert rules.label_area("type/fix") is None
    assert rules.label_area("area/not-declared") is None


def test_area_data_carries_names_and_readers_in_every_language(rules):
    classification = SimpleNamespace(areas=("megatron", "unknown"))
    data = _area_data(rules, classification, ["area/megatron", "type/fix"])
    assert data["area_info"] == {"megatron": {
        "names": {"en": "Megatron backend", "zh": "Megatron 后端"},
        "audience": {"en": "engineers maintaining the Megatron backend", "zh": "维护 Megatron 后端的工程师"},
    }}
    assert data["label_areas"] == {"area/megatron": "megatron"}
    # Rules without areas (a test double, an old rule set) give nothing to show.
    assert _area_data(object(), classification, ["area/megatron"]) == {"area_info": {}, "label_areas": {}}


def test_review_data_counts_threads_and_comments():
    thread = Thread(path="a.py", line=1, comments=3, participants=("bob",), opening="why?", has_suggestion=False, author_replied=True)
    review = ReviewSummary(reviewers=(("alice", "APPROVED", False), ("ci-bot", "COMMENTED", True)), threads=(thread, thread))
    assert _review_data(review) == {
        "reviewers": [{"user": "alice", "state": "APPROVED", "bot": False}, {"user": "ci-bot", "state": "COMMENTED", "bot": True}],
        "threads": 2,
        "comments": 6,
    }
    assert _review_data(ReviewSummary()) == {"reviewers": [], "threads": 0, "comments": 0}


@pytest.mark.skipif(not REVIEWS.is_dir(), reason=f"review corpus not found at {REVIEWS} (set PRGUIDE_SHARED)")
def test_a_reviewed_corpus_guide_stores_its_review_and_area_names(rules):
    found = []
    for path in sorted(REVIEWS.glob("*.json")):
        data = build_guide(load_bundle(path), rules, lang="en").data
        if data["review"]["reviewers"] and data["label_areas"]:
            found.append(data)
    assert found, "at least one reviewed corpus PR touches a declared area"
    data = found[0]
    assert data["review"]["threads"] >= 0 and all(r["state"] for r in data["review"]["reviewers"])
    for label, area in data["label_areas"].items():
        assert label in data["labels"] and area in data["areas"]
        assert data["area_info"][area]["names"]["zh"]
