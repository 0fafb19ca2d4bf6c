"""Honest templates and judgement from facts, on real PRs and their look-alikes.

A focus reason may assert a meaning ("compatibility", "config key", "entry point",
"major version", "breaking") only with evidence in the diff. Each test names the real
merged verl PRs where a look-alike used to trigger the claim. Rules: prguide's defaults
plus ``config/examples/verl.yml``. Corpus tests skip when the corpus is absent.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pytest
from conftest import SHARED

from bot.engine.analysis.model import (
    BehaviourFact,
    Definition,
    DependencyChange,
    DiffAnalysis,
    FileAnalysis,
)
from bot.engine.build import build_guide
from bot.engine.classify import classify
from bot.engine.focus.housekeeping import housekeeping
from bot.engine.focus.model import ReviewSummary
from bot.engine.focus.points import focus_points
from bot.engine.focus.renames import renamed_pairs
from bot.engine.render.messages import t
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot
from bot.paths import config_dir
from bot.sources.bundle import load_bundle

CORPUS = SHARED / "corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "verl").is_dir(), reason=f"corpus not found at {CORPUS} (set PRGUIDE_SHARED)")


@lru_cache(maxsize=1)
def _rules():
    return load_rules([config_dir() / "examples" / "verl.yml"])


@lru_cache(maxsize=None)
def guide(number: int, folder: str = "verl", lang: str = "en"):
    return build_guide(load_bundle(CORPUS / folder / f"{number}.json"), _rules(), lang=lang)


def reasons(number: int, folder: str = "verl") -> list[str]:
    d = guide(number, folder).data
    return [f"{p['file']} {p['reason']}" for p in d["focus"]] + [f["reason"] for f in d["importance_factors"]]


def snap(**kw):
    return PullRequestSnapshot(**{"repository": "o/r", "number": 1, "title": "x", **kw})


# --- compatibility --------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("number", [3427, 6555, 6933, 7050, 7373])
def test_hasattr_probes_are_not_called_compatibility(number):
    assert not [r for r in reasons(number) if "compatib" in r and "hasattr" in r]


@needs_corpus
def test_an_input_type_check_is_not_compatibility():
    # #7373 raises TypeError when the replay buffer lacks methods: an input check, not a second version served.
    assert not [r for r in reasons(7373) if "compatib" in r]


def test_only_import_fallbacks_and_version_checks_are_compatibility():
    probe = FileAnalysis("a.py", "modified", "source", additions=5, shims=("hasattr check: if hasattr(x, 'y'):",))
    fallback = FileAnalysis("b.py", "modified", "source", additions=5, shims=("import fallback: from x import y",))
    keys = {p.file: p.key for p in focus_points(DiffAnalysis((probe, fallback)), (), ReviewSummary()) if p.key == "focus.shim"}
    assert keys == {"b.py": "focus.shim"}


# --- config key -------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize(("number", "name"), [(6933, "FusedOutputProcessorContext"), (7291, "MasterMetadata"), (7327, "vLLMColocateWorkerExtension")])
def test_fields_of_classes_that_are_not_configuration_are_not_config_keys(number, name):
    assert not [r for r in reasons(number) if name in r and ("config key" in r or "user-facing option" in r)]


def test_logger_constructor_attributes_are_not_config_keys():
    f = FileAnalysis("pkg/log.py", "modified", "source", "python", additions=8,
                     config_keys_added=("Logger.level", "Logger.stream"))
    is_config = load_rules([config_dir() / "examples" / "verl.yml"]).is_config
    points = focus_points(DiffAnalysis((f,)), (), ReviewSummary(), is_config=is_config)
    assert [p.key for p in points if p.key and p.key.startswith("focus.config")] == ["focus.config_added.plain"]
    assert "config key" not in t("focus.config_added.plain", "en", {"names": ("Logger.level",)})
    c = classify(snap(), DiffAnalysis((f,)), (), is_config=is_config)
    assert not any(x.source == "config" for x in c.factors)


def test_fields_of_a_config_class_are_config_keys():
    f = FileAnalysis("verl/workers/config/actor.py", "modified", "source", "python", additions=8,
                     config_keys_added=("ActorConfig.lr",))
    is_config = _rules().is_config
    assert [p.key for p in focus_points(DiffAnalysis((f,)), (), ReviewSummary(), is_config=is_config) if p.key.startswith("focus.config")] == ["focus.config_added"]


# --- entry point ------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize(("number", "name"), [(3427, "compute_score"), (7101, "module_from_string"), (7306, "")])
def test_new_helpers_nothing_else_calls_are_not_entry_points(number, name):
    assert not [r for r in reasons(number) if "entry point" in r and name in r]


# --- versions -------------------------------------------------------------------------------


@needs_corpus
def test_a_pre_1_0_minor_move_is_not_a_major_version():
    # #7101 moves vllm 0.23.0 -> 0.24.0 in a Dockerfile.
    assert not [r for r in reasons(7101) if "major version" in r]
    assert not any(r["key"] == "breaking.dep_major" for r in guide(7101).data["breaking_reasons"])


@needs_corpus
def test_a_real_major_bump_of_a_package_dependency_is_breaking():
    d = guide(7478).data  # trl 0.27.0 -> 1.10.0 in pyproject.toml
    assert d["breaking"] and d["breaking_reasons"][0]["key"] == "breaking.dep_major"
    assert "Breaking: `trl` moves to a new major version" in guide(7478).markdown


def test_a_moved_submodule_or_git_pin_is_a_pinned_commit():
    dep = DependencyChange("verl-recipe", "changed", "abc1234", "def5678", bump="commit")
    fact = BehaviourFact("dep_pin_changed", "recipe", "verl-recipe", "abc1234", "def5678", user_facing=False)
    f = FileAnalysis("recipe", "modified", "build", additions=1, deletions=1, dependency_changes=(dep,), behaviour=(fact,))
    (p,) = [p for p in focus_points(DiffAnalysis((f,)), (), ReviewSummary()) if p.symbol == "verl-recipe"]
    assert p.key == "focus.fact.dep_pin_changed.commit"
    assert t(p.key, "en", p.params).startswith("pinned commit of `verl-recipe` moved")
    assert "major" not in t(p.key, "en", p.params)


# --- renames ----------------------------------------------------------------------------------


@needs_corpus
def test_a_rename_is_one_fact():
    # #7455 replaces clear_rocm_attention_weight_caches by refresh_rocm_attention_weight_caches.
    d = guide(7455).data
    texts = [p["reason"] for p in d["focus"]]
    assert sum("renamed to" in r for r in texts) == 1
    assert not [r for r in texts if r.startswith(("removed `clear_rocm", "adds `refresh_rocm"))]
    assert not any(f["source"] == "api" for f in d["importance_factors"])  # not scored as removed + added
    # Its one caller, in the same file, is rewritten by the same diff: a refactor, as for a
    # removed function whose callers the diff changed (a blind rating called the break misleading).
    assert d["breaking_reasons"] == []
    assert any("this diff also changes the places that used the old name" in r for r in texts)


def test_rename_pairs_need_a_shared_tail():
    f = FileAnalysis("a.py", "modified", "source", definitions_removed=(Definition("save_state", "function"), Definition("load_a", "function")),
                     definitions_added=(Definition("dump_state", "function"), Definition("load_b", "function")))
    assert renamed_pairs(f) == ()  # one shared word is not a rename
    g = FileAnalysis("a.py", "modified", "source", definitions_removed=(Definition("clear_weight_caches", "function"),),
                     definitions_added=(Definition("refresh_weight_caches", "function"),))
    assert renamed_pairs(g) == (("clear_weight_caches", "refresh_weight_caches"),)


# --- generated files and housekeeping -------------------------------------------------------


@needs_corpus
def test_generated_files_are_never_numbered_but_summed_up():
    md = guide(7373).markdown
    numbered = [line for line in md.splitlines() if re.match(r"^\d+\. ", line)]
    assert numbered and not [line for line in numbered if "_generated_" in line]
    assert "Housekeeping, no need to read line by line: 4 generated files" in md


def test_housekeeping_groups():
    files = (
        FileAnalysis("uv.lock", "modified", "generated", additions=900),
        FileAnalysis(".github/CODEOWNERS", "modified", "config", additions=2, added_lines=("/x @a",), removed_lines=("/y @a",)),
        FileAnalysis(".github/workflows/a.yml", "modified", "ci", additions=1, deletions=1,
                     added_lines=("    image: verl/verl:1.2",), removed_lines=("    image: verl/verl:1.1",)),
        FileAnalysis("a.py", "modified", "source", additions=1, deletions=1, added_lines=("x = f(a,b)",), removed_lines=("x = f(a, b)",)),
        FileAnalysis("b.py", "modified", "source", additions=1, added_lines=("# why",)),
        FileAnalysis("c.py", "modified", "source", additions=1, added_lines=("x = 2",)),
    )
    h = housekeeping(DiffAnalysis(files))
    assert (h.locks, h.owners, h.images, h.formatting, h.comments) == (("uv.lock",), (".github/CODEOWNERS",), (".github/workflows/a.yml",), ("a.py",), ("b.py",))
    keys = [p.file for p in focus_points(DiffAnalysis(files), (), ReviewSummary())]
    assert keys == ["c.py"]  # only real code is a numbered point


# --- breaking, from facts -----------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize(("number", "text"), [
    (5705, "Breaking: default of `dist_ckpt_optim_fully_reshardable` changes from `True` to `False`"),
    (5139, "Breaking: default of `max_num_seqs` changes from `256` to `1024`"),
])
def test_changed_defaults_of_user_config_are_breaking_with_their_reason(number, text):
    g = guide(number, "verl-2026h1")
    assert text in g.markdown
    assert g.data["breaking_reasons"][0]["reason"].startswith("default of ")
    assert all(b["kind"] for b in g.data["behaviour"])


@needs_corpus
def test_title_tags_make_it_breaking():
    d = guide(6804).data  # "[BREAKING][rollout] feat: ..."
    assert d["breaking"] and d["breaking_reasons"][0]["key"] == "breaking.marked"


def test_a_parameter_added_with_a_default_is_not_breaking():
    f = FileAnalysis("pkg/a.py", "modified", "source", "python", additions=3,
                     behaviour=(BehaviourFact("parameter_added", "pkg/a.py", "run(x)", new="x=None", user_facing=True),))
    assert not classify(snap(), DiffAnalysis((f,)), ()).breaking


def test_a_check_in_a_new_function_is_not_a_new_refusal():
    # A refusal under an existing condition (the `if` is not an added line) in an existing function.
    fact = BehaviourFact("check_added", "pkg/a.py", "build", new="if size < 0: raise ValueError('size')", detail="ValueError", user_facing=True)
    new = FileAnalysis("pkg/a.py", "modified", "source", "python", additions=9, definitions_added=(Definition("build", "function"),), behaviour=(fact,))
    old = FileAnalysis("pkg/a.py", "modified", "source", "python", additions=9, behaviour=(fact,))
    assert not classify(snap(), DiffAnalysis((new,)), ()).breaking
    c = classify(snap(), DiffAnalysis((old,)), ())
    assert [r.key for r in c.breaking_reasons] == ["breaking.check"]


# --- numbers, lists, summary ------------------------------------------------------------------


@needs_corpus
def test_lines_of_code_never_sit_next_to_no_source():
    for folder in ("verl", "verl-2026h1"):
        for path in sorted((CORPUS / folder).glob("*.json")):
            md = guide(int(path.stem), folder).markdown
            assert not ("lines of code changed" in md and "no source code changed" in md), path


@needs_corpus
def test_long_dependency_lists_say_how_many_more_and_json_has_them_all():
    g = guide(7127)
    # (A Dockerfile the pull request adds is a new image, not 5 dependency changes.)
    assert "…and 48 more dependency changes" in g.markdown
    assert len(g.data["dependencies"]) == 63


@needs_corpus
def test_json_summary_is_plain_text():
    for number in (6555, 7297):  # titles with "CP>1"-style text and code spans
        summary = guide(number).data["summary"]
        assert "&gt;" not in summary and "&lt;" not in summary and "`" not in summary


@needs_corpus
def test_chinese_summary_is_chinese_and_the_title_is_not_restated():
    g = guide(7470, lang="zh")
    summary = g.data["summary"]
    # Chinese from the same facts (the author's English sentence is not used in zh).
    assert re.search(r"[\u4e00-\u9fff]", summary) and "FP8 weight refits" not in summary
    assert "FP8 weight refits" in guide(7470).data["summary"]
    # GitHub shows the title right above the comment; the short comment does not repeat it.
    assert "restage shuffled AITER FP8 weights" not in g.markdown and g.data["title"].endswith("AITER FP8 weights")
    assert json.loads(json.dumps(g.data))["lang"] == "zh"


@needs_corpus
def test_summaries_state_the_fact_without_its_advice_in_both_languages():
    # The focus point says "removed `X`: check nothing still relies on it"; the summary never
    # carries that advice. A 344-file PR whose description names nothing the summary can use
    # leads with its strongest exact change and says the others are there (one exact change
    # of it is no summary of 36,000 lines on its own), never advice.
    en, zh = guide(4795).data["summary"], guide(4795, lang="zh").data["summary"]
    assert en.startswith("In collabllm_agent_loop.py: removed CollabLLMAgentLoop; ") and " other files change too" in en
    assert "另有" in zh and not zh.startswith("改动之一：")
    assert "relies" not in en and "确认" not in zh


@needs_corpus
def test_areas_do_not_balloon():
    d = guide(7127).data
    assert len(d["areas"]) <= 5 and d["areas_more"] > 0
    assert sum(label.startswith("area/") for label in d["labels"]) <= 5


@needs_corpus
def test_the_description_is_checked_against_the_diff():
    d = guide(6804).data
    # Only what the description lists as brought by this change (its "model support" table)
    # and no line of the patch has, tests and context included.
    missing = [f for f in d["follow_ups"] if "the description says this change adds" in f]
    assert missing and "MiMoVLContinuousTokenBuilder" in missing[0]
    assert not any("MiMoVLContinuousTokenBuilder" in p["reason"] for p in d["focus"])


# --- environment variables ----------------------------------------------------------------------


def guide_of(*files: tuple[str, str, str], repository: str = "volcengine/verl", lang: str = "en"):
    """A guide for a pull request of ``(path, status, patch)`` files, with the verl rules."""
    shaped = [{"filename": p, "status": s, "additions": patch.count("\n+"), "deletions": patch.count("\n-"),
               "changes": patch.count("\n+") + patch.count("\n-"), "patch": patch} for p, s, patch in files]
    pull = {"number": 9, "title": "fix: launch", "body": "", "merged": True, "user": {"login": "dev"},
            "base": {"ref": "main", "repo": {"full_name": repository}}}
    return build_guide(PullRequestSnapshot.from_github(pull, shaped, [], [], repository=repository), _rules(), lang=lang)


def env_reasons(g) -> list[str]:
    return [p["reason"] for p in g.data["focus"] if "environment variable" in p["reason"]]


READ_MODE = '@@ -40,3 +40,4 @@ def build(config):\n     x = 1\n+    mode = os.environ.get("VERL_MODE", "fast")\n     return x\n'
DROP_MODE = '@@ -40,4 +40,3 @@ def build(config):\n     x = 1\n-    mode = os.environ.get("VERL_MODE", "fast")\n     return x\n'


@needs_corpus
def test_a_new_environment_variable_is_one_point_across_its_files():
    # #7127 reads ${VERL_USE_UV:-1} and ${DEVICE:-gpu} in 64 launch scripts, and verl/__init__.py
    # sets RAY_ENABLE_UV_RUN_RUNTIME_ENV with setdefault.
    reasons = env_reasons(guide(7127))
    assert reasons == [
        "sets environment variable `RAY_ENABLE_UV_RUN_RUNTIME_ENV` to `0` unless it is already set",
        "now reads environment variables `VERL_USE_UV` (default `1`), `DEVICE` (default `gpu`) (the same change in 63 other files)",
    ]
    assert not [r for r in guide(7127).data["breaking_reasons"] if r["key"].startswith("breaking.env")]  # new is not breaking
    zh = "\n".join(p["reason"] for p in guide(7127, lang="zh").data["focus"])
    assert "开始读取环境变量 `VERL_USE_UV`（默认 `1`）、`DEVICE`（默认 `gpu`）（另有 63 个文件相同）" in zh


def test_source_that_stops_reading_a_project_variable_is_breaking():
    g = guide_of(("verl/trainer/a.py", "modified", DROP_MODE))
    assert [r["key"] for r in g.data["breaking_reasons"]] == ["breaking.env_removed"]
    assert "Breaking: the code no longer reads environment variable `VERL_MODE`" in g.markdown
    assert env_reasons(g) == ["no longer reads environment variable `VERL_MODE`: unless other code reads it, setting it now does nothing"]
    assert any(f["source"] == "env" for f in g.data["importance_factors"])


def test_a_changed_default_of_a_project_variable_is_breaking():
    patch = '@@ -40,3 +40,3 @@ def build(config):\n-    mode = os.environ.get("VERL_MODE", "fast")\n+    mode = os.environ.get("VERL_MODE", "safe")\n     return x\n'
    g = guide_of(("verl/trainer/a.py", "modified", patch))
    assert [r["reason"] for r in g.data["breaking_reasons"]] == ["default of environment variable VERL_MODE changes from fast to safe"]  # JSON reasons are plain text


@pytest.mark.parametrize(("files", "why"), [
    ((("examples/ppo/run_qwen.sh", "modified", "@@ -3,3 +3,2 @@\n x=1\n-mode=${VERL_MODE:-fast}\n y=2\n"),), "an example script"),
    ((("tests/test_a.py", "modified", DROP_MODE),), "a test"),
    ((("verl/trainer/a.py", "modified", DROP_MODE.replace("VERL_MODE", "NNODES")),), "another tool's variable"),
    ((("verl/trainer/a.py", "modified", DROP_MODE), ("verl/trainer/b.py", "modified", READ_MODE)), "moved to another file"),
    ((("verl/trainer/a.py", "removed", DROP_MODE),), "the whole file goes"),
])
def test_look_alikes_of_a_dropped_variable_are_not_breaking(files, why):
    g = guide_of(*files)
    assert not [r for r in g.data["breaking_reasons"] if r["key"].startswith("breaking.env")], why


@needs_corpus
def test_a_fix_that_stops_reading_another_tools_variables_says_so_without_breaking():
    # #5016 drops the RAY_LOCAL_WORLD_SIZE / NNODES reads of the Megatron checkpoint manager.
    g = guide(5016, "verl-2026h1")
    assert env_reasons(g) == ["no longer reads environment variables `RAY_LOCAL_WORLD_SIZE`, `NNODES`: unless other code reads them, setting them now does nothing"]
    assert not g.data["breaking"]


@pytest.mark.parametrize(("path", "patch"), [
    # An ALL_CAPS string constant never passed to os.environ.
    ("verl/trainer/a.py", '@@ -1,1 +1,3 @@\n import os\n+MODE_KEY = "VERL_MODE"\n+path = os.path.join(MODE_KEY, "x")\n'),
    # The environment copied wholesale names no variable.
    ("verl/trainer/a.py", "@@ -1,1 +1,2 @@\n import os\n+env = dict(os.environ)\n"),
    # A Markdown page telling users what to set.
    ("docs/start/install.md", "@@ -1,1 +1,2 @@\n # Install\n+Set `os.environ['VERL_USE_UV']` or `export VERL_USE_UV=0` (`${VERL_USE_UV:-1}`).\n"),
    # A test setting the variable for itself, or reading it.
    ("tests/test_a.py", '@@ -1,1 +1,3 @@\n import os\n+monkeypatch.setenv("VERL_MODE", "1")\n+assert os.environ.get("VERL_MODE", "0") == "1"\n'),
    # A new launch script: all of its parameters are new, naming them tells nothing.
    ("examples/ppo/run_new.sh", "@@ -0,0 +1,2 @@\n+MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}\n+export VLLM_USE_V1=1\n"),
])
def test_environment_look_alikes_make_no_point(path, patch):
    status = "added" if patch.startswith("@@ -0,0") else "modified"
    g = guide_of((path, status, patch))
    assert env_reasons(g) == [] and not any(f["source"] == "env" for f in g.data["importance_factors"])


def test_only_source_reads_count_towards_reach():
    script = guide_of(("examples/ppo/run_qwen.sh", "modified", "@@ -3,2 +3,3 @@\n x=1\n+mode=${VERL_MODE:-fast}\n y=2\n"))
    assert env_reasons(script) == ["now reads environment variable `VERL_MODE` (default `fast`)"]
    assert not any(f["source"] == "env" for f in script.data["importance_factors"])
    source = guide_of(("verl/trainer/a.py", "modified", READ_MODE))
    assert [f["reason"] for f in source.data["importance_factors"] if f["source"] == "env"] == [
        "an environment variable the source starts reading, stops reading or reads with a new default (`VERL_MODE`)"]


def test_a_new_variable_read_is_the_summary_only_when_it_is_the_one_change():
    # A knob a change reads on the way is seldom what it is for; when reading it is all the
    # change does, it is (bot.engine.render.summary.one_fact). Beside another change it may
    # lead the summary only as one of its changes (bot.engine.render.summary_point).
    for lang in ("en", "zh"):
        assert "VERL_MODE" in guide_of(("verl/trainer/a.py", "modified", READ_MODE), lang=lang).data["summary"]
        beside = guide_of(("verl/trainer/a.py", "modified", READ_MODE), ("verl/trainer/b.py", "modified", "@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n"), lang=lang)
        summary = beside.data["summary"]
        assert "VERL_MODE" not in summary or ("1 other file changes too" in summary or "另有 1 个文件也有改动" in summary), summary
    patch = '@@ -40,3 +40,3 @@ def build(config):\n-    mode = os.environ.get("VERL_MODE", "fast")\n+    mode = os.environ.get("VERL_MODE", "safe")\n     return x\n'
    assert "VERL_MODE" in guide_of(("verl/trainer/a.py", "modified", patch), lang="zh").data["summary"]


@pytest.mark.parametrize(("fact", "kind", "text"), [
    (BehaviourFact("env_added", "run.sh", "NCCL_DEBUG", "", "WARN", "set", 3, True), "example", "now sets environment variable `NCCL_DEBUG` to `WARN`"),
    (BehaviourFact("env_added", "a.py", "VERL_HOME", "", "", "default", 3, True), "source", "now reads environment variable `VERL_HOME`"),
    (BehaviourFact("env_removed", "a.py", "RAY_DEDUP_LOGS", "0", "", "default", 3, True), "source",
     "no longer sets environment variable `RAY_DEDUP_LOGS` to `0` when it is unset: whatever reads it falls back to its own default"),
    (BehaviourFact("env_removed", "Dockerfile", "GDRCOPY_HOME", "/usr/local", "", "set", 3, True), "build", "no longer sets environment variable `GDRCOPY_HOME` (was `/usr/local`)"),
    (BehaviourFact("env_default_changed", "run.sh", "NCCL_DEBUG", "INFO", "WARN", "set", 3, True), "example", "sets environment variable `NCCL_DEBUG` to `WARN` instead of `INFO`"),
    (BehaviourFact("env_default_changed", "a.py", "RAY_DEDUP_LOGS", "0", "1", "default", 3, True), "source",
     "default of environment variable `RAY_DEDUP_LOGS` changes from `0` to `1`: runs that do not set it behave differently"),
])
def test_each_environment_template_says_what_its_fact_shows(fact, kind, text):
    f = FileAnalysis(fact.path, "modified", kind, additions=1, behaviour=(fact,))
    (p,) = [p for p in focus_points(DiffAnalysis((f,)), (), ReviewSummary()) if p.symbol == fact.symbol]
    assert t(p.key, "en", p.params) == text
    assert re.search(r"[\u4e00-\u9fff]", t(p.key, "zh", p.params))


def test_many_variables_of_one_script_are_counted():
    facts = tuple(BehaviourFact("env_added", "examples/run.sh", f"PROFILE_STEP_{i}", "", str(i), "read", i, True) for i in range(5))
    f = FileAnalysis("examples/run.sh", "modified", "example", additions=5, behaviour=facts)
    (p,) = [p for p in focus_points(DiffAnalysis((f,)), (), ReviewSummary()) if p.key == "focus.fact.env_added"]
    assert t(p.key, "en", p.params) == "now reads environment variables `PROFILE_STEP_0` (default `0`), `PROFILE_STEP_1` (default `1`), `PROFILE_STEP_2` (default `2`)…"
