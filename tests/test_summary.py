"""The summary says what changed in behaviour, in one sentence, or a plain true count
(bot.engine.render.summary; issue 20 item 4). Each error class of the blind rating is
reproduced on a small synthetic pull request and, where the corpus is present, on a real
one of the same shape."""

from __future__ import annotations

import dataclasses
import glob

import pytest
from conftest import SHARED

from bot.engine.analysis.model import (
    BehaviourFact,
    DiffAnalysis,
    Edit,
    Evidence,
    FileAnalysis,
)
from bot.engine.build import build_guide
from bot.engine.classify import classify
from bot.engine.focus.review import review_summary
from bot.engine.marker import MarkerState
from bot.engine.render import summary as S
from bot.engine.render.guide import GuideFacts, render_guide
from bot.engine.snapshot import PullRequestSnapshot

CORPUS = SHARED / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the corpus ({CORPUS}) is not on this machine (set PRGUIDE_SHARED)")


def facts(files, *, title="[trainer] fix: something", purpose=None, additions=None, deletions=None):
    files = tuple(files)
    s = PullRequestSnapshot(repository="o/r", number=1, title=title, changed_files=len(files),
                            additions=sum(f.additions for f in files) if additions is None else additions,
                            deletions=sum(f.deletions for f in files) if deletions is None else deletions)
    analysis = DiffAnalysis(files)
    return GuideFacts(snapshot=s, analysis=analysis, classification=classify(s, analysis, ()), focus=(),
                      review=review_summary(s), follow_ups=(), state=MarkerState(), purpose=purpose)


def src(path="verl/trainer/ppo.py", additions=3, deletions=1, **kw):
    return FileAnalysis(path, "modified", "source", "python", additions=additions, deletions=deletions, **kw)


EDIT = Edit("call_replaced", "verl/tools/parser.py", "Parser.parse", old="value = eval(text)", new="value = ast.literal_eval(text)",
            detail="eval → ast.literal_eval", line=42, old_line=41, consequence="existing")


def _edits(monkeypatch, edit=EDIT):
    monkeypatch.setattr("bot.engine.focus.edits.main_edit", lambda analysis: edit)
    sentences = {"en": "`Parser.parse` now calls `ast.literal_eval` instead of `eval` (`verl/tools/parser.py:42`).",
                 "zh": "`Parser.parse` 改为调用 `ast.literal_eval` 而不是 `eval`（`verl/tools/parser.py:42`）。"}
    monkeypatch.setattr("bot.engine.focus.edits.edit_sentence", lambda e, lang: sentences[lang] if e is edit else "")


# --- 1. a small PR: the most important exact change ----------------------------------------------


def test_a_small_pr_is_summarised_by_its_main_exact_edit_in_both_languages(monkeypatch):
    _edits(monkeypatch)
    f = facts([src("verl/tools/parser.py", 1, 1, added_lines=("value = ast.literal_eval(text)",))],
              purpose="This PR hardens the Qwen3 tool parser against code in model output.")
    text, evidence = S.summary_claim(f, "en")
    assert text == "Parser.parse now calls ast.literal_eval instead of eval (verl/tools/parser.py:42)."
    assert evidence == (Evidence("verl/tools/parser.py", 42, 42, EDIT.old, EDIT.new),)
    assert S.summary_source(f, "zh") == "edit" and S.summary_line(f, "zh").startswith("`Parser.parse` 改为调用")


def test_a_large_pr_is_not_summarised_by_one_edit(monkeypatch):
    _edits(monkeypatch)
    f = facts([src("verl/a.py", 400, 0), src("verl/b.py", 300, 0)])
    assert S.summary_source(f, "en") == "count"


def test_an_empty_edit_sentence_falls_through(monkeypatch):
    monkeypatch.setattr("bot.engine.focus.edits.main_edit", lambda analysis: EDIT)
    monkeypatch.setattr("bot.engine.focus.edits.edit_sentence", lambda e, lang: "")  # today's stub
    assert S.summary_source(facts([src()]), "en") == "count"


# --- 2. one behaviour fact -------------------------------------------------------------------------


def _default(path="verl/trainer/config/rollout.yaml", kind="config", **kw):
    fact = BehaviourFact("default_changed", path, "rollout.max_num_seqs", "256", "1024", line=12, user_facing=True)
    return FileAnalysis(path, kw.pop("status", "modified"), kind, None, additions=1, deletions=1, behaviour=(fact,), **kw)


def test_a_changed_default_that_is_the_one_change_is_the_summary():
    f = facts([_default(), FileAnalysis("tests/test_x.py", "modified", "test", "python", additions=5)])
    assert S.summary_line(f, "en") == ("Changes the default of `rollout.max_num_seqs` in `verl/trainer/config/rollout.yaml` "
                                       "from `256` to `1024`.")
    assert S.summary_line(f, "zh") == "将 `verl/trainer/config/rollout.yaml` 中 `rollout.max_num_seqs` 的默认值从 `256` 改为 `1024`。"
    assert S.summary_claim(f, "en")[1] == (Evidence("verl/trainer/config/rollout.yaml", 12, 12, "256", "1024"),)


def test_a_fact_beside_other_code_is_not_called_the_one_change():
    assert S.summary_source(facts([_default(), src()]), "en") == "count"


def test_a_dependency_of_a_deleted_or_docker_file_is_not_the_summary():
    # Rated misleading: "Chore: drops dependency `pip`" for a deleted Dockerfile; a Docker pin
    # that holds on one architecture only presented as the feature.
    dep = BehaviourFact("dep_floor_raised", "docker/Dockerfile", "vllm", ">=0.17", ">=0.18", line=3, user_facing=True)
    docker = FileAnalysis("docker/Dockerfile", "modified", "build", None, additions=1, deletions=1, behaviour=(dep,))
    assert S.summary_source(facts([docker]), "en") == "count"
    req = dataclasses.replace(docker, path="requirements.txt", behaviour=(dataclasses.replace(dep, path="requirements.txt"),))
    assert S.summary_line(facts([req]), "en") == "Raises the minimum version of `vllm` in `requirements.txt` from `>=0.17` to `>=0.18`."
    removed = dataclasses.replace(req, status="removed")
    assert S.summary_source(facts([removed]), "en") == "count"


# --- 3. the author's sentence ----------------------------------------------------------------------


def test_the_authors_sentence_is_used_when_its_names_are_in_the_changed_lines():
    f = facts([src("verl/tools/parser.py", 30, 30, added_lines=("return ast.literal_eval(text)",), removed_lines=("return eval(text)",))] * 3,
              title="[rollout] fix: avoid arbitrary code execution in the tool parser",
              purpose="This PR replaces eval() with ast.literal_eval(), which only parses Python literals.")
    text, evidence = S.summary_claim(f, "en")
    assert text == "This PR replaces eval() with ast.literal_eval(), which only parses Python literals."
    assert evidence[0] == Evidence(new=text, source="description")
    assert any(e.path == "verl/tools/parser.py" and "literal_eval" in e.new for e in evidence[1:])
    # Chinese never quotes the author's English sentence.
    assert S.summary_source(f, "zh") == "count"


def test_a_sentence_naming_what_the_diff_does_not_change_is_not_used():
    # Rated misleading: "Now qwen3_5 has a shard handling …" on a diff of qwen3_vl.py only.
    big = [src("verl/models/qwen3_vl.py", 40, 40, added_lines=("if isinstance(w, DTensor):",))] * 2
    f = facts(big, purpose="Now qwen3_5 has a shard handling for vocab weights when it is a sharded tensor.")
    assert S.summary_source(f, "en") == "count"
    assert "qwen3_5" not in render_guide(f, "en").split("\n", 3)[2]


def test_the_title_restated_is_not_a_summary():
    big = [src(f"verl/workers/veomni_{i}.py", 100, 0) for i in range(3)]
    f = facts(big, title="[trainer] feat: Add rl support for veomni backend", purpose="Add RL support for the veomni backend.")
    assert S.summary_source(f, "en") == "count"
    assert S.restates("Add rl support for veomni backend.", "[trainer] feat: Add rl support for veomni backend")
    assert not S.restates("This PR replaces eval() with ast.literal_eval().", "[rollout] fix: avoid code execution")


def test_a_short_sentence_naming_nothing_is_vague():
    big = [src(f"ci/{i}.py", 100, 0) for i in range(3)]
    assert S.summary_source(facts(big, purpose="Fix the github action for trtllm."), "en") == "count"


def test_the_summary_is_never_the_type_and_area_template():
    text = S.summary_line(facts([src(symbols_touched=("MegatronPPOActor.forward",))]), "en")
    # The one changed method is named as a fact, never as "Fix in AREA: changes X".
    assert text == "Changes `MegatronPPOActor.forward` in `verl/trainer/ppo.py`."
    assert "Fix in" not in text and "changes `" not in text


def test_quoted_pr_text_is_neutralised():
    big = [src("verl/a.py", 100, 0, added_lines=("use <b> here",))] * 2
    f = facts(big, purpose="Adds the parser that turns <b>bold</b> tags into plain text for users.")
    line = S.summary_line(f, "en")
    assert "<b>" not in line and "&lt;b&gt;" in line
    assert S.summary_line(f, "en", plain=True) == "Adds the parser that turns <b>bold</b> tags into plain text for users."


# --- 4. the plain count ----------------------------------------------------------------------------


def test_the_count_names_kinds_and_the_common_directory_and_the_scale_is_not_repeated():
    f = facts([src("verl/trainer/a.py", 30, 10), src("verl/trainer/b.py", 10, 2), FileAnalysis("verl/trainer/c.yaml", "modified", "config", additions=1)])
    assert S.summary_line(f, "en") == "Changes 2 source files, 1 config file under `verl/trainer/` (+41/−12)."
    assert S.summary_line(f, "zh") == "改动了 `verl/trainer/` 下的 2 个源代码文件、1 个配置文件（+41/−12）。"
    md = render_guide(f, "en")
    assert "(3 files, +41/−12 lines)" not in md


def test_common_dir():
    assert S.common_dir(["a/b/c.py", "a/b/d/e.py"]) == "a/b/"
    assert S.common_dir(["a/x.py", "b/y.py"]) == "" and S.common_dir(["README.md"]) == "" and S.common_dir([]) == ""


# --- the corpus --------------------------------------------------------------------------------------


def _corpus_guide(name: str, lang: str = "en"):
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle

    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"{path} is not in the corpus")
    return build_guide(load_bundle(str(path)), load_rules([], defaults=True), lang=lang)


@needs_corpus
def test_corpus_a_model_name_only_the_description_has_is_not_the_summary():
    summary = _corpus_guide("verl-2026h1/6659.json").data["summary"]
    assert "qwen3_5" not in summary


@needs_corpus
def test_corpus_the_rce_fix_is_summarised_by_what_it_replaces():
    summary = _corpus_guide("verl-2026h1/6542.json").data["summary"]
    assert "literal_eval" in summary and "changes Qwen3XMLToolParser" not in summary


@needs_corpus
def test_corpus_no_template_summary_no_title_restated_no_template_fragment():
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle

    rules = load_rules([], defaults=True)
    paths = sorted(glob.glob(str(CORPUS / "verl" / "*.json")) + glob.glob(str(CORPUS / "verl-2026h1" / "*.json")))
    assert paths
    for path in paths:
        snap = load_bundle(path)
        for lang in ("en", "zh"):
            summary = build_guide(snap, rules, lang=lang).data["summary"]
            assert " in " not in summary.split(":")[0] or not summary.startswith(("Fix in", "Feature in", "Refactor in")), (path, summary)
            assert ": changes " not in summary and "：改动 " not in summary, (path, summary)
            assert not summary.rstrip(".").endswith((" review", " if possible")), (path, summary)
            assert not S.restates(summary, snap.title) or summary.startswith(("Changes ", "改动了")), (path, summary)
            assert "http" not in summary and "@" not in summary.replace("@\u200b", ""), (path, summary)


def test_a_pull_request_with_exact_changes_but_no_usable_sentence_leads_with_one_of_them(monkeypatch):
    from bot.engine.focus import edits as edits_module

    edit = Edit("call_replaced", "pkg/parse.py", "Parser.parse", "eval(x)", "ast.literal_eval(x)", "eval", line=12, old_line=12)
    monkeypatch.setattr(edits_module, "main_edit", lambda analysis: None)
    monkeypatch.setattr(edits_module, "leading_edit", lambda analysis: edit)
    monkeypatch.setattr(edits_module, "edit_sentence", lambda e, lang: "`pkg/parse.py` line 12: now calls `ast.literal_eval`")
    f = facts([src(additions=1, deletions=1), src("pkg/other.py", additions=1, deletions=0)])  # no edit dominates
    en = S.choose(f, "en")
    assert en.source == "edit_among" and en.text.startswith("Among its changes: `pkg/parse.py` line 12")
    assert en.evidence == (edit.evidence,)
    zh = S.choose(f, "zh")
    assert zh.text.startswith("改动之一：")


def test_names_a_sentence_must_show_in_the_diff():
    from bot.engine.render.summary import sentence_names

    # "()" is dropped from a span; literals, the words of an error message and acronyms are no names.
    assert sentence_names("Removes forwarding from `get_env()` when `flag=False`.") == ["get_env", "flag"]
    assert sentence_names("Stops raising `ValueError: substring not found` on FSDP and AMD runs.") == ["ValueError"]
    assert sentence_names("Fixes `RLHFDataset._build_messages()` for images.") == ["RLHFDataset._build_messages"]


# --- what the audit of new pull requests rated "no" or "partly" ---------------------------------------


def test_an_authors_sentence_naming_changed_code_wins_over_a_quoted_line(monkeypatch):
    # "`utils.py` — line 96: the condition `…processor.image_process…` is now …" was rated "no";
    # the author's "Avoid attribute error when a processor does not have `image_processor`." says it.
    _edits(monkeypatch)
    f = facts([src("verl/tools/parser.py", 1, 1, added_lines=("if hasattr(processor, 'image_processor'):",))],
              purpose="Avoid attribute error when a processor does not have `image_processor`.")
    assert S.summary_source(f, "en") == "author"
    assert S.summary_line(f, "en") == "Avoid attribute error when a processor does not have `image_processor`."
    assert S.summary_source(f, "zh") == "edit"
    # Precision first: a name the changed lines lack keeps the exact change.
    f = facts([src("verl/tools/parser.py", 1, 1, added_lines=("if hasattr(processor, 'image_processor'):",))],
              purpose="Add `deepseek_v3` entry to `MOE_PARAM_HANDERS` so the processor has `image_processor`.")
    assert S.summary_source(f, "en") == "edit"


def _page(path, status="added", lines=(), additions=None, **kw):
    return FileAnalysis(path, status, "docs", None, additions=len(lines) if additions is None else additions, deletions=0,
                        added_lines=tuple(lines), **kw)


def test_a_docs_only_pr_names_its_pages_and_their_headings_in_both_languages():
    # "Changes 2 docs files under `docs/` (+297/−0)." was rated "no".
    new = _page("docs/npu/migration.md", lines=("# NPU model migration", "", "```bash", "# not a heading", "```", "## Steps"))
    index = _page("docs/index.rst", "modified", lines=("   npu/migration",))
    rst = _page("docs/faq.rst", "modified", lines=("Checkpoint metadata", "-------------------", "text", "Q: x", ".. note::"))
    f = facts([new, index])
    en = S.summary_line(f, "en")
    assert en.startswith("Adds the documentation page `docs/npu/migration.md` (“NPU model migration”)")
    assert "`docs/index.rst`" in en and S.summary_source(f, "en") == "docs"
    assert S.summary_line(f, "zh").startswith("新增文档页 `docs/npu/migration.md`（“NPU model migration”）")
    assert S.summary_line(facts([rst]), "en") == "Adds the section “Checkpoint metadata” to `docs/faq.rst`."
    assert S.page_headings(new) == ["NPU model migration", "Steps"]
    # Any file that is not documentation: no page sentence.
    assert S.summary_source(facts([new, src()]), "en") != "docs"


def test_pages_edited_without_a_new_heading_are_named_together_and_a_changed_default_stays_first():
    a, b = _page("docs/a.md", "modified", lines=("text",)), _page("docs/b.md", "modified", lines=("more",))
    assert S.summary_line(facts([a, b]), "en") == "Edits the documentation pages `docs/a.md`, `docs/b.md`."
    # The exact changed default says more than the author's "Revert the default value of …".
    f = facts([_default(added_lines=("max_num_seqs: 1024",))], purpose="Revert the default value of vllm max_num_seqs which may effect the throughput.")
    assert S.summary_source(f, "en") == "fact"


def test_a_change_inside_one_function_names_the_function_instead_of_a_count():
    one = src("verl/w.py", 6, 0, symbols_touched=("Worker", "Worker.run"))
    assert S.summary_line(facts([one]), "en") == "Adds code to `Worker.run` in `verl/w.py`."
    assert S.summary_line(facts([one]), "zh") == "在 `verl/w.py` 的 `Worker.run` 中新增代码。"
    both = dataclasses.replace(one, deletions=2)
    assert S.summary_line(facts([both]), "en") == "Changes `Worker.run` in `verl/w.py`."
    # A class alone (the method is outside the hunk), two functions, or two files: a count.
    for files in ([dataclasses.replace(one, symbols_touched=("Worker",))],
                  [dataclasses.replace(one, symbols_touched=("run", "stop"))], [one, src("verl/x.py", 400, 0)]):
        assert S.summary_source(facts(files), "en") == "count"


def test_a_cut_off_documentation_quote_gives_way_only_to_a_page_sentence_that_says_more():
    line = "- [2026/05] VeRL-Omni is pre-released: a unified RL stack for diffusion and omni-modal model post-training " * 2
    readme = _page("README.md", "modified", lines=(line,), quote=Edit("lines", "README.md", "", "", line.strip(), line=51))
    assert S.summary_source(facts([readme]), "en") == "quote"
    new = _page("docs/news.md", "modified", lines=("## News", line), quote=readme.quote)
    assert S.summary_line(facts([new]), "en") == "Adds the section “News” to `docs/news.md`."


def test_one_small_edit_of_a_large_pull_request_is_not_its_summary(monkeypatch):
    # #5356 (a 1,000-line integration) was summed up by a widened error-branch condition.
    from bot.engine.focus import edits as edits_module

    edit = Edit("condition_changed", "verl/trainer/main_ppo.py", "TaskRunner", "strategy == 'veomni'",
                "strategy == 'veomni' or strategy == 'torchtitan'", "if", line=165, old_line=165)
    monkeypatch.setattr(edits_module, "main_edit", lambda analysis: edit)
    monkeypatch.setattr(edits_module, "leading_edit", lambda analysis: edit)
    monkeypatch.setattr(edits_module, "edit_sentence", lambda e, lang: "`TaskRunner` line 165: the condition is now wider")
    big = facts([src("verl/trainer/main_ppo.py", 1, 1, added_lines=("if a or b:",), removed_lines=("if a:",)),
                 src("verl/workers/engine/titan.py", 40, 0, added_lines=tuple(f"x{i} = {i}" for i in range(40)))])
    assert S.choose(big, "en").source not in ("edit", "edit_among")
    # The same edit as most of a small pull request's code is its summary.
    small = facts([src("verl/trainer/main_ppo.py", 1, 1, added_lines=("if a or b:", "# why"), removed_lines=("if a:",))])
    assert S.choose(small, "en").source == "edit"


# --- the author's sentence: names found as the diff spells them ------------------------------------


def test_author_sentence_names_methods_of_changed_classes_and_model_names():
    f = src(path="examples/grpo/run_qwen3_5_122b_a10b.sh", symbols_touched=("SGLangHttpServer",),
            added_lines=("MODEL=Qwen/qwen3_5_122b_a10b",))
    for purpose in ("Removes a guard in `SGLangHttpServer.__init__` that overrode the load format.",
                    "This PR makes the Qwen3.5-122B-A10B script compatible with both GPU and Ascend NPU.",
                    "Fixes the AssertionError raised in `SGLangHttpServer` on NPU during start."):
        assert S.summary_source(facts([f], purpose=purpose, title="[x] fix: y"), "en") == "author", purpose
    for purpose in ("Removes a guard in `OtherServer.__init__` that overrode the load format.",
                    "This PR makes the Llama-70B script compatible with both GPU and Ascend NPU."):
        assert S.summary_source(facts([f], purpose=purpose, title="[x] fix: y"), "en") != "author", purpose


def test_headings_that_only_changed_level_are_no_added_sections():
    # fresh-n #2127: six "# X" headings became "## X"; the summary said it "adds the sections".
    page = FileAnalysis("docs/algo/entropy.md", "modified", "docs", "markdown", additions=2, deletions=2,
                        added_lines=("## 🎉News", "## ✨Getting started"), removed_lines=("# 🎉News", "# ✨Getting started"))
    assert S.page_headings(page) == []
    grown = dataclasses.replace(page, added_lines=("## 🎉News", "## ✨Getting started", "## Results"))
    assert S.page_headings(grown) == ["Results"]


def test_a_renamed_heading_is_no_added_section():
    # fresh-o #1045: "Use vLLM v0.8.2" → "Upgrade to vLLM v0.8.2", beside a new "Use Latest SGLang".
    page = FileAnalysis("README.md", "modified", "docs", "markdown", additions=2, deletions=1,
                        added_lines=("## Upgrade to vLLM v0.8.2", "## Use Latest SGLang"), removed_lines=("## Use vLLM v0.8.2",))
    assert S.page_headings(page) == []
