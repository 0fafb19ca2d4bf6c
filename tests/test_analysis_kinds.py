"""File kinds and languages from paths, patches and GitHub's file status."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.analysis.kinds import GlobSet, kind_of, language_of, looks_binary, validate_kind_globs


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("verl/trainer/main_ppo.py", "source"),
        ("manage_envs.py", "source"),
        ("recipe/dapo/main_dapo.py", "source"),
        ("tests/utils/test_x.py", "test"),
        ("verl/utils/test_helpers.py", "test"),
        ("pkg/foo_test.py", "test"),
        ("conftest.py", "test"),
        ("server/handler_test.go", "test"),
        ("web/src/app.spec.ts", "test"),
        ("web/__tests__/app.js", "test"),
        ("tests/special_e2e/run_ppo_trainer_megatron.sh", "test"),
        ("docs/start/install.rst", "docs"),
        ("docs/conf.py", "docs"),
        ("README.md", "docs"),
        ("tests/README.md", "docs"),
        (".github/workflows/README.md", "docs"),
        ("LICENSE", "docs"),
        ("notebooks/intro.ipynb", "docs"),
        ("examples/tutorial/agent_loop_tutorial.ipynb", "example"),
        (".github/workflows/e2e_sft.yml", "ci"),
        (".github/workflows/.stash/e2e_ppo.yml", "ci"),
        (".gitlab-ci.yml", "ci"),
        (".circleci/config.yml", "ci"),
        ("ci/run_tests.sh", "ci"),
        (".buildkite/pipeline.yml", "ci"),
        (".pre-commit-config.yaml", "ci"),
        ("requirements.txt", "build"),
        ("requirements-npu.txt", "build"),
        ("requirements/dev.txt", "build"),
        ("pyproject.toml", "build"),
        ("setup.py", "build"),
        ("setup.cfg", "build"),
        ("docker/Dockerfile.stable.vllm", "build"),
        ("recipe/r1_ascend/Dockerfile.vllm_ascend.mindspeed.deepseekV3", "build"),
        ("docker/rocm/patches/non-leaf-fix.patch", "build"),
        ("Makefile", "build"),
        ("csrc/CMakeLists.txt", "build"),
        ("web/package.json", "build"),
        ("verl/version/version", "build"),
        (".gitmodules", "build"),
        ("examples/grpo_trainer/run_qwen3_8b_fsdp.sh", "example"),
        ("examples/data_preprocess/gsm8k.py", "example"),
        ("recipe/dapo/run_dapo_qwen2.5_32b.sh", "example"),
        ("examples/tutorial/slurm/ray_on_slurm.slurm", "example"),
        ("uv.lock", "generated"),
        ("bot/locale/prguide.pot", "generated"),
        ("web/package-lock.json", "generated"),
        ("web/yarn.lock", "generated"),
        ("go.sum", "generated"),
        ("proto/service_pb2.py", "generated"),
        ("static/app.min.js", "generated"),
        ("third/vendor/lib.c", "generated"),
        ("verl/trainer/config/_generated_ppo_trainer.yaml", "generated"),
        ("verl/trainer/config/ppo_trainer.yaml", "config"),
        (".gitignore", "config"),
        (".github/CODEOWNERS", "config"),
        ("settings.json", "config"),
        ("tox.ini", "config"),
    ],
)
def test_kind_of_path(path, kind):
    assert kind_of(path) == kind


def test_binary_by_extension_even_with_a_patch():
    assert kind_of("recipe/flowrl/figures/file.svg", patch="@@ -1 +0,0 @@\n-<svg/>", changes=1) == "binary"
    assert kind_of("docs/figures/a.png", status="added", patch=None) == "binary"


def test_missing_patch_without_changes_is_binary_only_for_unknown_text():
    assert kind_of("assets/blob", status="added", patch=None, changes=0) == "binary"
    # A pure rename and an empty text file come without a patch too.
    assert kind_of("pkg/__init__.py", status="renamed", patch=None, changes=0) == "source"
    assert kind_of("pkg/__init__.py", status="added", patch=None, changes=0) == "source"
    # Too large to show: GitHub omits the patch but the file is still what its path says.
    assert kind_of("uv.lock", status="added", patch=None, changes=5119) == "generated"
    assert kind_of("big/data.py", status="modified", patch=None, changes=40000) == "source"


def test_looks_binary_for_statuses():
    assert looks_binary("a.whl", status="modified", patch="x", changes=1)
    assert not looks_binary("a/b", status="renamed", patch=None, changes=0)
    assert looks_binary("a/b", status="removed", patch=None, changes=0)


def test_submodule_pointer_is_build():
    patch = "@@ -0,0 +1 @@\n+Subproject commit 21892b9276936efab5375c3f6b8415e472ef7118"
    assert kind_of("recipe", status="added", patch=patch, changes=1) == "build"


def test_extra_globs_win_over_built_in_ones():
    extra = {"example": ["recipe/**"], "generated": ["**/*_autogen.py"]}
    assert kind_of("recipe/dapo/main_dapo.py", extra=extra) == "example"
    assert kind_of("tests/x_autogen.py", extra=extra) == "generated"
    assert kind_of("verl/x.py", extra=extra) == "source"


def test_validate_kind_globs_rejects_unknown_kinds_and_non_lists():
    with pytest.raises(ValueError, match="unknown file kind 'sources'"):
        validate_kind_globs({"sources": ["x/**"]})
    with pytest.raises(ValueError, match="list of non-empty strings"):
        validate_kind_globs({"test": "tests/**"})
    validate_kind_globs({"test": ["qa/**"]})


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/tests/**", "a/tests/b/c.py", True),
        ("**/tests/**", "tests/c.py", True),
        ("**/tests/**", "a/tests", False),
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "x/docs/a.md", False),
        ("**/*_test.go", "pkg/x_test.go", True),
        ("**/Dockerfile*", "docker/Dockerfile.rocm", True),
        ("**/requirements/*.{txt,in}", "a/requirements/dev.in", True),
        ("**/requirements/*.{txt,in}", "a/requirements/sub/dev.in", False),
        ("**/test_*.py", "a/test_b.py", True),
        ("**/test_*.py", "a/b_test_c.py", False),
        ("src/**/gen_*.py", "src/a/b/gen_x.py", True),
        (".github/**", ".github/workflows/a.yml", True),
        # Full-path globs: the literal text a path must hold is checked before the regex.
        ("src/**/gen_*.py", "gen_src/x.py", False),
        ("**/a/**/b?c.py", "x/A/y/BXC.py", True),
        ("**/a/**/b?c.py", "a/bxc.py", True),
        ("x/[ab]/**/conf.y*ml", "x/b/conf.yaml", True),
        # Bracket classes whose "]" is a member, POSIX classes, non-ASCII case folding.
        ("qa/[]x]_checks/*.py", "qa/x_checks/a.py", True),
        ("qa/[!]x]_checks/*.py", "qa/y_checks/a.py", True),
        ("qa/[[:digit:]]_checks/*.py", "qa/1_checks/a.py", True),
        ("a*/**/setup*.py", "a/\u017fetup.py", True),
    ],
)
def test_globset_matches_like_wcmatch(pattern, path, matches):
    from wcmatch import glob

    flags = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.IGNORECASE
    assert GlobSet([pattern]).match(path) is matches
    assert glob.globmatch(path, pattern, flags=flags) is matches


@pytest.mark.parametrize(
    ("path", "first_line", "language"),
    [
        ("a/b.py", None, "python"),
        ("docker/Dockerfile.stable.vllm", None, "dockerfile"),
        ("Makefile", None, "make"),
        ("a.cu", None, "cuda"),
        ("x.tsx", None, "typescript"),
        ("conf.yml", None, "yaml"),
        ("uv.lock", None, "toml"),
        ("requirements-npu.txt", None, "pip-requirements"),
        ("job.slurm", None, "shell"),
        ("bin/tool", "#!/usr/bin/env python3", "python"),
        ("bin/tool", "#!/bin/bash", "shell"),
        ("bin/tool", None, None),
        ("verl/version/version", None, None),
    ],
)
def test_language_of(path, first_line, language):
    assert language_of(path, first_line) == language


_pattern_parts = st.sampled_from(["**", "*", "a", "b*", "*.py", "{a,b}", "x?", "*_test.py", ".d", "A", "[ab]", "{tests,docs}"])
_path_parts = st.sampled_from(["a", "b", "c.py", ".d", "ab", "x1", "A", "tests", "docs", "q_test.py"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_pattern_parts, min_size=1, max_size=4).map("/".join), st.lists(_path_parts, min_size=1, max_size=4).map("/".join))
def test_globset_agrees_with_wcmatch_on_random_globs(pattern, path):
    from wcmatch import glob

    flags = glob.GLOBSTAR | glob.DOTGLOB | glob.BRACE | glob.IGNORECASE
    assert GlobSet([pattern]).match(path) == glob.globmatch(path, pattern, flags=flags)


def test_repository_kind_globs_with_bracket_classes_still_match():
    assert kind_of("qa/1_checks/a.py", extra={"test": ["qa/[[:digit:]]_checks/*.py"]}) == "test"
    assert kind_of("qa/x_checks/a.py", extra={"test": ["qa/[]x]_checks/*.py"]}) == "test"
    assert kind_of("qa/z_checks/a.py", extra={"test": ["qa/[]x]_checks/*.py"]}) == "source"


# --- the classifier's file-name verdict, against each kind's globs in turn ------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from bot.engine.analysis import kinds as _kinds  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["test_", "_test", "requirements", "dockerfile", "run_", ".py", ".yaml", ".md", ".txt",
                                 "license", ".", "x", "readme", "conftest", ".lock", "_pb2", "environment", "-"]),
                min_size=1, max_size=5).map("".join))
def test_the_file_name_rank_is_the_first_kind_whose_name_globs_match(name):
    classifier = _kinds._Classifier(_kinds._BUILT_IN.rules)
    expected = next((r for r, (_k, g) in enumerate(classifier.rules) if g.match_name(name)), classifier._NONE)
    assert classifier._name_rank(name) == expected
