"""The shipped default rules and the verl example, on made-up and real pull requests."""

from __future__ import annotations

import json

import pytest

from bot.engine.analysis import analyse
from bot.engine.analysis.model import DiffAnalysis, FileAnalysis
from bot.paths import config_dir
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot


@pytest.fixture(scope="module")
def defaults():
    return load_rules()


@pytest.fixture(scope="module")
def verl():
    return load_rules([config_dir() / "examples" / "verl.yml"])


def run(rules, *files: FileAnalysis, title: str = "change", body: str = "", author: str = "alice", bot: bool = False):
    snapshot = PullRequestSnapshot(repository="o/r", number=1, title=title, body=body, author=author, author_is_bot=bot)
    return {h.rule_id: h for h in rules.evaluate(snapshot, DiffAnalysis(tuple(files)))}


def src(path: str = "src/app.py", adds: int = 1, **kw) -> FileAnalysis:
    return FileAnalysis(path=path, status="modified", kind=kw.pop("kind", "source"), additions=adds, **kw)


def labels(found) -> set[str]:
    return {label for h in found.values() for label in h.labels}


@pytest.mark.parametrize(
    ("lines", "label"),
    [
        (0, "size/XS"),
        (9, "size/XS"),
        (10, "size/S"),
        (29, "size/S"),
        (30, "size/M"),
        (99, "size/M"),
        (100, "size/L"),
        (499, "size/L"),
        (500, "size/XL"),
        (999, "size/XL"),
        (1000, "size/XXL"),
    ],
)
def test_size_labels(defaults, lines, label):
    found = run(defaults, src(adds=lines), src("uv.lock", adds=50_000, kind="generated"))
    assert {x for x in labels(found) if x.startswith("size/")} == {label}


@pytest.mark.parametrize(
    ("title", "change_type"),
    [
        ("fix: crash on empty batch", "fix"),
        ("feat(api)!: new endpoint", "feature"),
        ("perf: faster loader", "perf"),
        ("refactor(core): split module", "refactor"),
        ("docs: typo", "docs"),
        ("test: cover edge case", "test"),
        ("ci: cache pip", "ci"),
        ("build(deps): bump torch from 2.1 to 2.2", "build"),
        ("chore: tidy", "chore"),
        ("[megatron, fsdp] fix: overlap", "fix"),
        ("[BREAKING][rollout] feat: multimodal tokens", "feature"),
        ('Revert "feat: add cache (#123)"', "revert"),
        ("revert: undo cache", "revert"),
        ("Fix the crash", None),
        ("[ckpt]: nccl broadcast bucket size fix", None),
    ],
)
def test_change_type_from_title(defaults, title, change_type):
    types = [h.change_type for h in run(defaults, src(), title=title).values() if h.change_type]
    assert types == ([change_type] if change_type else [])


@pytest.mark.parametrize(
    ("title", "body", "breaking"),
    [
        ("[BREAKING][fsdp] feat: dynamic batching", "", True),
        ("feat(config)!: rename keys", "", True),
        ("feat: x", "Details\n\nBREAKING CHANGE: `foo` is gone", True),
        ("feat: x", "If this breaks an API, add `[BREAKING]` to the beginning of the title.", False),
        ("fix: not breaking", "", False),
    ],
)
def test_breaking(defaults, title, body, breaking):
    found = run(defaults, src(), title=title, body=body)
    assert ("breaking" in found) is breaking
    if breaking:
        assert found["breaking"].breaking and "breaking" in found["breaking"].labels


def test_revert_captures_the_reverted_pull_request(defaults):
    found = run(defaults, src(), title='Revert "feat: add cache (#123)"', body="Reverts o/r#123")
    assert found["type-revert"].change_type == "revert"
    assert found["revert-of-pull-request"].captures["reverted"] == "123"
    assert found["revert-of-pull-request"].focus[0].text["en"].startswith("This reverts #123:")
    button = run(defaults, src(), title='Revert "feat: add cache"', body="Reverts octo/app#45")
    assert button["revert-of-pull-request"].captures["reverted"] == "45"


def test_revert_names_one_reverted_pull_request_not_its_own_number(defaults):
    # A squash-merge title ends in the revert's own number; the body names the reverted one.
    found = run(defaults, src(), title='Revert "feat: add cache (#123)" (#200)', body="Reverts o/r#123")
    assert found["revert-of-pull-request"].captures["reverted"] == "123"
    squashed = run(defaults, src(), title="Revert cache change (#200)", body="Reverts o/r#123")
    assert squashed["revert-of-pull-request"].captures["reverted"] == "123"
    assert "#200" not in squashed["revert-of-pull-request"].focus[0].text["en"]


def test_reverted_commit_in_body_labels_without_overriding_the_type(defaults):
    found = run(defaults, src(), title="[ckpt] fix: hccl error", body="This reverts commit 352f76f59ff0.\n\nMore.")
    assert "revert" in found["reverts-commit"].labels
    assert found["reverts-commit"].change_type is None
    assert found["type-fix"].change_type == "fix"


def test_path_labels(defaults):
    found = run(
        defaults,
        src("docs/index.rst", kind="docs"),
        src("tests/test_x.py", kind="test"),
        src(".github/workflows/ci.yml", kind="ci"),
        src("docker/Dockerfile.cuda", kind="build"),
        src("uv.lock", kind="generated"),
    )
    assert {"docs", "tests", "ci", "build", "dependencies"} <= labels(found)
    assert [n.file for n in found["generated-files"].focus] == ["uv.lock"]


def test_dependency_bump_by_a_bot(defaults):
    found = run(
        defaults,
        src("pyproject.toml", kind="build", adds=1),
        title="build(deps-dev): bump trl from 0.27.0 to 1.10.0",
        author="dependabot[bot]",
        bot=True,
    )
    hit = found["dependency-bump-by-bot"]
    assert hit.labels == ("dependencies",)
    assert hit.captures == {"package": "trl", "from_version": "0.27.0", "to_version": "1.10.0"}
    assert hit.focus[0].text["en"].startswith("Bumps trl from 0.27.0 to 1.10.0:")
    assert "dependency-bump-by-bot" not in run(defaults, src(), title="build(deps): bump trl from 1 to 2")  # not a bot


def test_pull_request_target_workflows_get_a_focus_note(defaults):
    workflow = src(".github/workflows/label.yml", kind="ci", added_lines=("on:", "  pull_request_target:"))
    found = run(defaults, workflow, src("src/x.py", added_lines=("pull_request_target = 1",)))
    assert [n.file for n in found["ci-pull-request-target"].focus] == [".github/workflows/label.yml"]


def test_authors_can_skip_the_guide(defaults):
    assert run(defaults, src(), body="Trivial. [skip prguide]")["skip-requested"].skip
    assert "skip-requested" not in run(defaults, src(), body="nothing to see")


def test_verl_scopes_and_paths_give_areas(verl):
    found = run(verl, src("verl/utils/vllm/utils.py"), title="[vllm, rollout] fix: LoRA sync index")
    areas = {a for h in found.values() for a in h.areas}
    assert {"vllm", "rollout", "lora"} <= areas
    assert {"area/vllm", "area/rollout", "area/lora"} <= labels(found)
    assert verl.label_spec("area/vllm").description == "Changes the vllm area"
    assert verl.area_audience("vllm", "zh") == "维护 vLLM 推理服务与权重同步的工程师"


def test_verl_config_keys_get_focus_notes(verl):
    config = src("verl/trainer/config/actor/actor.yaml", kind="config", config_keys_added=("actor.profiler.enable",))
    hit = run(verl, config, title="[perf] feat: x")["area-config"]
    assert (
        hit.focus[0]
        .text["en"]
        .startswith("`actor.profiler.enable` in `verl/trainer/config/actor/actor.yaml` is a user-facing option")
    )


def _corpus_results(corpus_dir, rules):
    out = {}
    for path in sorted(corpus_dir.glob("*.json")):
        bundle = json.loads(path.read_text(encoding="utf-8"))
        snapshot = PullRequestSnapshot.from_github(
            bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"]
        )
        out[snapshot.number] = rules.run(snapshot, analyse(snapshot))
    return out


@pytest.mark.corpus
def test_verl_corpus(corpus_dir, verl):
    results = _corpus_results(corpus_dir, verl)
    assert len(results) == 68
    assert all(not r.warnings for r in results.values())
    with_area = [n for n, r in results.items() if any(h.areas for h in r.hits)]
    # The three without an area touch only packaging or CODEOWNERS: 7410, 7436, 7478.
    assert len(with_area) >= 65

    def hit_ids(number):
        return {h.rule_id for h in results[number].hits}

    def areas(number):
        return {a for h in results[number].hits for a in h.areas}

    assert {"area-algo", "core-algos", "type-fix"} <= hit_ids(7300)
    assert {"breaking", "type-feature"} <= hit_ids(6804) and "multimodal" in areas(6804)
    assert {"dependency-bump-by-bot", "dependencies"} <= hit_ids(7478)
    assert {"megatron", "moe"} <= areas(7340)
    assert {"ckpt", "ascend"} <= areas(7488)
    assert "rocm" in areas(7377) and "ci" in areas(7377)
    assert areas(7406) == {"docs"}
    # Generated trainer configs alone do not pull in every backend.
    assert "veomni" not in areas(7373) and "torchtitan" not in areas(7373)
