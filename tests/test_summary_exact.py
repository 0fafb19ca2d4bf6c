"""When no author sentence is usable, the summary is the guide's strongest exact change
(bot.engine.render.summary_point), not a bare count: raters took "Changes 1 source file
under `verl/utils/checkpoint/` (+11/−31)." for no summary at all while the focus points
below it said exactly what changed."""

from __future__ import annotations

import pytest
from conftest import SHARED

from bot.engine.analysis.model import DiffAnalysis, Evidence, FileAnalysis
from bot.engine.classify import classify
from bot.engine.focus.model import FocusPoint
from bot.engine.focus.review import review_summary
from bot.engine.marker import MarkerState
from bot.engine.render import summary as S
from bot.engine.render.guide import GuideFacts
from bot.engine.snapshot import PullRequestSnapshot

CORPUS = SHARED / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the corpus ({CORPUS}) is not on this machine (set PRGUIDE_SHARED)")

CKPT = "verl/utils/checkpoint/megatron_checkpoint_manager.py"
ENV_EVIDENCE = (Evidence(CKPT, 653, 653, "-1", "", "diff"), Evidence(CKPT, 655, 655, "1", "", "diff"))
ENV_POINT = FocusPoint(CKPT, "RAY_LOCAL_WORLD_SIZE", "focus.fact.env_removed",
                       {"name": "RAY_LOCAL_WORLD_SIZE", "old": "-1", "new": "", "count": 2, "names": ("RAY_LOCAL_WORLD_SIZE", "NNODES")},
                       weight=90, evidence=ENV_EVIDENCE)
TRAINER = "verl/trainer/ppo/ray_trainer.py"
CALL_EVIDENCE = Evidence(TRAINER, 349, 349, "", "self._init_dump_executor()", "diff")
CALL_POINT = FocusPoint(TRAINER, "RayPPOTrainer.fit", "focus.edit.call_added",
                        {"line": "349", "old": "", "new": "self._init_dump_executor()", "name": "RayPPOTrainer.fit"},
                        weight=94, evidence=(CALL_EVIDENCE,))
ROLLOUT = "verl/trainer/config/rollout/rollout.yaml"
DEFAULT_EVIDENCE = Evidence(ROLLOUT, 68, 68, "256", "1024", "diff")
DEFAULT_POINT = FocusPoint(ROLLOUT, "max_num_seqs", "focus.fact.default_changed",
                           {"name": "max_num_seqs", "old": "256", "new": "1024", "detail": "", "count": 1},
                           weight=120, evidence=(DEFAULT_EVIDENCE,))
#: The "largest change" kind of point: never an exact change, never the summary.
LARGEST = FocusPoint(CKPT, None, "focus.largest_new", {"additions": 11, "deletions": 31, "uses": ("os.environ",)}, weight=20)


def facts(files, focus=(), *, purpose=None):
    files = tuple(files)
    s = PullRequestSnapshot(repository="o/r", number=1, title="[ckpt] fix: something", changed_files=len(files),
                            additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files))
    analysis = DiffAnalysis(files)
    return GuideFacts(snapshot=s, analysis=analysis, classification=classify(s, analysis, ()), focus=tuple(focus),
                      review=review_summary(s), follow_ups=(), state=MarkerState(), purpose=purpose)


def src(path, additions=11, deletions=31, kind="source", **kw):
    return FileAnalysis(path, "modified", kind, "python", additions=additions, deletions=deletions, **kw)


def test_a_small_pr_that_stops_reading_environment_variables_says_so_with_its_evidence():
    f = facts([src(CKPT)], [ENV_POINT, LARGEST])
    s = S.choose(f, "en")
    assert s.source == "point"
    assert s.text == ("In `megatron_checkpoint_manager.py`: no longer reads environment variables "
                      "`RAY_LOCAL_WORLD_SIZE`, `NNODES`.")
    assert s.evidence == ENV_EVIDENCE  # the fact's own lines, for the claim ledger
    text, evidence = S.summary_claim(f, "en")
    assert text.startswith("In megatron_checkpoint_manager.py: no longer reads") and evidence == ENV_EVIDENCE


def test_a_call_edit_is_stated_with_its_function_file_and_line():
    f = facts([src(TRAINER, 30, 2)], [CALL_POINT])
    s = S.choose(f, "en")
    assert s.text == "In `RayPPOTrainer.fit` (`ray_trainer.py`), line 349: now also calls `self._init_dump_executor()`."
    assert s.evidence == (CALL_EVIDENCE,)


def test_an_edit_listed_inside_a_largest_change_point_is_used_with_its_own_evidence():
    inner = FocusPoint(TRAINER, "RayPPOTrainer.fit", "focus.largest_symbols",
                       {"additions": 30, "deletions": 2, "names": ("RayPPOTrainer.fit",), "count": 1,
                        "edits": (("focus.edit.call_added", dict(CALL_POINT.params)),)},
                       weight=21, evidence=(CALL_EVIDENCE,))
    s = S.choose(facts([src(TRAINER, 30, 2)], [inner]), "en")
    assert s.source == "point" and "now also calls `self._init_dump_executor()`" in s.text
    assert s.evidence == (CALL_EVIDENCE,)


def test_a_changed_default_in_a_bigger_pr_is_the_summary_and_the_advice_is_left_to_the_focus_point():
    f = facts([src(ROLLOUT, 40, 30, kind="config")], [DEFAULT_POINT])
    s = S.choose(f, "en")
    assert s.text == "In `rollout.yaml`: default of `max_num_seqs` changes from `256` to `1024`."
    assert s.evidence == (DEFAULT_EVIDENCE,)


def test_only_exact_points_qualify_and_a_test_files_point_does_not():
    test_point = CALL_POINT._replace(file="tests/test_trainer.py")
    f = facts([src(CKPT), src("tests/test_trainer.py", kind="test")], [LARGEST, test_point])
    assert S.summary_source(f, "en") == "count"


def test_two_unrelated_changes_name_the_first_and_count_the_rest():
    f = facts([src(ROLLOUT, 40, 30, kind="config"), src(CKPT, 11, 31)], [DEFAULT_POINT, ENV_POINT])
    s = S.choose(f, "en")
    assert s.text == ("In `rollout.yaml`: default of `max_num_seqs` changes from `256` to `1024`; "
                      "1 other file changes too.")
    assert s.evidence == (DEFAULT_EVIDENCE, ENV_EVIDENCE[0])  # the one counted rests on its own line


def test_one_change_in_a_file_that_is_a_small_part_of_the_pr_is_said_to_be_one_of_several():
    f = facts([src(CKPT, 11, 31), src("verl/workers/fsdp_workers.py", 300, 100)], [ENV_POINT])
    assert S.choose(f, "en").text.endswith("`NNODES` (one of several changes).")


def test_the_chinese_summary_states_the_same_fact():
    f = facts([src(ROLLOUT, 40, 30, kind="config"), src(CKPT, 11, 31)], [DEFAULT_POINT, ENV_POINT])
    zh = S.choose(f, "zh")
    assert zh.source == "point" and zh.evidence == S.choose(f, "en").evidence
    assert zh.text == "`rollout.yaml` 中：`max_num_seqs` 的默认值从 `256` 改为 `1024`；另有 1 个文件也有改动。"
    one = S.choose(facts([src(CKPT)], [ENV_POINT]), "zh").text
    assert one.startswith("`megatron_checkpoint_manager.py` 中：不再读取环境变量 `RAY_LOCAL_WORLD_SIZE`、`NNODES`") and one.endswith("。")


def test_a_docs_only_pr_says_which_pages_change():
    page = FileAnalysis("docs/x.md", "modified", "docs", "markdown", additions=2, deletions=1, added_lines=("more text",))
    s = S.choose(facts([page]), "en")
    assert s.source == "docs" and s.text == "Edits the documentation page `docs/x.md`."


def test_a_ci_only_pr_without_an_exact_change_names_its_files():
    wf = FileAnalysis(".github/workflows/npu.yml", "modified", "ci", "yaml", additions=1, deletions=1)
    s = S.choose(facts([wf]), "en")
    assert s.source == "only" and s.text == "Only CI files change: `.github/workflows/npu.yml`."
    assert s.evidence == (Evidence(".github/workflows/npu.yml", new="modified, +1/-1", source="metadata"),)
    assert S.choose(facts([wf]), "zh").text == "只改动了 CI 文件：`.github/workflows/npu.yml`。"


def test_an_over_long_point_gives_way_to_the_next_one_in_both_languages():
    long_call = CALL_POINT._replace(params={**CALL_POINT.params, "new": "x" * 300}, weight=130)
    f = facts([src(TRAINER, 30, 2), src(ROLLOUT, 1, 1, kind="config")], [long_call, DEFAULT_POINT])
    assert "max_num_seqs" in S.choose(f, "en").text and "max_num_seqs" in S.choose(f, "zh").text


@needs_corpus
def test_corpus_the_environment_variable_pr_leads_with_the_variables():
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle

    path = CORPUS / "verl-2026h1" / "5016.json"
    if not path.is_file():
        pytest.skip(f"{path} is not in the corpus")
    guide = build_guide(load_bundle(str(path)), load_rules([], defaults=True), lang="en")
    assert guide.data["summary"].startswith("In megatron_checkpoint_manager.py: no longer reads environment variables")
    claim = next(c for c in guide.data["claims"] if c["kind"] == "summary")
    assert claim["evidence"][0]["path"] == CKPT and claim["evidence"][0]["start"] == 653


def test_a_point_standing_for_several_changes_keeps_its_count():
    """"In `Dockerfile.ngc.vllm`: now installs `apex`." for an image that installs five new
    packages read as its one change; the point's "(and 4 more like it)" stays."""
    docker = "docker/Dockerfile.ngc.vllm"
    point = FocusPoint(docker, "apex", "focus.fact.dep_added.install", {"name": "apex", "old": "", "new": "", "count": 5, "similar": 4},
                       weight=100, evidence=(Evidence(docker, 36, 36, "", "apex", "diff"),))
    s = S.choose(facts([src(docker, 12, 0, kind="build")], [point]), "en")
    assert s.text.startswith("In `Dockerfile.ngc.vllm`: ") and s.text.endswith("(and 4 more like it).")
