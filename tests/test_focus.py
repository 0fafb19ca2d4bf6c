"""Focus points, review summaries and follow-ups, as plain functions."""

import pytest

from bot.engine.analysis.model import (
    Definition,
    DependencyChange,
    DiffAnalysis,
    FileAnalysis,
)
from bot.engine.focus.housekeeping import major_bump, public_keys
from bot.engine.focus.model import ReviewSummary
from bot.engine.focus.points import focus_points
from bot.engine.focus.review import follow_ups, review_summary
from bot.engine.render.messages import t
from bot.engine.snapshot import PullRequestSnapshot, Review, ReviewComment


def points(*files):
    return focus_points(DiffAnalysis(tuple(files)), (), ReviewSummary())


def test_major_bump():
    assert major_bump("==0.27.0", ">=1.10.0")
    # 0.x -> 0.y is a pre-1.0 minor move, not a major version (vllm 0.23.0 -> 0.24.0 in #7101).
    assert not major_bump("0.3", "0.4")
    assert not major_bump("0.23.0", "0.24.0")
    assert not major_bump("2.1", "2.4")
    assert not major_bump("", "1.0")


def test_a_major_dependency_bump_is_its_own_focus_point():
    f = FileAnalysis("pyproject.toml", "modified", "build", additions=1, deletions=1,
                     dependency_changes=(DependencyChange("trl", "changed", "0.27.0", "1.10.0"),))
    (p,) = [p for p in points(f) if p.symbol == "trl"]
    assert p.key == "focus.dep_major"


def test_removed_folders_are_one_point_not_one_per_file():
    files = [FileAnalysis(f"recipe/a/m{i}.py", "removed", "source", deletions=100,
                          definitions_removed=(Definition("compute_score", "function"),)) for i in range(20)]
    ps = points(*files)
    assert [p.key for p in ps].count("focus.removed_tree") == 1
    assert not any(p.key == "focus.removed" for p in ps)
    tree = next(p for p in ps if p.key == "focus.removed_tree")
    assert tree.file == "recipe/a/" and tree.params == {"count": 20, "lines": 2000, "names": ("m0.py", "m1.py", "m2.py")}


def test_private_attributes_are_not_config_keys_in_source():
    src = FileAnalysis("a.py", "modified", "source", config_keys_added=("Registry._errors", "Config.batch"))
    yaml = FileAnalysis("c.yaml", "modified", "config", config_keys_added=("model._target_",))
    assert public_keys(src, src.config_keys_added) == ["Config.batch"]
    assert public_keys(yaml, yaml.config_keys_added) == ["model._target_"]


def test_new_api_is_an_entry_point_only_when_the_diff_calls_it():
    a = FileAnalysis("a.py", "modified", "source", additions=50, definitions_added=(Definition("Alpha", "class"),))
    b = FileAnalysis("b.py", "modified", "source", additions=40, definitions_added=(Definition("Beta", "class"),))
    keys = [p.key for p in points(a, b) if p.key and p.key.startswith("focus.added")]
    # Nothing shows Alpha or Beta called: both are plainly "added", neither an "entry point".
    assert keys == ["focus.added", "focus.added"]


def test_a_new_symbol_another_file_calls_or_a_decorator_registers_is_said_as_that_fact():
    a = FileAnalysis("a.py", "modified", "source", additions=50, definitions_added=(Definition("AlphaBuilder", "class"),),
                     added_lines=("class AlphaBuilder:", "    pass", "x = BetaBuilder()"))
    b = FileAnalysis("b.py", "modified", "source", additions=40, definitions_added=(Definition("BetaBuilder", "class"),),
                     added_lines=("class BetaBuilder:", "    pass"))
    ps = {p.symbol: p.key for p in points(a, b) if p.key and p.key.startswith("focus.added")}
    # BetaBuilder is wired in by a.py; AlphaBuilder is only defined.
    assert ps == {"AlphaBuilder": "focus.added", "BetaBuilder": "focus.added_called"}
    c = FileAnalysis("c.py", "added", "source", additions=40, definitions_added=(Definition("make_gamma_loss", "function"),),
                     added_lines=("@LOSSES.register('gamma')", "def make_gamma_loss():", "    make_gamma_loss()"))
    assert [p.key for p in points(c) if p.symbol == "make_gamma_loss"] == ["focus.added_registered"]
    # A call only from its own file is structure, not an entry point.
    d = FileAnalysis("d.py", "added", "source", additions=40, definitions_added=(Definition("compute_delta", "function"),),
                     added_lines=("def compute_delta():", "    pass", "compute_delta()"))
    assert [p.key for p in points(d) if p.symbol == "compute_delta"] == ["focus.added"]


def test_at_most_two_points_per_file_and_six_in_all():
    files = [FileAnalysis(f"f{i}.py", "modified", "source", additions=30, definitions_added=(Definition(f"N{i}", "class"),),
                          config_keys_added=(f"C{i}.k",), shims=("version check: v",)) for i in range(6)]
    ps = points(*files)
    assert len(ps) == 6
    assert max(sum(1 for p in ps if p.file == f.path) for f in files) <= 2


def test_review_summary_keeps_decisive_states_and_busiest_threads():
    s = PullRequestSnapshot(
        repository="o/r", number=1, title="t", author="me",
        reviews=(Review(1, "ann", "APPROVED"), Review(2, "ann", "COMMENTED"), Review(3, "bob", "CHANGES_REQUESTED"),
                 Review(4, "me", "COMMENTED")),
        review_comments=(ReviewComment(1, "bob", "```suggestion\nx\n```", "a.py", 3),
                         ReviewComment(2, "ann", "+1", "a.py", 3, in_reply_to_id=1),
                         ReviewComment(3, "ann", "typo", "b.py", 9)),
    )
    r = review_summary(s)
    assert r.reviewers == (("ann", "APPROVED", False), ("bob", "CHANGES_REQUESTED", False))
    assert [t.path for t in r.threads] == ["a.py", "b.py"]
    assert r.threads[0].has_suggestion and not r.threads[0].author_replied
    keys = [f.key for f in follow_ups(s, DiffAnalysis(()), r, "fix")]
    assert keys == ["follow.suggestion", "follow.changes_requested"]


def test_todo_follow_ups_drop_the_marker_word():
    f = FileAnalysis("a.py", "modified", "source", additions=2, todos_added=("TODO(ann): use the real API",))
    (todo,) = [x for x in follow_ups(PullRequestSnapshot(repository="o/r", number=1, title="t"), DiffAnalysis((f,)),
                                     ReviewSummary(), "docs") if x.key == "follow.todo"]
    assert todo.params["text"] == "use the real API"


# --- an entry point's call found without a regex per name ------------------------------------------

import re  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from bot.engine.focus.wiring import _mentions  # noqa: E402

_PIECES = st.sampled_from(["load_ckpt", "x", "_", ".", "(", " ", "\t", '"', "'", "@", "é", "٣", "-", "a1", ":", "\n"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join), st.sampled_from(["load_ckpt", "ckpt", "x.y", "a::b", "load_ckpt:"]))
def test_a_call_is_found_as_the_regex_finds_it(line, short):
    escaped = re.escape(short)
    regex = re.compile(rf"(?<![\w.])(?:[\w.]*\.)?{escaped}\s*\(|[\"']{escaped}[\"']|@{escaped}\b")
    assert bool(_mentions(line, short)) == (regex.search(line) is not None)
    call = re.compile(rf"(?<![\w.])(?:[\w.]*\.)?{escaped}\s*\(|@{escaped}\b")
    assert (_mentions(line, short) == "call") == (call.search(line) is not None)


def test_a_call_is_a_call_of_this_name_only():
    assert _mentions("    self.loader.load_ckpt (path)", "load_ckpt") == "call"
    assert _mentions('register("load_ckpt")', "load_ckpt") == "name"
    assert _mentions("@load_ckpt", "load_ckpt") == "call"
    assert not _mentions("reload_ckpt(path)", "load_ckpt")
    assert not _mentions("@load_ckpt_v2", "load_ckpt")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "_", ".", "/", "-", "py", "yaml", ".py", " ", "é", "x.sh", "(", "2"]), max_size=14).map("".join))
def test_file_names_in_a_bullet_are_found_as_before_the_look_behind(text):
    from bot.engine.focus.names import _FILE_NAME

    before = re.compile(r"[\w./-]*\w\.(?:py|pyi|ya?ml|toml|json|cfg|ini|sh|cc|cpp|cu|h|rs|go|js|ts)\b")
    assert _FILE_NAME.findall(text) == before.findall(text)
    assert _FILE_NAME.sub(" ", text) == before.sub(" ", text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "B", "_", ".", "-", "()", "7", "٣", "é", "É", "ſ", "K", "x", "Q"]), max_size=8).map("".join))
def test_code_like_words_are_judged_as_the_regexes_alone_did(word):
    from bot.engine.focus import names

    code_like = re.compile(r"_|[a-z][A-Z]|\.|\(\)")
    caps = re.compile(r"^[A-Z][A-Z0-9_]{4,}$")
    codeish = re.compile(r"_|[a-z][A-Z]|\.|\(\)|-|\d|^[A-Z][A-Z0-9_]{4,}$|[A-Z].*[a-z].*[A-Z]")
    assert names._names_code.__wrapped__(word) == bool(code_like.search(word) or caps.match(word))
    assert names._code_like.__wrapped__(word) == (len(word) >= 4 and word not in names._STOP and codeish.search(word) is not None)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "Z", "_", ".", "/", "-", "1", "٣", "é", " ", "x9", "1.2", "v", "(", "\n"]), max_size=14).map("".join))
def test_tokens_are_found_as_the_plain_token_regex_finds_them(text):
    from bot.engine.focus.names import _TOKEN

    plain = re.compile(r"(?<!\w)(?:/?[A-Za-z_][A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*|\d+(?:\.\d+)+(?:[.\-]?[A-Za-z]\w*)?)")
    assert _TOKEN.findall(text) == plain.findall(text)


def test_a_wired_in_symbol_is_said_with_who_calls_or_registers_it_never_as_the_entry_point():
    # Which new symbol is "the entry point" of a change is interpretation (a registry, a
    # helper of one backend): the guide says the fact, with the file or the decorator.
    a = FileAnalysis("verl/trainer/main.py", "modified", "source", additions=50, added_lines=("    loss = sum_pi_squared_tp(logits)",))
    b = FileAnalysis("verl/utils/tp.py", "modified", "source", additions=40, definitions_added=(Definition("sum_pi_squared_tp", "function"),),
                     added_lines=("def sum_pi_squared_tp(x):", "    pass"))
    c = FileAnalysis("verl/models/registry.py", "added", "source", additions=40, definitions_added=(Definition("QwenImageModel", "class"),),
                     added_lines=("@DiffusionModelBase.register('qwen')", "class QwenImageModel:", "    pass", "QwenImageModel"))
    d = FileAnalysis("verl/cfg.py", "modified", "source", additions=40, added_lines=("NAME = 'make_gamma_loss'",))
    e = FileAnalysis("verl/losses.py", "modified", "source", additions=40, definitions_added=(Definition("make_gamma_loss", "function"),),
                     added_lines=("def make_gamma_loss():", "    pass"))
    texts = {p.symbol: t(p.key, "en", p.params) for p in points(a, b, c, d, e) if p.key and p.key.startswith("focus.added")}
    assert texts["sum_pi_squared_tp"] == "adds `sum_pi_squared_tp`; added lines in `verl/trainer/main.py` call `sum_pi_squared_tp`"
    assert texts["QwenImageModel"] == "adds `QwenImageModel`; `QwenImageModel` is registered by the decorator `@DiffusionModelBase.register`"
    assert texts["make_gamma_loss"] == "adds `make_gamma_loss`; added lines in `verl/cfg.py` name `make_gamma_loss` in a string"
    assert not any("entry point" in text for text in texts.values())


def test_an_added_assert_is_said_as_written_and_ranked_below_changes_of_behaviour():
    from bot.engine.analysis import analyse
    from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

    patch = (
        "@@ -10,6 +10,7 @@ def compute_weights(log_ratio, mode):\n"
        "     if mode == \"token\":\n"
        "         weights = log_ratio.exp()\n"
        "+        assert weights.dim() == 2, \"token weights\"\n"
        "     return weights\n"
        " \n"
        " \n"
        "@@ -40,3 +41,3 @@ def apply_weights(batch, mode):\n"
        "-    w = compute_weights(batch.log_ratio, mode)\n"
        "+    w = compute_weights(batch.log_ratio, mode, clip=True)\n"
        "     return w\n"
    )
    f = ChangedFile("verl/trainer/ppo/helper.py", "modified", additions=2, deletions=1, patch=patch)
    snap = PullRequestSnapshot(repository="o/r", number=1, title="t", changed_files=1, files=(f,))
    ps = focus_points(analyse(snap), (), ReviewSummary())
    keys = [p.key for p in ps]
    check = next(p for p in ps if "assert" in p.key)
    assert keys.index(check.key) > 0 and keys[0].startswith("focus.edit.call")
    text = t(check.key, "en", check.params)
    assert "can raise" not in text and "weights.dim() == 2" in text
    # The same assert known only as a behaviour fact (no exact edit paired it).
    from bot.engine.analysis.model import BehaviourFact

    fact = BehaviourFact("check_added", "verl/a.py", "compute_weights", "", 'if mode == "token": assert weights.dim() == 2', "AssertionError", 12, True)
    a = FileAnalysis("verl/a.py", "modified", "source", "python", additions=30, symbols_touched=("apply_weights", "compute_weights"), behaviour=(fact,))
    b = FileAnalysis("verl/b.py", "modified", "source", "python", additions=30, definitions_added=(Definition("load_weights", "function"),))
    ps = points(a, b)
    (check,) = [p for p in ps if "assert" in p.key or "check" in p.key]
    assert t(check.key, "en", check.params) == "adds `assert weights.dim() == 2` in `compute_weights`"
    assert ps.index(check) > [p.key for p in ps].index("focus.added")
    # A message that goes on over lines is left out: the fact holds only its first line.
    from bot.engine.focus.edits import assert_condition

    assert assert_condition("assert self.config.reward.enable_resource_pool, (") == "assert self.config.reward.enable_resource_pool"
    assert assert_condition("if a: assert f(x, y) == 2, 'msg'") == "assert f(x, y) == 2"


def test_a_call_of_a_name_several_new_definitions_share_is_no_wiring():
    # fresh-j: four engines each add get_model_parallel_group; megatron's added lines call
    # mpu.get_model_parallel_group(), which is none of them ("added lines … call FSDPEngine…" was false).
    engines = [
        FileAnalysis(f"{n.lower()}.py", "modified", "source", additions=30,
                     definitions_added=(Definition(f"{n}Engine.get_model_parallel_group", "method"),),
                     added_lines=("    def get_model_parallel_group(self):", "        return mpu.get_model_parallel_group()"))
        for n in ("Fsdp", "Megatron", "Titan")
    ]
    assert not any(p.key == "focus.added_called" for p in points(*engines))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_existing_code_factors_name_where_without_a_count_the_analysis_cannot_vouch_for(lang):
    # fresh-j: "changes code in 3 definitions that existed before (…)" where the diff changed
    # more: a hunk deep in a method shows only its class, so the total is not known.
    for key in ("factor.existing", "factor.runtime"):
        text = t(key, lang, {"count": 3, "names": ("A.fit", "B.fit", "C.fit"), "type": "chore"})
        assert "3" not in text and "A.fit" in text


def test_an_added_call_is_a_point_only_where_the_file_changed_little_else():
    from bot.engine.analysis.model import Edit

    call = Edit("call_added", "w.py", "Server.resume", "", "self.engine.wake_up()", "self.engine.wake_up", 12)
    small = FileAnalysis("w.py", "modified", "source", "python", additions=1, symbols_touched=("Server.resume",), edits=(call,))
    assert any(p.key and p.key.startswith("focus.edit.call_added") for p in points(small))
    big = FileAnalysis("w.py", "modified", "source", "python", additions=30, deletions=19, symbols_touched=("Server.resume",), edits=(call,))
    assert not any(p.key and p.key.startswith("focus.edit.call_added") for p in points(big))


def test_checks_of_a_function_the_diff_removes_or_moves_are_not_points_of_their_own():
    # fresh-l #3505: `_determine_resume_path` moved to another class whole; "check removed (it
    # raised AssertionError) (and 4 more like it)" read as resume validation dropped.
    from bot.engine.analysis.model import BehaviourFact

    fact = BehaviourFact("check_removed", "t.py", "SFTTrainer._determine_resume_path", "assert os.path.exists(p)", "", "AssertionError", 180, True)
    gone = FileAnalysis("t.py", "modified", "source", "python", deletions=30, behaviour=(fact,),
                        definitions_removed=(Definition("SFTTrainer._determine_resume_path", "method"),))
    assert not any(p.key == "focus.fact.check_removed" for p in points(gone))
    kept = FileAnalysis("t.py", "modified", "source", "python", deletions=1, behaviour=(fact,), symbols_touched=("SFTTrainer._determine_resume_path",))
    assert any(p.key == "focus.fact.check_removed" for p in points(kept))


def test_a_version_check_whose_branches_do_nothing_is_no_compatibility_handling():
    # fresh-l #3295: `if sys.version_info >= (3, 11): pass / else: pass` was the first focus point.
    dead = FileAnalysis("m.py", "added", "source", "python", additions=6, shims=("version check: if sys.version_info >= (3, 11):",),
                        added_lines=("import sys", "if sys.version_info >= (3, 11):", "    pass", "else:", "    pass", "x = 1"))
    assert not any(p.key == "focus.shim" for p in points(dead))
    live = FileAnalysis("m.py", "added", "source", "python", additions=6, shims=("version check: if sys.version_info >= (3, 11):",),
                        added_lines=("import sys", "if sys.version_info >= (3, 11):", "    import tomllib", "else:", "    import tomli as tomllib"))
    assert any(p.key == "focus.shim" for p in points(live))


def test_a_setter_added_where_a_method_went_is_no_rename():
    # fresh-l #3439: "CriticWorker.loss_fn renamed to CriticWorker.set_loss_fn" (a new setter).
    from bot.engine.focus.renames import renamed_pairs

    f = FileAnalysis("w.py", "modified", "source", "python",
                     definitions_removed=(Definition("CriticWorker.loss_fn", "method"), Definition("clear_rocm_attention_weight_caches", "function")),
                     definitions_added=(Definition("CriticWorker.set_loss_fn", "method"), Definition("refresh_rocm_attention_weight_caches", "function")))
    assert renamed_pairs(f) == (("clear_rocm_attention_weight_caches", "refresh_rocm_attention_weight_caches"),)


def test_a_files_largest_change_point_quotes_its_exact_changes_instead_of_names_it_uses():
    from bot.engine.analysis.model import Edit

    calls = (Edit("call_added", "w.py", "Server.resume", "", "self.engine.wake_up()", "self.engine.wake_up", 853),
             Edit("call_removed", "w.py", "Server.release", "self.barrier()", "", "self.barrier", 0, 869))
    big = FileAnalysis("w.py", "modified", "source", "python", additions=30, deletions=19, symbols_touched=("Server.resume", "Server.release"),
                       edits=calls, added_lines=("    self.engine.wake_up()", "    if a or b:", "    x = compute_total(y)"))
    (point,) = [p for p in points(big) if p.file == "w.py" and p.params.get("edits")]
    text = t(point.key, "en", point.params)
    assert "uses" not in point.params and "now also calls" not in text  # the counts; the edits are rendered by the ledger
    # Calls in a file this big make no points of their own: the file's point quotes them.
    assert [key for key, _params in point.params["edits"]] == ["focus.edit.call_removed", "focus.edit.call_added"]
    assert {ev.start for ev in point.evidence} == {853, 869}


def test_a_floor_raised_in_a_dockerfile_binds_the_image_not_users_installs():
    # fresh-m #3192: "minimum version raised …; older installs must upgrade" said of a Dockerfile.
    from bot.engine.analysis.model import BehaviourFact

    fact = BehaviourFact("dep_floor_raised", "docker/Dockerfile.vllm", "transformers", ">=4.51.0", ">=4.55.4", "minor", 12, False)
    image = FileAnalysis("docker/Dockerfile.vllm", "modified", "build", None, additions=1, deletions=1, behaviour=(fact,))
    (point,) = [p for p in points(image) if p.key and p.key.startswith("focus.fact.dep_floor_raised")]
    assert point.key == "focus.fact.dep_floor_raised.install"
    assert "must upgrade" not in t(point.key, "en", point.params)
    req_fact = BehaviourFact("dep_floor_raised", "requirements.txt", "transformers", ">=4.51.0", ">=4.55.4", "minor", 12, True)
    req = FileAnalysis("requirements.txt", "modified", "build", None, additions=1, deletions=1, behaviour=(req_fact,))
    assert any(p.key == "focus.fact.dep_floor_raised" for p in points(req))


def test_no_test_follow_up_when_a_ci_workflow_gained_lines():
    # fresh-m #2519: the PR added the e2e steps that save and resume a checkpoint to a CI workflow;
    # "no test file changed" read as "untested".
    src = FileAnalysis("verl/ckpt.py", "modified", "source", "python", additions=60, deletions=28)
    ci = FileAnalysis(".github/workflows/e2e.yml", "modified", "ci", "yaml", additions=12)
    snapshot = PullRequestSnapshot(repository="o/r", number=1, title="t")
    keys = lambda *files: [x.key for x in follow_ups(snapshot, DiffAnalysis(files), ReviewSummary(), "fix")]  # noqa: E731
    assert "follow.no_tests" in keys(src)
    assert "follow.no_tests" not in keys(src, ci)


def test_an_exact_change_inside_a_class_the_diff_adds_is_no_point():
    # fresh-o #1190: "in DecoratorLoggerBase.log_by_logging, line 62: now raises ValueError when
    # self.logger is None" — the class is new: nothing ran it before.
    from bot.engine.analysis.model import Edit

    raise_edit = Edit("raise_added", "log.py", "DecoratorLoggerBase.log_by_logging", "", "self.logger is None", "ValueError", 62)
    new = FileAnalysis("log.py", "modified", "source", "python", additions=30, edits=(raise_edit,),
                       definitions_added=(Definition("DecoratorLoggerBase", "class"),))
    assert not any(p.key and p.key.startswith("focus.edit.raise") for p in points(new))
    old = FileAnalysis("log.py", "modified", "source", "python", additions=3, edits=(raise_edit,), symbols_touched=("DecoratorLoggerBase.log_by_logging",))
    assert any(p.key and p.key.startswith("focus.edit.raise") for p in points(old))
