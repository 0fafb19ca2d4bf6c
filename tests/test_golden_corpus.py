"""Golden tests on real merged PRs of verl (an RL-for-LLM training framework).

Each case states what a maintainer of that project would expect from the guide,
and why. The rules are prguide's defaults plus ``config/examples/verl.yml``; no
rule names a PR number. Skipped when the corpus is not beside the checkout.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from bot.engine.analysis import analyse
from bot.engine.build import build_guide
from bot.paths import config_dir
from bot.engine.render.guide import MAX_COMMENT_CHARS
from bot.engine.rules import load_rules
from bot.sources.bundle import load_bundle
from conftest import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason=f"verl corpus not found at {CORPUS}")


@lru_cache(maxsize=1)
def _rules():
    return load_rules([config_dir() / "examples" / "verl.yml"])


@lru_cache(maxsize=None)
def guide(number: int, lang: str = "en"):
    return build_guide(load_bundle(CORPUS / f"{number}.json"), _rules(), lang=lang)


def data(number: int) -> dict:
    return dict(guide(number).data)


# (PR, why a maintainer expects it, labels that must be there, labels that must not,
#  first area, change type, reading level, symbols that must be named)
CASES = [
    (7491, "a real rollout bug fix with three regression tests: worth a quick read",
     {"type/fix", "tests", "area/rollout"}, {"breaking", "revert"}, "rollout", "fix", "quick", {"AgentLoopOutput"}),
    # The title says "fix", but every changed file is CI: the content decides the type.
    # 16 lines of CI make it worth a skim (the blind expert evaluation agrees).
    (7492, "a CI-only version pin on the Ascend pipeline: a skim",
     {"ci"}, {"revert", "breaking", "tests", "area/ci"}, "ci", "ci", "skim", set()),
    # Nothing but a dependency pin: the type is "deps" (it was "build" before types came from content).
    (7478, "a bot's bump of trl across a major version (0.27 -> 1.10): skim it for breaking changes",
     {"dependencies"}, {"breaking"}, None, "deps", "skim", set()),
    (7127, "[BREAKING] uv integration: build system and every workflow change",
     {"breaking", "type/feature", "dependencies", "build"}, set(), None, "feature", "deep", set()),
    (6804, "[BREAKING] multimodal continuous tokens in the rollout: a new subsystem",
     {"breaking", "type/feature", "area/rollout", "area/multimodal", "tests"}, set(), "rollout", "feature", "deep", set()),
    (7373, "lends trainer GPUs to generation: new trainer behaviour behind new config keys",
     {"type/feature", "area/trainer", "area/vllm", "tests"}, {"breaking"}, "vllm", "feature", "deep",
     {"HybridRolloutSwitchConfig", "ReplayBufferAsync"}),
    # About 16 minutes of reading: important (7/10) but a quick read, not a deep one.
    (6682, "Megatron-Bridge backward compatibility: shims are the point of the PR",
     {"type/fix", "area/megatron"}, {"breaking"}, "megatron", "fix", "quick", {"LinearForLastLayer"}),
    # Only docs changed, so the type is "docs" whatever the title's "chore".
    (7406, "a news line in the docs",
     {"docs", "type/chore"}, {"tests", "breaking"}, "docs", "docs", "skip", set()),
    (7358, "small Megatron feature with new config keys: important but short",
     {"type/feature", "area/megatron", "tests"}, {"breaking"}, "megatron", "feature", "quick", {"preprocess_thd_engine"}),
    (7324, "'[ckpt, fsdp]' names two modules: one label each",
     {"type/feature", "area/ckpt", "area/fsdp"}, {"breaking"}, "fsdp", "feature", "deep", {"ShardSpec"}),
    # ~15 minutes of reading (most of the diff is a Dockerfile and a patch file): a quick read.
    (7050, "ROCm hardware port of a model recipe with Docker changes",
     {"type/feature", "area/rocm", "area/docker"}, {"breaking"}, "rocm", "feature", "quick", {"restore_moe_expert_maps"}),
    (7300, "REINFORCE++ advantage fix in the core algorithms, with tests",
     {"type/fix", "area/algo", "tests"}, {"breaking"}, "algo", "fix", "quick", {"compute_reinforce_plus_plus_outcome_advantage"}),
    # Only CI changed: the type is "ci" rather than the title's "chore".
    (7025, "temporarily disables a CI job: nothing to read",
     {"ci"}, {"breaking", "tests"}, "ci", "ci", "skip", set()),
    (4795, "moves recipes to a submodule: hundreds of files removed",
     {"area/recipe"}, set(), "recipe", "feature", "deep", set()),
]


@pytest.mark.parametrize(("number", "why", "must", "must_not", "area", "change_type", "level", "symbols"), CASES,
                         ids=[str(c[0]) for c in CASES])
def test_maintainer_expectations(number, why, must, must_not, area, change_type, level, symbols):
    d = data(number)
    labels = set(d["labels"])
    assert must <= labels, f"{why}: missing {must - labels}"
    assert not (must_not & labels), f"{why}: unexpected {must_not & labels}"
    if area:
        assert d["areas"][0] == area, why
    assert d["change_type"] == change_type, why
    assert d["reading_level"] == level, why
    assert symbols <= set(d["symbols"]), f"{why}: symbols {d['symbols'][:10]}"


def test_importance_orders_prs_as_a_maintainer_would():
    # A new rollout subsystem outranks a bug fix, which outranks a bot's bump and a docs line.
    assert data(6804)["importance"] > data(7491)["importance"] > data(7478)["importance"] > data(7406)["importance"]


def test_dependency_bump_is_named_with_versions():
    md = guide(7478).markdown
    assert "`trl`" in md and "0.27.0" in md and "1.10.0" in md


def test_compatibility_shims_are_a_focus_point():
    # Import fallbacks are named as compatibility handling in the focus points; they no
    # longer add a point of their own (the behaviour change and its reach do).
    d = data(6682)
    assert any("compatib" in f["reason"] and "import fallback" in f["reason"] for f in d["focus"])


def test_new_config_keys_are_named(load_bundle_json):
    d = data(7373)
    assert any("enable_switch" in f["reason"] for f in d["focus"])


def test_removed_files_and_code_paths_are_called_out():
    md = guide(4795).markdown
    assert "Files removed:" in md
    assert len(md) <= MAX_COMMENT_CHARS


def test_every_corpus_pr_gets_a_guide_in_both_languages():
    rules = _rules()
    for path in sorted(CORPUS.glob("*.json")):
        snapshot = load_bundle(path)
        for lang in ("en", "zh"):
            g = build_guide(snapshot, rules, lang=lang)
            assert g.markdown.startswith("<!-- prguide:v1 ") and len(g.markdown) <= MAX_COMMENT_CHARS
            assert 1 <= g.data["importance"] <= 10
        assert analyse(snapshot).files, path.name


def test_chinese_guide_reads_in_chinese():
    md = guide(7373, "zh").markdown
    for heading in ("阅读重点", "改动概览", "后续跟进", "标签"):
        assert f"#### {heading}" in md
    assert "值得精读" in md and "约 " in md
