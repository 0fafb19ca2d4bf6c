"""Classification precision (issue 20): risk lines, breaking claims, verdicts, follow-ups,
design quotes and counts say exactly what the diff shows, with evidence.

Each class of misleading statement is reproduced twice: on a real corpus pull request of
that shape (skipped without the shared corpus) and on a small synthetic snapshot, so CI
without the corpus still proves it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.engine.analysis import analyse
from bot.engine.analysis.description import check_against_diff, parse_description, promised_missing
from bot.engine.analysis.model import Definition, DependencyChange, DiffAnalysis, FileAnalysis
from bot.engine.build import _reverted_number, build_guide
from bot.engine.classify import classify
from bot.engine.focus.model import ReviewSummary
from bot.engine.focus.names import added_texts, changed_texts, design_points
from bot.engine.focus.review import follow_ups
from bot.engine.render.messages import t
from bot.engine.rules import load_rules
from bot.engine.rules.model import RuleHit
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("PRGUIDE_SHARED", ROOT.parent / "shared")) / "corpus"


@pytest.fixture(scope="module")
def rules():
    return load_rules([], defaults=True)


def corpus(name: str):
    """A corpus bundle (``verl-2026h1/4584``) as a snapshot; skips without the corpus."""
    from bot.sources.bundle import load_bundle

    path = CORPUS / f"{name}.json"
    if not path.exists():
        pytest.skip(f"corpus bundle {name} not found under {CORPUS} (set PRGUIDE_SHARED to the shared/ folder)")
    return load_bundle(path)


def snap(title="[x] fix: y", body="", files=(), number=1):
    return PullRequestSnapshot(repository="o/r", number=number, title=title, body=body, changed_files=len(files), files=tuple(files))


def py(path="pkg/mod.py", **kw):
    kw.setdefault("additions", len(kw.get("added_lines", ())) or 1)
    kw.setdefault("deletions", len(kw.get("removed_lines", ())))
    return FileAnalysis(path=path, status="modified", kind="source", language="python", **kw)


FIX = (RuleHit("t", "f:1", change_type="fix"),)


def sources(guide) -> set[str]:
    return {f.source for f in guide.classification.factors}


# --- class 2: risk lines from exact tokens, never substrings ---------------------------


@pytest.mark.parametrize("number", ["verl-2026h1/4584", "verl-2026h1/6228", "verl-2026h1/6675", "verl-2026h1/6386"])
def test_corpus_keyword_hits_give_no_risk_line(rules, number):
    # `weight` in save_weights, `dtype=torch.int64`, sequential awaits, `logit` in a name.
    guide = build_guide(corpus(number), rules, lang="en")
    assert "results can change silently" not in guide.markdown
    assert "touches concurrency" not in guide.markdown
    for f in guide.classification.factors:
        if f.source in ("numerics", "concurrency", "untrusted"):
            assert f.evidence and f.params["code"] in (f.evidence[0].new + f.evidence[0].old)


def test_corpus_eval_replaced_by_literal_eval_is_stated_as_removed(rules):
    guide = build_guide(corpus("verl-2026h1/6542"), rules, lang="en")
    (risk,) = [f for f in guide.classification.factors if f.source == "untrusted"]
    assert risk.key == "factor.untrusted_removed" and risk.params["code"] == "eval"
    assert risk.evidence[0].start > 0 and "eval(" in risk.evidence[0].old


def test_synthetic_sequential_awaits_and_words_in_strings_are_no_risk():
    f = py(added_lines=("a = await f()", "b = await g()", '"""degrades the grad of save_weights"""', "x = y  # .float()"))
    c = classify(snap(), DiffAnalysis((f,)), FIX)
    assert not {"numerics", "concurrency", "untrusted"} & {x.source for x in c.factors}


# --- class 3: breaking claims only with a consequence for existing users ---------------


def test_corpus_nested_key_removal_is_not_its_parent(rules):
    c = build_guide(corpus("verl-2026h1/5848"), rules, lang="en").classification
    names = {r.params.get("name") for r in c.breaking_reasons if r.key == "breaking.key_removed"}
    assert not names & {"trainer", "algorithm", "actor_rollout_ref", "actor_rollout_ref.rollout"}
    assert all(r.evidence for r in c.breaking_reasons)


def test_corpus_new_branch_check_and_interpolated_default_are_not_breaking(rules):
    c = build_guide(corpus("verl-2026h1/4882"), rules, lang="en").classification
    keys = [r.key for r in c.breaking_reasons]
    assert "breaking.check" not in keys
    assert not [r for r in c.breaking_reasons if r.key == "breaking.default" and "${" in str(r.params.get("new"))]


def test_corpus_return_annotation_only_is_no_signature_change(rules):
    c = build_guide(corpus("verl/7291"), rules, lang="en").classification
    for r in c.breaking_reasons:
        if r.key == "breaking.signature":
            assert "return annotation" not in r.params["detail"]
            assert r.params["name"] not in ("NCCLCheckpointEngine.prepare", "DeltaShardedCheckpointEngine.prepare")


def test_synthetic_check_on_a_new_option_or_new_branch_is_not_breaking():
    def fact_file(new, added, extra=()):
        from bot.engine.analysis.model import BehaviourFact

        fact = BehaviourFact("check_added", "pkg/mod.py", "Trainer.fit", "", new, "ValueError", 12, True)
        return py(added_lines=added, behaviour=(fact, *extra))

    # The condition names a config field the same pull request adds.
    f = fact_file("if self.use_new_mode and x: raise ValueError('no')", ("raise ValueError('no')",))
    cfg = FileAnalysis(path="pkg/config.py", status="modified", kind="source", language="python", config_keys_added=("Cfg.use_new_mode",))
    assert not classify(snap(), DiffAnalysis((f, cfg)), FIX).breaking
    # The `if` itself is new: a new branch, not a refusal of what used to pass.
    f = fact_file("elif mode == 'veomni': raise ValueError('no')", ("elif mode == 'veomni':", "raise ValueError('no')"))
    assert not classify(snap(), DiffAnalysis((f,)), FIX).breaking
    # An existing condition that now raises is breaking, with its condition and line.
    f = fact_file("if batch < 0: raise ValueError('no')", ("raise ValueError('no')",))
    c = classify(snap(), DiffAnalysis((f,)), FIX)
    (claim,) = c.breaking_reasons
    assert claim.key == "breaking.check" and "batch < 0" in claim.params["code"] and claim.evidence[0].start == 12


# --- item 6: verdicts from consequences ----------------------------------------------


def test_corpus_chore_title_over_runtime_code_is_not_safe_to_skip(rules):
    c = build_guide(corpus("verl/7354"), rules, lang="en").classification
    assert c.reading_level != "skip" and "runtime" in {f.source for f in c.factors}


def test_corpus_deadlock_fix_in_existing_functions_is_a_quick_read(rules):
    c = build_guide(corpus("verl-2026h1/5451"), rules, lang="en").classification
    assert c.reading_level in ("quick", "deep")


def test_corpus_entry_script_helper_is_not_public_api(rules):
    c = build_guide(corpus("verl-2026h1/6340"), rules, lang="en").classification
    api = [f for f in c.factors if f.source == "api"]
    assert not api or "apply_greedy_sampling_params" not in api[0].params["names"]


def test_synthetic_verdicts():
    body = py(symbols_touched=("Saver.save",), added_lines=("x = 1",), removed_lines=("x = 2",))
    chore = classify(snap(title="[ci] chore: fix ci"), DiffAnalysis((body,)), (RuleHit("c", "f:1", change_type="chore"),))
    assert chore.reading_level != "skip" and chore.factors[-1].evidence
    script = FileAnalysis(path="pkg/main_ppo.py", status="modified", kind="source", language="python", additions=5,
                          definitions_added=(Definition("helper", "function", 3),))  # fmt: skip
    c = classify(snap(), DiffAnalysis((script,)), FIX)
    assert "api" not in {f.source for f in c.factors}
    assert all(f.evidence for f in c.factors)


# --- class 4: the description's promises, checked on every line of the patch ----------


def test_corpus_names_in_tests_context_or_background_are_not_missing(rules):
    for number in ("verl-2026h1/6542", "verl-2026h1/5753", "verl-2026h1/6265", "verl-2026h1/6993", "verl-2026h1/5881", "verl-2026h1/6228"):
        guide = build_guide(corpus(number), rules, lang="en")
        assert not [f for f in guide.data["follow_ups"] if "description says" in f], number
        assert "which this diff does not contain" not in guide.markdown


def test_synthetic_only_a_promised_flag_absent_from_every_line_is_a_follow_up():
    patch = "@@ -1,3 +1,4 @@ def run():\n     parser.add_argument('--keep-me')\n-    a = 1\n+    a = 2\n"
    s = snap(body="### What does this PR do?\n\nAdds `--new-flag` to the launcher. Background: see `old_helper`.\n"
                  "It also adds `--keep-me` handling.", files=(ChangedFile("pkg/cli.py", patch=patch, additions=1, deletions=1),))  # fmt: skip
    d = parse_description(s.body)
    _present, absent = check_against_diff(d, analyse(s), [patch])
    assert "--keep-me" not in absent  # on a context line
    promised = promised_missing(d, absent)
    assert [n for n, _ in promised] == ["--new-flag"]  # `old_helper` is background, not a promise
    (follow,) = [f for f in follow_ups(s, analyse(s), ReviewSummary((), ()), "fix", promised=promised) if f.key == "follow.description_missing"]
    assert follow.evidence[0].source == "description" and "--new-flag" in follow.evidence[0].new


# --- class 5: canned advice ------------------------------------------------------------


def test_corpus_deleted_dockerfile_changes_no_dependency(rules):
    c = build_guide(corpus("verl-2026h1/6514"), rules, lang="en").classification
    assert "dependencies" not in {f.source for f in c.factors}


def test_synthetic_canned_advice_is_gone():
    assert "find where this code went" not in t("focus.removed_tree", "en", {"names": ("a.py",), "lines": 3, "count": 1})
    assert "may break" not in t("focus.fact.dep_pin_changed.pre1", "en", {"name": "x", "old": "0.1", "new": "0.2"})
    gone = FileAnalysis(path="docker/Dockerfile", status="removed", kind="build", deletions=40,
                        dependency_changes=(DependencyChange("pip", "removed", ">=1", ""),))  # fmt: skip
    assert "dependencies" not in {f.source for f in classify(snap(), DiffAnalysis((gone,)), ()).factors}


# --- class 6: design quotes on the file they are about --------------------------------


def test_corpus_design_bullet_naming_a_file_stays_on_it():
    s = corpus("verl-2026h1/7038")
    points = design_points(changed_texts(analyse(s), set()), parse_description(s.body))
    assert points
    for p in points:
        named = [w for w in ("vllm_async_server.py", "utils.py") if w in p.params["text"]]
        assert not named or p.file.endswith(named[0]) and p.evidence


def test_synthetic_design_bullet_about_another_file():
    a = py("pkg/a.py", added_lines=("def run_server(x): return x",))
    b = py("pkg/b.py", added_lines=("run_server(1)", "compute_logits = 2"))
    d = parse_description("### Design & Code Changes\n\n- `pkg/b.py` — `run_server` now passes `compute_logits`\n- `run_server` changes\n")
    points = design_points(changed_texts(DiffAnalysis((a, b)), set()), d)
    assert [(p.file, p.params["text"][:9]) for p in points] == [("pkg/b.py", "`pkg/b.py")]  # the tie is left out


def test_a_design_bullet_whose_code_the_file_s_change_lacks_is_left_out():
    """A blind rating: "`vllm_async_server.py` — at engine launch, if `kv_store.enable`,
    append…" on a file whose diff has no kv_store (only the prefix-cache resets the bullet
    also names, past what the guide shows) quotes a design the merged code does not have."""
    b = py("pkg/server.py", added_lines=("await self.engine.reset_prefix_cache(**KWARGS)",), symbols_touched=("Server.wake_up",))
    gone = parse_description("### Design & Code Changes\n\n- `pkg/server.py` — at engine launch, if `kv_store.enable`, append "
                             "`--kv-transfer-config` to the serve args. Three reset call sites (`wake_up`) now pass the kwargs.\n")
    kept = parse_description("### Design & Code Changes\n\n- `pkg/server.py` — `wake_up` resets the prefix cache with `reset_prefix_cache`.\n")
    analysis = DiffAnalysis((b,))
    touched = {b.path: " ".join(b.symbols_touched)}
    assert design_points(changed_texts(analysis, set()), gone, None, touched) == []
    assert [p.file for p in design_points(changed_texts(analysis, set()), kept, None, touched)] == ["pkg/server.py"]


# --- class 7: counts, reverts, template fragments --------------------------------------


def test_plural_forms_revert_number_and_template_fragments():
    assert t("follow.no_tests", "en", {"count": 1, "lines": 7}).startswith("1 source file changed")
    assert t("follow.no_tests", "en", {"count": 2, "lines": 7}).startswith("2 source files changed")
    assert _reverted_number((RuleHit("r", "f:1", captures={"reverted": "200"}),), own=200) is None
    body = ("### API and Usage Example\n\n> Demonstrate how the API changes if any, and provide usage example(s)\nif possible.\n\n"
            "### Design & Code Changes\n\n> Demonstrate the high-level design if this PR is complex, and list the\nspecific changes.\n"
            "The real change.\n")  # fmt: skip
    sections = parse_description(body).sections
    assert "if possible." not in "\n".join(sections.values()) and "specific changes." not in "\n".join(sections.values())
    assert sections["design"] == "The real change."


def test_corpus_template_fragments_leave_the_sections():
    d = parse_description(corpus("verl-2026h1/7184").body)
    text = "\n".join(v for k, v in d.sections.items() if k != "checklist")
    assert "if possible." not in text and "specific changes." not in text


# --- after the second blind rating -----------------------------------------------------------


@pytest.mark.parametrize("name", ["verl-2026h1/4882", "verl-2026h1/6228", "verl-2026h1/6432"])
def test_corpus_checks_are_stated_without_a_consequence_the_diff_cannot_show(rules, name):
    md = build_guide(corpus(name), rules).markdown
    for overclaim in ("used to pass is now refused", "it refused now passes", "rely on the old default behave differently"):
        assert overclaim not in md


def test_synthetic_check_points_say_what_raises_not_who_is_refused():
    # An assert raises when its condition fails, a raise under an `if` when it holds: say neither.
    assert t("focus.fact.check_added", "en", {"name": "f", "detail": "AssertionError"}) == "new check in `f` that can raise AssertionError"
    assert "refused" not in t("focus.fact.check_removed", "en", {"name": "f", "detail": "AssertionError"})


def test_a_moved_or_reindented_line_is_not_formatting():
    from bot.engine.focus.housekeeping import housekeeping

    moved = py("pkg/base.py", added_lines=("    self.mode = mode", "    self.device = device"),
               removed_lines=("    self.device = device", "    self.mode = mode"))
    reindented = py("pkg/run.py", added_lines=("step()",), removed_lines=("    step()",))
    rewrapped = py("pkg/wrap.py", added_lines=("f(a,", "  b)"), removed_lines=("f(a, b)",))
    house = housekeeping(DiffAnalysis((moved, reindented, rewrapped)))
    assert house.formatting == ("pkg/wrap.py",)


def test_argument_lines_re_aligned_under_their_bracket_are_formatting():
    """A formatter re-aligned a call's argument lines (fresh-p #3: 20 such lines were the
    first focus point, "+20/−20 lines, in `RayPPOTrainer`", sending readers to a no-op);
    inside brackets indentation means nothing. A statement re-indented still counts."""
    from bot.engine.focus.housekeeping import housekeeping

    aligned = py("pkg/trainer.py",
                 added_lines=("                              tokenizer=self.tokenizer,", "                              truncation='error')"),
                 removed_lines=("                                 tokenizer=self.tokenizer,", "                                 truncation='error')"))
    statement = py("pkg/run.py", added_lines=("    step(a,", "         b)"), removed_lines=("step(a,", "     b)"))
    assert housekeeping(DiffAnalysis((aligned, statement))).formatting == ("pkg/trainer.py",)


def test_a_test_class_is_not_counted_as_a_test():
    a = analyse(snap(files=[ChangedFile("tests/test_x.py", "added", additions=6, patch=(
        "@@ -0,0 +1,6 @@\n+class TestX:\n+    def test_a(self):\n+        pass\n+\n+    def test_b(self):\n+        pass"))]))
    assert set(a.files[0].tests_added) == {"TestX.test_a", "TestX.test_b"}


def test_existing_functions_count_a_method_once_not_also_its_class():
    from bot.engine.risk import existing_functions

    f = py("pkg/loop.py", symbols_touched=("Worker", "Worker._score", "helper"))
    assert [n for n, _ in existing_functions([f])] == ["Worker._score", "helper"]


def test_a_ticked_template_checklist_item_is_not_a_design_point():
    d = parse_description("### Design & Code Changes\n\n- [X] Once your PR is ready for CI, send a message in the `ci-request` channel\n"
                          "- Route `compute_score` through the new `RewardLoopWorker`\n")
    assert d.design_points == ("Route `compute_score` through the new `RewardLoopWorker`",)


def test_a_new_dockerfiles_base_image_is_not_an_added_dependency():
    patch = "@@ -0,0 +1,3 @@\n+FROM ubuntu:22.04 AS base\n+RUN pip install numpy==1.26\n+ENV X=1"
    a = analyse(snap(files=[ChangedFile("docker/Dockerfile.new", "added", additions=3, patch=patch)]))
    assert a.files[0].dependency_changes == () and not [b for b in a.files[0].behaviour if b.kind.startswith("dep_")]


def test_hydra_defaults_entries_are_not_keys_with_values_and_composed_removals_say_less():
    patch = ("@@ -1,6 +1,6 @@\n defaults:\n-  - actor@actor_rollout_ref.actor: dp_actor\n+  - actor@actor_rollout_ref.actor: ${model_engine}_actor\n"
             " actor_rollout_ref:\n-  nccl_timeout: 600\n+  other: 1\n")
    a = analyse(snap(files=[ChangedFile("verl/trainer/config/ppo.yaml", "modified", additions=2, deletions=2, patch=patch)]))
    facts = a.files[0].behaviour
    assert not [b for b in facts if b.symbol.startswith("defaults")]
    assert [b.symbol for b in facts if b.kind == "key_removed"] == ["actor_rollout_ref.nccl_timeout"]
    from bot.engine.focus.points import focus_points

    points = focus_points(a, (), ReviewSummary(), snapshot=snap())
    removed = [p for p in points if p.key and p.key.startswith("focus.fact.key_removed")]
    # The composition changed, so the key may come from another file: "removed", no consequence.
    assert removed and all(p.key.startswith("focus.fact.key_removed.plain") for p in removed)


def test_a_reworded_or_widened_check_is_neither_new_nor_removed():
    patch = ("@@ -1,4 +1,4 @@\n def build(cfg):\n-    assert cfg.strategy in ('fsdp', 'fsdp2')\n"
             "+    assert cfg.strategy in ('fsdp', 'fsdp2', 'fsdp_turbo'), f'bad {cfg.strategy}'\n     return cfg\n")
    a = analyse(snap(files=[ChangedFile("pkg/engine.py", "modified", additions=1, deletions=1, patch=patch)]))
    assert not [b for b in a.files[0].behaviour if b.kind in ("check_added", "check_removed")]


def test_a_guessed_change_type_is_not_stated_as_fact_in_the_score():
    f = py("pkg/loop.py", added_lines=("    return x + 1",), removed_lines=("    return x",), symbols_touched=("step",))
    c = classify(snap(title="narrator: words quoted in a fact are no vocabulary"), DiffAnalysis((f,)), ())
    assert (c.change_type, c.change_type_source) == ("fix", "inferred")
    assert [x.key for x in c.factors if x.source == "behaviour"] == ["factor.behaviour.source"]
    c = classify(snap(title="[x] fix: y"), DiffAnalysis((f,)), FIX)
    assert [x.key for x in c.factors if x.source == "behaviour"] == ["factor.behaviour.fix"]


def _cast_guide(rules, patch):
    f = ChangedFile("verl/trainer/ppo/ray_trainer.py", "modified", additions=patch.count("\n+"), deletions=patch.count("\n-"), patch=patch)
    s = snap(files=(f,))
    return classify(s, analyse(s), ())


def test_a_cast_moved_into_another_expression_of_the_same_function_is_not_removed(rules):
    # The same `.float()` on the same operands, now written once in a dict that is filled
    # in steps: no cast is removed (one count fewer of the token is no removal).
    patch = (
        "@@ -10,11 +10,11 @@ class RayPPOTrainer:\n"
        "     def _compute_old_log_prob(self, batch):\n"
        "         log_probs = no_padding(log_probs)\n"
        "+        result = {\"old_log_probs\": log_probs.float(), \"entropys\": entropy.float()}\n"
        "         if routed_experts is not None:\n"
        "-            out = get_td(\n"
        "-                {\"old_log_probs\": log_probs.float(), \"entropys\": entropy.float(), \"r\": routed_experts}\n"
        "-            )\n"
        "-        else:\n"
        "-            out = get_td({\"old_log_probs\": log_probs.float(), \"entropys\": entropy.float()})\n"
        "+            result[\"r\"] = routed_experts\n"
        "+        if s is not None:\n"
        "+            result[\"s\"] = s.float()\n"
        "+        out = get_td(result)\n"
        "         return out\n"
    )
    risks = [f for f in _cast_guide(rules, patch).factors if f.source == "numerics"]
    # What is left is the cast the change does add: `s.float()`, on its own line.
    assert [(r.key, r.evidence[0].new) for r in risks] == [("factor.numerics_added", 'result["s"] = s.float()')]


def test_a_cast_dropped_from_its_operand_is_still_removed(rules):
    patch = (
        "@@ -10,4 +10,4 @@ def loss(self, batch):\n"
        "     x = batch.x\n"
        "-    y = x.float() + other.float()\n"
        "+    y = x + other.float()\n"
        "     return y\n"
    )
    risks = [f for f in _cast_guide(rules, patch).factors if f.source == "numerics"]
    assert [(r.key, r.evidence[0].old) for r in risks] == [("factor.numerics_removed", "y = x.float() + other.float()")]


def test_a_hydra_defaults_list_is_composition_not_config_keys(rules):
    patch = (
        "@@ -0,0 +1,9 @@\n"
        "+defaults:\n"
        "+  - ../optim@optim: titan\n"
        "+  - ../engine@titan: titan\n"
        "+  - actor\n"
        "+  - _self_\n"
        "+\n"
        "+strategy: titan\n"
        "+param_offload: false\n"
        "+seed: 1\n"
    )
    f = ChangedFile("verl/trainer/config/actor/titan_actor.yaml", "added", additions=9, patch=patch)
    s = snap(files=(f,))
    guide = build_guide(s, rules, lang="en")
    assert "`defaults" not in guide.markdown and "optim@optim" not in guide.markdown
    (keys,) = [p for p in guide.focus if p.key and p.key.startswith("focus.config_added")]
    assert set(keys.params["names"]) == {"strategy", "param_offload", "seed"} and keys.params["count"] == 3
    for factor in guide.classification.factors:
        assert not any("defaults" in str(v) for v in factor.params.values())


def test_a_design_bullet_quoting_a_line_the_pull_request_removes_is_no_design_point():
    # #5512's description shows its diff; the old line, as a bullet, was quoted as the design.
    a = py("verl/utils/dataset/rl_dataset.py",
           added_lines=('logger.warning("tools_kwargs is empty for index %s, data source: %s", index, row_dict["data_source"])',),
           removed_lines=('logger.warning("tools_kwargs is empty for index {}, data source: {}", index, row_dict["data_source"])',))
    d = parse_description(
        "### Design & Code Changes\n\n"
        '- logger.warning("tools_kwargs is empty for index {}, data source: {}", index, row_dict["data_source"])\n'
        '- logger.warning("tools_kwargs is empty for index %s, data source: %s", index, row_dict["data_source"])\n'
    )
    analysis = DiffAnalysis((a,))
    points = design_points(changed_texts(analysis, set()), d, added_texts(analysis, set()))
    assert [p.params["text"] for p in points] == ['logger.warning("tools_kwargs is empty for index %s, data source: %s", index, row_dict["data_source"])']
