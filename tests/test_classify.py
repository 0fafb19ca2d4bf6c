"""Classification: labels with provenance, change type, explainable importance, reading verdict."""

from bot.analysis.model import Definition, DependencyChange, DiffAnalysis, FileAnalysis
from bot.classify import classify, reading_level, reading_minutes
from bot.rules.model import RuleHit
from bot.snapshot import PullRequestSnapshot, Review, ReviewComment


def snap(**kw):
    base = dict(repository="o/r", number=1, title="x", changed_files=1)
    base.update(kw)
    return PullRequestSnapshot(**base)


def src(path="pkg/mod.py", additions=10, deletions=0, **kw):
    return FileAnalysis(path=path, status="modified", kind="source", language="python", additions=additions, deletions=deletions, **kw)


def test_labels_keep_rule_order_and_honour_human_decisions():
    hits = (
        RuleHit("a", "r.yml:1", labels=("type/fix", "area/x")),
        RuleHit("b", "r.yml:9", labels=("area/x", "size/S")),
    )
    c = classify(snap(), DiffAnalysis((src(),)), hits, labels_added=("keep-me",), labels_removed=("size/S",))
    assert c.label_names == ("type/fix", "area/x", "keep-me")
    assert c.labels[1].rule == "a" and c.labels[1].rule_source == "r.yml:1"
    assert c.labels[2].source == "human"
    assert c.labels_removed_by_human == ("size/S",)


def test_change_type_first_rule_wins_but_revert_always_does():
    hits = (RuleHit("t", "f:1", change_type="fix"), RuleHit("r", "f:2", change_type="revert"))
    assert classify(snap(), DiffAnalysis((src(),)), hits).change_type == "revert"
    hits = (RuleHit("t", "f:1", change_type="feature"), RuleHit("u", "f:2", change_type="fix"))
    assert classify(snap(), DiffAnalysis((src(),)), hits).change_type == "feature"


def test_change_type_inferred_from_kinds_when_no_rule_says():
    docs = FileAnalysis(path="docs/a.md", status="modified", kind="docs", additions=3)
    c = classify(snap(), DiffAnalysis((docs,)), ())
    assert (c.change_type, c.change_type_source) == ("docs", "inferred")
    added = src(definitions_added=(Definition("NewThing", "class"),))
    assert classify(snap(), DiffAnalysis((added,)), ()).change_type == "feature"


def test_importance_is_the_sum_of_its_factors_and_clamped():
    f = src(
        additions=600,
        definitions_added=(Definition("api", "function"),),
        definitions_removed=(Definition("old_api", "function"), Definition("_private", "function")),
        config_keys_added=("Cfg.knob",),
        dependency_changes=(DependencyChange("torch", "changed", "2.1", "2.2"),),
        shims=("try/except ImportError",),
    )
    tests = FileAnalysis(path="tests/test_a.py", status="added", kind="test", additions=40, tests_added=("test_a",))
    hits = (RuleHit("core", "f:1", importance=3, breaking=True, change_type="feature"),)
    c = classify(snap(), DiffAnalysis((f, tests)), hits)
    points = {x.source: x.points for x in c.factors}
    assert points == {"base": 1, "size": 4, "behaviour": 1, "core": 3, "api": 1, "removed": 1, "config": 1, "breaking": 2, "tests": 1, "dependencies": 1, "shim": 1}
    assert c.importance == 10  # 16 clamped
    removed = next(x for x in c.factors if x.source == "removed")
    assert removed.params["names"] == ("old_api",)  # private definitions are not public API


def test_small_docs_only_change_by_a_bot_is_skippable():
    docs = FileAnalysis(path="README.md", status="modified", kind="docs", additions=1, deletions=1)
    c = classify(snap(author="dependabot[bot]", author_is_bot=True), DiffAnalysis((docs,)), ())
    assert c.importance == 1  # 1 - 1 (bot) - 1 (no source), kept within 1..10
    assert c.reading_level == "skip"
    assert {x.source for x in c.factors} == {"base", "bot", "no-source"}


def test_review_discussion_counts():
    comments = tuple(ReviewComment(id=i, user="rev", body="?", path="a.py") for i in (1, 2, 3))
    c = classify(snap(review_comments=comments), DiffAnalysis((src(),)), ())
    assert any(f.source == "review" for f in c.factors)
    c = classify(snap(reviews=(Review(1, "rev", "CHANGES_REQUESTED"),)), DiffAnalysis((src(),)), ())
    assert any(f.source == "review" for f in c.factors)


def test_reading_level_thresholds():
    assert [reading_level(i) for i in (1, 2, 3, 4, 5, 6, 7, 10)] == ["skip", "skip", "skim", "skim", "quick", "quick", "deep", "deep"]
    assert reading_level(10, minutes=3) == "quick"  # important but short: read it now, quickly


def test_rule_points_are_capped_and_areas_ranked_by_size():
    big = src("big/a.py", additions=300)
    small = src("small/b.py", additions=3)
    hits = tuple(RuleHit(f"area-{i}", "f:1", areas=(f"a{i}",), importance=2, files=("small/b.py",)) for i in range(4))
    hits += (RuleHit("area-big", "f:9", areas=("big",), importance=2, files=("big/a.py",)),
             RuleHit("scope", "f:10", areas=("titled",), files=("small/b.py",)))
    c = classify(snap(title="[Titled, other] fix: x"), DiffAnalysis((big, small)), hits)
    assert sum(f.points for f in c.factors if f.key == "factor.rule") == 4
    assert c.areas[:2] == ("titled", "big")


def test_reading_minutes_formula():
    a = DiffAnalysis((src(additions=100), FileAnalysis(path="tests/t.py", status="added", kind="test", additions=60),
                      FileAnalysis(path="uv.lock", status="modified", kind="generated", additions=5000)))
    assert reading_minutes(a) == 6  # 100/20 + 60/60; lock files are not read
    assert reading_minutes(DiffAnalysis(())) == 1


def test_audience_from_hits_and_areas():
    hits = (RuleHit("a", "f:1", areas=("megatron",), audience={"en": "people who train", "zh": "训练的人"}),)
    c = classify(snap(), DiffAnalysis((src(),)), hits, audience_for_area=lambda area, lang: f"{area} maintainers" if lang == "en" else None)
    assert c.audience["en"] == ("people who train", "megatron maintainers")
    assert c.audience["zh"] == ("训练的人",)


def test_skip_effect():
    assert classify(snap(), DiffAnalysis(()), (RuleHit("s", "f:1", skip=True),)).skip


def test_reading_minutes_skip_removed_files_and_are_capped():
    gone = FileAnalysis(path="old/big.py", status="removed", kind="source", deletions=30000)
    ci = FileAnalysis(path=".github/workflows/a.yml", status="modified", kind="ci", additions=120)
    assert reading_minutes(DiffAnalysis((gone, ci))) == 2
    assert reading_minutes(DiffAnalysis((src(additions=100000),))) == 180


def test_title_scopes():
    from bot.classify import title_scopes

    assert title_scopes("[BREAKING][megatron, FSDP] feat: x") == ("breaking", "megatron", "fsdp")
    assert title_scopes("fix(ckpt,ray)!: y") == ("ckpt", "ray")
    assert title_scopes("plain title [not a scope]") == ()
