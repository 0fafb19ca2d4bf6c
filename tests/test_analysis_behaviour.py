"""Behaviour facts: config values, field defaults, signatures, checks, renames, dependencies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.analysis import BEHAVIOUR_KINDS, analyse, analyse_file
from bot.engine.analysis.config_keys import config_changes
from bot.engine.analysis.model import DependencyChange
from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.python import analyse_python
from bot.engine.analysis.versions import bounds, bump_of, commit_of, dependency_facts, package_file
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot
from bot.sources.bundle import load_bundle
from conftest import CORPUS


def changed(path: str, patch: str, status: str = "modified") -> ChangedFile:
    return ChangedFile(filename=path, status=status, additions=1, deletions=1, patch=patch)


def snapshot(*files: ChangedFile) -> PullRequestSnapshot:
    return PullRequestSnapshot.from_github(
        {"number": 1, "title": "t", "body": "", "merged": True, "user": {"login": "a"}, "base": {"ref": "main", "repo": {"full_name": "o/r"}}},
        [{"filename": f.filename, "status": f.status, "additions": 1, "deletions": 1, "changes": 2, "patch": f.patch} for f in files],
        [],
        [],
        repository="o/r",
    )


def kinds(facts) -> list[str]:
    return [b.kind for b in facts]


def corpus_analysis(number: int):
    path = CORPUS / f"{number}.json"
    if not path.exists():
        pytest.skip(f"verl corpus not found at {CORPUS}")
    return analyse(load_bundle(path))


# --- config files ---------------------------------------------------------------------------------

YAML = """@@ -10,6 +10,6 @@ data:
   train_batch_size: 256
-  shuffle: true
+  shuffle: false
-  max_len: 512  # tokens
+  max_prompt_len: 512
-  old_key: 3
   seed: 1
"""


def test_yaml_value_change_rename_and_removal():
    keys, facts = config_changes(parse_patch(YAML), "yaml", "verl/trainer/config/ppo.yaml")
    by_kind = {b.kind: b for b in facts}
    d = by_kind["default_changed"]
    assert (d.symbol, d.old, d.new, d.line, d.user_facing) == ("data.shuffle", "true", "false", 11, True)
    r = by_kind["key_renamed"]
    assert (r.old, r.new, r.detail) == ("data.max_len", "data.max_prompt_len", "512")
    assert by_kind["key_removed"].symbol == "data.old_key" and by_kind["key_removed"].old == "3"
    assert "data.shuffle" in keys.changed


def test_toml_and_json_values():
    toml = "@@ -1,3 +1,3 @@\n [tool.ruff]\n-line-length = 100\n+line-length = 120\n"
    _keys, facts = config_changes(parse_patch(toml), "toml", "pyproject.toml")
    assert [(b.kind, b.symbol, b.old, b.new) for b in facts] == [("default_changed", "tool.ruff.line-length", "100", "120")]
    js = '@@ -1,4 +1,4 @@\n {\n   "opt": {\n-    "lr": 0.1,\n+    "lr": 0.2,\n'
    _keys, facts = config_changes(parse_patch(js), "json", ".vscode/settings.json")
    assert [(b.symbol, b.old, b.new, b.user_facing) for b in facts] == [("opt.lr", "0.1", "0.2", False)]


def test_removed_mapping_is_reported_as_its_removed_leaves_not_the_parent():
    # Class 3 of issue 20: "config key `trainer` removed" when only `trainer.some_flag` went.
    patch = "@@ -1,3 +1,0 @@\n-profiler:\n-  enable: true\n-  steps: 3\n"
    _keys, facts = config_changes(parse_patch(patch), "yaml", "c.yaml")
    assert [(b.kind, b.symbol) for b in facts] == [("key_removed", "profiler.enable"), ("key_removed", "profiler.steps")]
    # An override block of a composed config: the rollout mapping comes from `defaults`.
    patch = ("@@ -54,8 +54,2 @@ actor_rollout_ref:\n   nccl_timeout: 600\n \n-  # Rollout model config.\n"
             "-  rollout:\n-\n-    layered_summon: False\n-\n algorithm:\n")
    _keys, facts = config_changes(parse_patch(patch), "yaml", "ppo.yaml")
    assert [(b.kind, b.symbol) for b in facts] == [("key_removed", "actor_rollout_ref.rollout.layered_summon")]


def test_real_pr_5139_default_change_in_rollout_yaml():
    path = CORPUS.parent / "verl-2026h1" / "5139.json"
    if not path.exists():
        pytest.skip("verl-2026h1 corpus not found")
    facts = analyse(load_bundle(path)).behaviour
    assert any(b.kind == "default_changed" and b.symbol.endswith("max_num_seqs") and (b.old, b.new) == ("256", "1024") for b in facts)


# --- Python fields, signatures, checks ----------------------------------------------------------------

FIELDS = """@@ -5,6 +5,6 @@ class FSDPConfig:
     name: str = "fsdp"
-    offload: bool = False
+    offload: bool = True
-    wrap: int = Field(default=1, description="old")
+    wrap: int = Field(default=1, description="new")
-    gone: int = 2
     size: int = 3
"""


def test_field_default_changed_and_field_removed():
    facts = analyse_python(parse_patch(FIELDS), path="verl/workers/config/fsdp.py").behaviour
    assert [(b.kind, b.symbol, b.old, b.new) for b in facts] == [
        ("default_changed", "FSDPConfig.offload", "False", "True"),
        ("field_removed", "FSDPConfig.gone", "2", ""),
    ]
    assert all(b.user_facing for b in facts)


def test_fields_are_reported_with_their_class_on_the_file():
    f = analyse_file(changed("verl/workers/config/fsdp.py", FIELDS))
    assert "FSDPConfig.gone" in f.fields_removed and "FSDPConfig.offload" in f.fields_changed


SIGNATURES = """@@ -1,12 +1,14 @@
 class Trainer:
-    def fit(self, data, epochs=1):
+    def fit(self, data, epochs=3, *, seed=None):
         pass
-    def save(self, path, fmt="pt"):
+    def save(self, target, fmt="pt"):
         pass
-    def load(self, path) -> dict:
+    def load(self, path, strict) -> State:
         pass
-def run(a, b):
+def run(b, a):
     pass
"""


def test_signature_facts():
    facts = analyse_python(parse_patch(SIGNATURES), path="t.py").behaviour
    got = {(b.kind, b.symbol): b for b in facts}
    assert got[("parameter_added", "Trainer.fit")].detail == "added `seed=None`"
    assert (got[("default_changed", "Trainer.fit(epochs)")].old, got[("default_changed", "Trainer.fit(epochs)")].new) == ("1", "3")
    assert got[("signature_changed", "Trainer.save")].detail == "parameter `path` is now `target`"
    load = got[("signature_changed", "Trainer.load")].detail
    assert "added required parameter `strict`" in load and "return annotation `dict` -> `State`" in load
    assert got[("signature_changed", "run")].detail == "reordered parameters"


def test_cut_or_unparseable_header_gives_no_signature_fact():
    patch = "@@ -1,2 +1,2 @@\n-def f(a,\n+def f(a, b,\n"
    assert analyse_python(parse_patch(patch)).behaviour == ()


CHECKS = """@@ -1,12 +1,15 @@
 def check(x):
+    if x < 0:
+        raise ValueError("negative")
+    assert x != 3, "three"
-    if x is None:
-        raise TypeError("none")
     try:
         y = 1 / x
     except ZeroDivisionError:
+        raise RuntimeError("zero")
         pass
+    raise NotImplementedError
     return y
"""


def test_checks_added_and_removed_with_their_types():
    facts = analyse_python(parse_patch(CHECKS), path="m.py").behaviour
    assert [(b.kind, b.detail) for b in facts] == [
        ("check_added", "ValueError"),
        ("check_added", "AssertionError"),
        ("check_removed", "TypeError"),
    ]
    assert facts[0].new == 'if x < 0: raise ValueError("negative")' and facts[0].line == 3 and facts[0].symbol == "check"


def test_checks_in_tests_are_not_checks_and_moved_checks_are_neither():
    patch = "@@ -1,3 +1,3 @@\n def t():\n-    assert a == 1\n+    assert a == 1\n"
    assert analyse_python(parse_patch(patch), kind="source").behaviour == ()
    assert analyse_python(parse_patch("@@ -1,1 +1,2 @@\n def t():\n+    assert a\n"), kind="test").behaviour == ()


# --- renames, moves, removals -----------------------------------------------------------------------

BODY = ["    total = 0", "    for x in xs:", "        total += x * weight", "    return total / len(xs)"]


def _def(sign: str, name: str, start: int = 1) -> str:
    lines = [f"def {name}(xs, weight):", *BODY]
    return f"@@ -{start},{len(lines)} +{start},0 @@\n" if sign == "-" else f"@@ -{start},0 +{start},{len(lines)} @@\n"


def _patch(sign: str, name: str) -> str:
    lines = [f"def {name}(xs, weight):", *BODY]
    header = f"@@ -1,{len(lines)} +0,0 @@\n" if sign == "-" else f"@@ -0,0 +1,{len(lines)} @@\n"
    return header + "\n".join(sign + line for line in lines) + "\n"


def test_rename_in_the_same_file_is_one_fact_not_a_removal():
    patch = _patch("-", "weighted_mean") + _patch("+", "mean_weighted").replace("@@ -0,0 +1,5 @@", "@@ -6,0 +1,5 @@")
    f = analyse(snapshot(changed("pkg/stats.py", patch))).files[0]
    assert kinds(f.behaviour) == ["symbol_renamed"]
    assert (f.behaviour[0].old, f.behaviour[0].new) == ("weighted_mean", "mean_weighted")
    assert f.renamed == (("weighted_mean", "mean_weighted"),)
    assert [d.name for d in f.definitions_removed] == ["weighted_mean"]  # kept, see FileAnalysis
    assert analyse(snapshot(changed("pkg/stats.py", patch))).relocated == {("pkg/stats.py", "weighted_mean"), ("pkg/stats.py", "mean_weighted")}


def test_move_to_another_file_and_plain_removal():
    moved = analyse(snapshot(changed("pkg/a.py", _patch("-", "weighted_mean")), changed("pkg/b.py", _patch("+", "weighted_mean"))))
    facts = moved.behaviour
    assert [(b.kind, b.path, b.detail) for b in facts] == [("symbol_moved", "pkg/b.py", "from pkg/a.py")]
    alone = analyse(snapshot(changed("pkg/a.py", _patch("-", "weighted_mean"))))
    assert [(b.kind, b.symbol, b.user_facing) for b in alone.behaviour] == [("symbol_removed", "weighted_mean", True)]


def test_different_bodies_are_not_a_rename():
    other = _patch("+", "other").replace("total / len(xs)", "None").replace("total += x * weight", "print(x)")
    facts = analyse(snapshot(changed("pkg/a.py", _patch("-", "weighted_mean")), changed("pkg/b.py", other))).behaviour
    assert kinds(facts) == ["symbol_removed"]


# --- dependencies -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "bump"),
    [
        ("0.23.0", "0.24.0", "pre-1.0 minor"),
        ("==0.27.0", "==1.10.0", "major"),
        (">=2.1", ">=2.4", "minor"),
        ("1.2.3", "1.2.4", "patch"),
        ("^4.2.0", "^4.3.1", "minor"),
        ("3f2a9c1d", "9b8e7f6a", "commit"),
        ("", "1.0", ""),
        ("latest", "stable", ""),
    ],
)
def test_bump_of(old, new, bump):
    assert bump_of(old, new) == bump


def test_bounds_and_commits():
    assert [str(v) if v else None for v in bounds(">=1.2,<2")] == ["1.2", "2", None]
    assert commit_of("git+https://x/y.git@4f1c2ab") == "4f1c2ab" and commit_of("20240101") is None
    assert package_file("pyproject.toml") and package_file("requirements.txt")
    assert not package_file("docker/requirements.txt") and not package_file("uv.lock")


def test_dependency_facts_kinds():
    def one(old, new, action="changed", file="requirements.txt"):
        change = DependencyChange("torch", action, old, new, file, bump_of(old, new))
        return [(b.kind, b.detail) for b in dependency_facts([change])]

    assert one("==2.1", "==2.4") == [("dep_pin_changed", "minor")]
    assert one(">=2.1", ">=3.0") == [("dep_floor_raised", "major")]
    assert one(">=2.1", ">=2.1,<3") == [("dep_ceiling_added", "")]
    assert one("", ">=2", action="added") == [("dep_added", "")]
    assert one("==2", "", action="removed") == [("dep_removed", "")]
    assert one(">=2.4", ">=2.1") == [("dep_pin_changed", "minor; lower floor")]
    assert one("==0.1.8", "@ git+https://x.git@main") == [("dep_pin_changed", "now a direct reference")]
    assert dependency_facts([DependencyChange("recipe", "changed", "a" * 40, "b" * 40, "recipe", "commit")], submodule=True)[0].kind == "dep_commit_moved"


def test_real_pr_7478_trl_major_bump():
    (fact,) = [b for b in corpus_analysis(7478).behaviour if b.symbol == "trl"]
    assert (fact.kind, fact.detail, fact.user_facing) == ("dep_pin_changed", "major", True)
    (change,) = [d for f in corpus_analysis(7478).files for d in f.dependency_changes]
    assert change.bump == "major"


def test_real_pr_7101_vllm_pre_1_0_minor_is_not_major():
    changes = [d for f in corpus_analysis(7101).files for d in f.dependency_changes if d.name == "vllm" and d.action == "changed"]
    assert changes and all(d.bump == "pre-1.0 minor" for d in changes)


def test_real_pr_7291_signature_changes():
    facts = [b for b in corpus_analysis(7291).behaviour if b.kind == "signature_changed"]
    assert any(b.symbol == "NCCLCheckpointEngine.init_process_group" and "added required parameter `num_senders`" in b.detail for b in facts)


@pytest.mark.parametrize(
    ("folder", "number", "kind", "symbol", "old", "new"),
    [
        ("verl-2026h1", 5487, "metric_renamed", "fully_async/trainer/idle_ratio", "trainer/idle_ratio", "fully_async/trainer/idle_ratio"),
        ("verl-2026h1", 5487, "field_removed", "TokenOutput.extra_info", "{}", ""),
        ("verl-2026h1", 5487, "symbol_moved", "fsdp2_sharded_save_to_cpu", "fsdp2_sharded_save_to_cpu", "fsdp2_sharded_save_to_cpu"),
        ("verl-2026h1", 6129, "symbol_moved", "LLMServerClient", "AsyncLLMServerManager", "LLMServerClient"),
        ("verl-2026h1", 7099, "dep_ceiling_added", "transformers", "!=5.6.0", "<5.12.0,!=5.6.0"),
        ("verl", 7101, "dep_floor_raised", "transformers", "<5.12.0,!=5.6.0", ">=5.5.3,!=5.6.0,<5.11"),
        ("verl", 6804, "check_removed", "ToolAgentLoop", "if has_decode_error: raise ValueError(", ""),
    ],
)
def test_fact_kinds_on_real_hunks(folder, number, kind, symbol, old, new):
    # Kinds the synthetic hunks above show, found again where real merged PRs have them.
    path = CORPUS.parent / folder / f"{number}.json"
    if not path.exists():
        pytest.skip(f"{folder} corpus not found at {path.parent}")
    facts = [b for b in analyse(load_bundle(path)).behaviour if (b.kind, b.symbol) == (kind, symbol)]
    assert any(b.old.startswith(old) and b.new == new for b in facts), facts


# --- compatibility evidence ---------------------------------------------------------------------------


@pytest.mark.parametrize("number", [3427, 6555, 6933, 7050, 7373])
def test_hasattr_and_isinstance_in_real_prs_are_not_compatibility(number):
    analysis = corpus_analysis(number)
    lines = [line for f in analysis.files for line in f.added_lines if "hasattr(" in line]
    assert lines, "the corpus PR adds hasattr checks"
    assert not any("hasattr" in s for f in analysis.files for s in f.shims)


def test_version_text_in_strings_and_comments_is_not_a_version_check():
    patch = '@@ -1,1 +1,4 @@\n x = 1\n+msg = "needs sys.version_info >= (3, 11)"\n+y = 2  # sys.version_info check later\n+if sys.version_info >= (3, 11):\n'
    assert analyse_python(parse_patch(patch)).shims == ("version check: if sys.version_info >= (3, 11):",)


def test_pr_6682_keeps_its_import_fallbacks():
    shims = [s for f in corpus_analysis(6682).files for s in f.shims]
    assert shims and all(s.startswith(("import fallback:", "version check:")) for s in shims)


# --- robustness ---------------------------------------------------------------------------------------

_LINES = st.lists(
    st.sampled_from(
        ["def f(a, b=1):", "    raise ValueError('x')", "class C:", "    x: int = 3", "    assert y", "-    x: int = 4",
         "key: value", "  sub: 1", '"k": 2,', "[tool]", "a = 'b'", "    return a", "except ImportError:", "def g(", "", " "]
    ),
    max_size=30,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    paths=st.lists(st.sampled_from(["a.py", "b.py", "c.yaml", "pyproject.toml", "d.json", "requirements.txt"]), min_size=1, max_size=3),
    bodies=st.lists(st.tuples(_LINES, _LINES), min_size=1, max_size=3),
    noise=st.text(max_size=80),
)
def test_analysis_never_crashes_and_facts_are_well_formed(paths, bodies, noise):
    files = []
    for i, path in enumerate(paths):
        removed, added = bodies[i % len(bodies)]
        patch = f"@@ -1,{len(removed)} +1,{len(added)} @@\n" + "\n".join([*("-" + r for r in removed), *("+" + a for a in added)]) + noise
        files.append(changed(f"{i}/{path}", patch))
    analysis = analyse(snapshot(*files))
    for fact in analysis.behaviour:
        assert fact.kind in BEHAVIOUR_KINDS and fact.path


def test_removed_file_gives_symbol_removed_not_checks_or_fields():
    patch = "@@ -1,6 +0,0 @@\n-class Cfg:\n-    size: int = 3\n-def check(x):\n-    if x:\n-        raise ValueError(x)\n-    return x\n"
    facts = analyse(snapshot(changed("pkg/gone.py", patch, status="removed"))).behaviour
    assert [(b.kind, b.symbol) for b in facts] == [("symbol_removed", "Cfg"), ("symbol_removed", "check")]


def test_metric_key_renamed_in_place():
    patch = (
        "@@ -1,3 +1,3 @@\n def log(m):\n"
        '-    metrics["actor/pg_loss"] = m.loss\n+    metrics["actor/policy_loss"] = m.loss\n'
        '-    path = "verl/trainer/a.py"\n+    path = "verl/trainer/b.py"\n'
    )
    facts = analyse_python(parse_patch(patch), path="verl/trainer/ppo.py").behaviour
    assert [(b.kind, b.old, b.new, b.line) for b in facts] == [("metric_renamed", "actor/pg_loss", "actor/policy_loss", 2)]
    assert analyse_python(parse_patch(patch), metric_hint=False).behaviour == ()
