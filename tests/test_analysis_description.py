"""PR descriptions: template sections, the author's purpose, reverts, identifiers checked against the diff."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.analysis import analyse
from bot.engine.analysis.description import Description, check_against_diff, parse_description
from bot.sources.bundle import load_bundle
from conftest import CORPUS

TEMPLATE = """### What does this PR do?\r
\r
> Add **concise** overview of what this PR aims to achieve or accomplish. Reference related GitHub issues and PRs that help with the review.\r
\r
Fixes #12. Adds `--max-retries` to `Trainer.fit` so flaky nodes retry. See verl/trainer/main_ppo.py for the entry.\r
<!-- hidden note with `not_an_identifier` -->\r
\r
### Checklist Before Starting\r
\r
- [ ] Search for similar PRs. Paste at least one query link here: ...\r
- [x] Format the PR title as `[{modules}] {type}: {description}`.\r
\r
### API and Usage Example\r
\r
```python\r
# Add code snippet or script demonstrating how to use this\r
```\r
\r
### Design & Code Changes\r
\r
- New `RetryPolicy` class\r
- `trainer.retries=3` in the config\r
\r
### Breaking\r
\r
Removes `Trainer.legacy_fit`.\r
"""


def test_template_sections_purpose_and_points():
    d = parse_description(TEMPLATE)
    assert d.purpose == "Adds `--max-retries` to `Trainer.fit` so flaky nodes retry."
    assert d.design_points == ("New `RetryPolicy` class", "`trainer.retries=3` in the config")
    assert d.breaking_text == "Removes `Trainer.legacy_fit`."
    # The placeholder API section is empty, and so is the checklist: ticked or not, its items are the template's.
    assert set(d.sections) == {"what", "design", "breaking"}
    assert not any("Search for similar" in text or "Format the PR title" in text for text in d.sections.values())
    assert "not_an_identifier" not in d.mentioned_identifiers
    assert d.mentioned_identifiers[:2] == ("--max-retries", "Trainer.fit")
    assert {"RetryPolicy", "trainer.retries", "Trainer.legacy_fit", "verl/trainer/main_ppo.py"} <= set(d.mentioned_identifiers)


def test_hard_wrapped_design_bullets_are_whole_sentences():
    body = (
        "### Design & Code Changes\n"
        "- `GPTModel.forward` remains unchanged and no `forward_backup` is\n"
        "created.\n"
        "- Sequence-parallel hidden states are gathered before\n"
        "  `linear_cross_entropy`.\n"
        "\n"
        "Not part of a bullet.\n"
        "1. Numbered items wrap\n"
        "too\n"
        "```python\n"
        "x = 1\n"
        "```\n"
        "- Last\n"
        "### Test\n"
        "covered\n"
    )
    assert parse_description(body).design_points == (
        "`GPTModel.forward` remains unchanged and no `forward_backup` is created.",
        "Sequence-parallel hidden states are gathered before `linear_cross_entropy`.",
        "Numbered items wrap too",
        "Last",
    )


@pytest.mark.parametrize(
    ("body", "purpose"),
    [
        ("See the conjugate PR at\nhttps://github.com/o/r/pull/7.", ""),  # a pointer, its link on the next line
        ("Fix 2 bugs in the multi-node rollout introduced by\nhttps://github.com/o/r/pull/5149 and\nhttps://github.com/o/r/pull/5150.", ""),
        ("Please see the design doc for details.", ""),
        # A story with a reference is context, not what the change does.
        ("Follow-up to #7326: document the required Megatron fix instead of a shim.", ""),
        ("Adds a retry policy to the checkpoint uploader.", "Adds a retry policy to the checkpoint uploader."),
    ],
)
def test_purpose_skips_pointers_and_sentences_cut_by_a_link(body, purpose):
    assert parse_description(body).purpose == purpose


def test_flags_and_paths_found_as_the_look_behind_patterns_find_them():
    # Faster searches than the patterns' own finditer; these cases pin the same answers.
    text = "use --fast or a--b, ---x, `--in-span`; see verl/a.py and http://x.io/b/c.py\n--first-on-line docs/x.md"
    found = parse_description(text).mentioned_identifiers
    assert "--fast" in found and "--first-on-line" in found and "--in-span" in found
    assert not any(f in found for f in ("--b", "--x", "-x"))
    assert "verl/a.py" in found and "docs/x.md" in found and "b/c.py" not in found


@pytest.mark.parametrize(
    ("body", "revert"),
    [
        ("Reverts verl-project/verl#7205", "verl-project/verl#7205"),
        ("This reverts commit 352f76f59ff014c6b423eed1a21a7881be1a0b46.", "352f76f59ff014c6b423eed1a21a7881be1a0b46"),
        ("Reverts #88 because it broke CI", "#88"),
        ("Revert the default value of max_num_seqs", ""),
    ],
)
def test_revert_of(body, revert):
    assert parse_description(body).revert_of == revert


@pytest.mark.parametrize("body", [None, "", "   ", 42, "<!-- only a comment -->", "### What does this PR do?\n\n> Add **concise** overview"])
def test_empty_or_template_only_bodies(body):
    d = parse_description(body)
    assert d.purpose == "" and d.design_points == () and d.mentioned_identifiers == ()


def test_template_purpose_is_not_the_authors():
    assert parse_description("### What does this PR do?\n\nhttps://github.com/o/r/pull/1\nRevert the default value of max_num_seqs\n").purpose == (
        "Revert the default value of max_num_seqs"
    )


def _bundle(number: int):
    path = CORPUS / f"{number}.json"
    if not path.exists():
        pytest.skip(f"verl corpus not found at {CORPUS}")
    return json.loads(path.read_text(encoding="utf-8")), load_bundle(path)


def test_real_pr_7373_purpose_and_checked_identifiers():
    raw, snapshot = _bundle(7373)
    d = parse_description(raw["pull"]["body"])
    assert d.purpose.startswith("Allow the hybrid GPUs to switch to the rollout mode")
    present, absent = check_against_diff(d, analyse(snapshot))
    assert "separate_async" in present
    assert "vllm-project/vllm#44890" not in present + absent  # a cross-repo reference, not an identifier


def test_real_pr_7488_revert_and_template_checklist_ignored():
    raw, _snapshot = _bundle(7488)
    d = parse_description(raw["pull"]["body"])
    assert d.revert_of == "352f76f59ff014c6b423eed1a21a7881be1a0b46"
    # "#7205 will cause hccl error …" is background about another PR, not what this one does.
    assert d.purpose == ""
    assert "megatron" not in d.mentioned_identifiers  # from the template's module list


def test_check_against_diff_by_path_symbol_key_and_text():
    _raw, snapshot = _bundle(7491)
    d = Description(mentioned_identifiers=("AgentLoopOutput", "extra_fields", "agent_loop.py", "no_such_thing_anywhere"))
    present, absent = check_against_diff(d, analyse(snapshot))
    assert present == ("AgentLoopOutput", "extra_fields", "agent_loop.py") and absent == ("no_such_thing_anywhere",)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*"#>-[]x `<!->\r\n*/.abc(){}_=", "### What", "```", "<!--", "Reverts #1", "- [ ] "]), max_size=120).map("".join))
def test_parse_never_raises(body):
    d = parse_description(body)
    assert isinstance(d.purpose, str) and len(d.mentioned_identifiers) <= 200


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="-ab_/.\n x1:", max_size=60))
def test_fast_flag_search_equals_the_look_behind_pattern(text):
    from bot.engine.analysis.description import _FLAG, _flags

    assert _flags(text) == [m.group(1) for m in _FLAG.finditer(text)]


@pytest.mark.parametrize(
    ("body", "purpose"),
    [
        # A template quote's hard-wrapped continuation is template too ("… review." was the purpose).
        ("### What does this PR do?\nadd kimi-ckpt-engine support in ascend 950\n> Add **concise** overview of what this PR aims to achieve or\n"
         "accomplish. Reference related GitHub issues and PRs that help with the\nreview.\n", "add kimi-ckpt-engine support in ascend 950"),
        # Greetings, stories, links, mentions and background are not what the change does.
        ("Hi team, this PR adds a retry policy to the uploader.", ""),
        ("Thanks to @alice for the report. Adds a retry policy to the checkpoint uploader.", "Adds a retry policy to the checkpoint uploader."),
        ("https://github.com/o/r/pull/7413 introduced a regression for vLLM.", ""),
        ("The router replay path lacks FP8 padding logic. This PR adds the missing FP8 padding for router replay.",
         "This PR adds the missing FP8 padding for router replay."),
        ("When a replica spans multiple nodes, only node_rank==0 runs run_server().", ""),
        ("Using the latest verl with an older Megatron-Bridge causes `ImportError` at runtime.", ""),
        ("This PR fixes it by passing the bucket length as metadata.", ""),
        # Cut-offs: "(e.g." is no sentence end; a sentence ending at "(e.g." or mid-parenthesis is not used.
        ("Adds a retry policy for transient errors (e.g. `503`) to the checkpoint\nuploader so runs survive them.",
         "Adds a retry policy for transient errors (e.g. `503`) to the checkpoint uploader so runs survive them."),
        ("Adds a retry policy for transient errors (e.g.", ""),
        ("fix dapo multi model practice\nThe accuracy comparison are as follows:", ""),
        ("Solves a few related bugs related to reward model configs: 1. **Wrong world size computation:** fixed.", ""),
        # A sentence introducing a list is whole without its colon; a list's first item is read to its end.
        ("Fix two crashes triggered by empty token sequences during prefill:\n\n1. a\n2. b", "Fix two crashes triggered by empty token sequences during prefill."),
        ("- Avoid requirements-npu.txt being overwritten\n  by setup.py during install\n- Other", "Avoid requirements-npu.txt being overwritten by setup.py during install"),
        ("This PR updates the parameter settings in the following NPU recipe scripts.", ""),
    ],
)
def test_purpose_is_the_first_informative_sentence(body, purpose):
    assert parse_description(body).purpose == purpose


WHAT = "### What does this PR do?\n\n"


@pytest.mark.parametrize(
    ("body", "purpose"),
    [
        # "+" between words is no inline list.
        ("Fixes CP correctness bug in Megatron + Verl interaction.", "Fixes CP correctness bug in Megatron + Verl interaction."),
        # A short sentence that names code in spans says what it changes.
        ("Convert `routed_experts` to `numpy.ndarray`.", "Convert `routed_experts` to `numpy.ndarray`."),
        # The sentence after its label.
        ("Models with odd buffers deadlock.\n\nFix: sort buffers by name before broadcasting them.",
         "Sort buffers by name before broadcasting them."),
        # Verbs of change beyond the common ones, and prefixed ones.
        ("This PR persists `meta.json` for actor checkpoints when LoRA is enabled.",
         "This PR persists `meta.json` for actor checkpoints when LoRA is enabled."),
        ("Auto-convert `old_key` to its replacement `new_key` when vllm is new.",
         "Auto-convert `old_key` to its replacement `new_key` when vllm is new."),
        # "by:" before a list of means ends the sentence.
        ("This PR makes the vectorized path match canonical GRPO by:\n\n- one\n- two",
         "This PR makes the vectorized path match canonical GRPO."),
        # An aside pointing elsewhere goes, the sentence stays.
        ("Adds pipeline-parallel support to the delta export (follow-up to #7060; PP was guarded).",
         "Adds pipeline-parallel support to the delta export."),
        # A dunder name is not bold text.
        ("Removes a guard in `Server.__init__` that overrode the load format.",
         "Removes a guard in `Server.__init__` that overrode the load format."),
        ("Removes a guard in Server.__init__ that overrode the __load__ format.",
         "Removes a guard in Server.__init__ that overrode the load format."),
        # "all" before a noun is no back-reference.
        ("This change passes all outputs to `_compute_score` so managers can score turns.",
         "This change passes all outputs to `_compute_score` so managers can score turns."),
    ],
)
def test_the_authors_purpose_sentence_is_found(body, purpose):
    assert parse_description(WHAT + body).purpose == purpose


@pytest.mark.parametrize(
    "body",
    [
        "This PR fixes all of them in the trainer loop.",
        "Released `megatron-core` 0.18.0 and 0.18.2 do not carry the fix either.",
        "Fixes #12 in the rollout worker for good.",
    ],
)
def test_sentences_that_do_not_say_what_the_change_does_are_not_the_purpose(body):
    assert parse_description(WHAT + body).purpose == ""


def test_a_long_sentence_is_cut_at_its_main_clause_or_skipped():
    long_list = ", ".join(f"item number {i}" for i in range(30))
    body = f"Makes the reward path deterministic across two identical runs, closing the gaps: {long_list}."
    assert parse_description(WHAT + body).purpose == "Makes the reward path deterministic across two identical runs, closing the gaps."
    unbroken = "Adds " + " and ".join(f"the option number {i}" for i in range(30)) + "."
    follow = "Adds a `timeout` to the rollout client."
    assert parse_description(WHAT + unbroken + " " + follow).purpose == follow


# --- regexes that start where a match can, and tests that rule a regex out: the same results ------

import re as _re  # noqa: E402

from hypothesis import given as _given, settings as _settings, strategies as _st  # noqa: E402

from bot.engine.analysis import description as _description  # noqa: E402

_PIECES = _st.sampled_from(["a", "A", ".", "!", "?", " ", "\t", "\n", "\u3000", "`", "(", "7", "e.g.", "Vs.", "ADD", "new", "ſupport", "İ", "K", "#", "   #", "x"])


@_settings(max_examples=500, deadline=None)
@_given(_st.lists(_PIECES, max_size=16).map("".join))
def test_sentence_ends_and_word_tests_agree_with_the_plain_regexes(text):
    sentence_end = _re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
    assert _description._SENTENCE_END.split(text) == sentence_end.split(text)
    if _description._ABBREVIATION.search(text):
        assert _description._may_abbreviate(text)
    if _description._PROMISE.search(text):
        assert _description._may_promise(text)
    if _description._HEADING.match(text):
        assert text[:4].lstrip()[:1] == "#"


# --- what the audit of new pull requests found the purpose missing for ---------------------------


def test_struck_through_text_is_neither_purpose_nor_a_name_the_diff_is_checked_for():
    # A struck-through sentence raised "the description says `wild_card`, not in the diff".
    body = ("### What does this PR do?\n\n@someone ~~Regarding the feat, this pr maintains the\n"
            "client by introducing a generic `wild_card` method in `Worker`~~. However `register` breaks.\n\n"
            "~~~python\nx = 1\n~~~\n")
    d = parse_description(body)
    assert "wild_card" not in d.mentioned_identifiers and "Worker" not in d.mentioned_identifiers
    assert "register" in d.mentioned_identifiers and "~~~python" in d.sections["what"]
    assert parse_description("~~Add `foo` to the trainer config.~~ Adds `bar` to the trainer config.").purpose == \
        "Adds `bar` to the trainer config."


def test_a_decorator_in_prose_is_not_a_mention():
    body = "### What does this PR do?\n\nMove all tool initialization (native + @function_tool) from ToolAgentLoop into AgentLoopWorker.\n"
    assert parse_description(body).purpose.startswith("Move all tool initialization")
    assert parse_description("Thanks to @someone for the fix in the trainer loop.").purpose == ""


def test_the_current_pr_is_a_lead_in():
    body = "### What does this PR do?\n\nThe current PR provides a Docker image for the qwen3.5 backend to run group training.\n"
    assert parse_description(body).purpose.startswith("The current PR provides")


def test_a_body_with_problem_and_fix_sections_takes_its_purpose_from_the_fix():
    body = ("## Problem\nThe OTB dispatch paths do not pass `old_log_probs`, causing a `TypeError`.\n\n"
            "## Fix\n1. Pass the `old_log_probs` parameter to the OTB estimator calls in `ray_trainer.py`.\n"
            "2. Add `**kwargs` to the estimators.\n\n## Testing\n- CPU validation\n")
    assert parse_description(body).purpose == "Pass the `old_log_probs` parameter to the OTB estimator calls in `ray_trainer.py`."


def test_a_sentence_pointing_at_another_pull_request_is_not_the_purpose():
    assert parse_description("Adjust the Qwen3 example to reduce rollout memory pressure after `verl-project/verl#6346`.").purpose == ""
    assert parse_description("Re-apply override_transformer_config in engine worker, because that PR causes certain patches to fail.").purpose == ""
    assert parse_description("Adjust the Qwen3 example to reduce rollout memory pressure on small nodes.").purpose != ""


# --- blind rating, fresh-j: author sentences kept or refused ----------------------------------------


@pytest.mark.parametrize(
    ("body", "purpose"),
    [
        # The author wrote over the template's quote and kept its "> " marker: their words.
        ("> Make `FullyAsyncRollouter` honor existing `data.train_max_samples` /\n> `data.val_max_samples` config by passing them through.",
         "Make `FullyAsyncRollouter` honor existing `data.train_max_samples` / `data.val_max_samples` config by passing them through."),
        ("> Enable log_val_generations in fully async training\n\n1. a", "Enable log_val_generations in fully async training"),
        # The title-format notes of the template are nobody's purpose.
        ("- `{modules}` include `fsdp`, `megatron`, `veomni`, `sglang`, `vllm`,\n`rollout`, `trainer`\n"
         "- If this PR involves multiple modules, separate them with `,` like `[megatron, fsdp, doc]`\n\n"
         "Adds DeepSeek-V4 scripts for AMD GPUs.", "Adds DeepSeek-V4 scripts for AMD GPUs."),
        # A participle left dangling by a link that was cut off goes with its comma.
        ("Make generation dump in RayPPOTrainer asynchronous with streaming writes, resolving\nhttps://github.com/o/r/issues/6302",
         "Make generation dump in RayPPOTrainer asynchronous with streaming writes."),
    ],
)
def test_author_words_in_quotes_and_after_template_notes(body, purpose):
    assert parse_description(WHAT + body).purpose == purpose


@pytest.mark.parametrize(
    "body",
    [
        # "also": a second change, the first said elsewhere (raters: not what the PR does).
        "We also fixed the issue 5754 here by properly calling ApplyRotaryEmb at NPU patch.",
        "This PR also adds a retry to the uploader.",
        # A circumstance, then a situation: not what this change does.
        "After migrating from megatron worker to engine worker, there is no longer Critic worker to use.",
        # A GitHub alert box is not the author's purpose.
        "> [!NOTE]\n> Adds nothing of its own here.",
    ],
)
def test_secondary_and_circumstantial_sentences_are_not_the_purpose(body):
    assert parse_description(WHAT + body).purpose == ""


def test_module_paths_and_methods_of_changed_classes_are_in_the_diff():
    from bot.engine.analysis.model import DiffAnalysis, FileAnalysis

    diff = DiffAnalysis((
        FileAnalysis("verl/model_merger/base_model_merger.py", "modified", "source", "python", symbols_touched=("save_lora_adapter",)),
        FileAnalysis("verl/models/transformers/glm4v.py", "modified", "source", "python", symbols_touched=("FullyAsyncTrainer",)),
    ))
    body = (WHAT + "Fixes a compatibility issue in `verl.model_merger` and `glm4v`, adds `FullyAsyncTrainer.__init__` "
            "setup, drops `verl.other_module`, `OtherClass.__init__` and `glm`.")
    present, absent = check_against_diff(parse_description(body), diff)
    assert {"verl.model_merger", "glm4v", "FullyAsyncTrainer.__init__"} <= set(present)
    assert {"verl.other_module", "OtherClass.__init__"} <= set(absent)


def test_a_name_the_description_spells_with_its_words_reordered_is_in_the_diff():
    # fresh-m #3194: "adds extra_reward_info" where the code says reward_extra_info.
    from bot.engine.analysis.model import DiffAnalysis, FileAnalysis

    diff = DiffAnalysis((FileAnalysis("a.py", "modified", "source", "python", added_lines=("out.reward_extra_info = info",)),))
    present, absent = check_against_diff(parse_description(WHAT + "Adds `extra_reward_info` and `extra_metric_field` to the output."), diff)
    assert present == ("extra_reward_info",) and absent == ("extra_metric_field",)


def test_the_older_templates_placeholder_and_wildcard_names_are_nobodys_words():
    # fresh-n #1350, #1891: the template's "Add one-line overview …" became the summary, and
    # "save_xx" (for the should_save_* properties) a name the diff was said to lack.
    body = ("### What does this PR do?\n\nAdd one-line overview of what this PR aims to achieve or accomplish.\n\n"
            "### Specific Changes\n\n- add `save_xx` and `load_*` properties\n- add `should_save_model`\n")
    d = parse_description(body)
    assert d.purpose == ""
    assert "save_xx" not in d.mentioned_identifiers and "should_save_model" in d.mentioned_identifiers
