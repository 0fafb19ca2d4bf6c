"""Classification: labels with provenance, change type, explainable importance, reading verdict."""

from bot.engine.analysis.model import Definition, DependencyChange, DiffAnalysis, FileAnalysis
from bot.engine.classify import classify, reading_level, reading_minutes
from bot.engine.rules.model import RuleHit
from bot.engine.snapshot import PullRequestSnapshot, Review, ReviewComment


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
    # Docs only: the files prove the type (it was "inferred" before content decided it).
    assert (c.change_type, c.change_type_source) == ("docs", "content")
    # ...even against a title that says otherwise.
    c = classify(snap(), DiffAnalysis((docs,)), (RuleHit("t", "f:1", change_type="fix"),))
    assert c.change_type == "docs"
    added = src(definitions_added=(Definition("NewThing", "class"),))
    assert classify(snap(), DiffAnalysis((added,)), ()).change_type == "feature"


def test_importance_is_base_plus_capped_reach_and_risk():
    f = src(
        additions=600,
        definitions_added=(Definition("api", "function"),),
        definitions_removed=(Definition("old_api", "function"), Definition("_private", "function")),
        config_keys_added=("Cfg.knob",),
        dependency_changes=(DependencyChange("torch", "changed", "2.1", "2.2"),),
        shims=("import fallback: import x",),
        added_lines=("loss = loss.float() / grad_norm", "t = threading.Thread(target=run)"),
    )
    tests = FileAnalysis(path="tests/test_a.py", status="added", kind="test", additions=40, tests_added=("test_a",))
    hits = (RuleHit("core", "f:1", importance=3, breaking=True, change_type="fix"),)
    c = classify(snap(), DiffAnalysis((f, tests)), hits, is_config=lambda path, cls: cls == "Cfg")
    points = {x.source: x.points for x in c.factors}
    assert points == {
        "base": 1, "size": 2, "core": 2, "api": 1, "config": 1, "dependencies": 1, "cap.reach": -4,
        "behaviour": 2, "breaking": 2, "numerics": 1, "concurrency": 1, "cap.risk": -2, "tests": 1,
    }
    # The rule's 3 points are cut to 2; reach (7) to 3 and risk (6) to 4: a pile of
    # matched factors does not reach 10 on its own.
    assert c.importance == 1 + 3 + 4 + 1 == sum(points.values())
    api = next(x for x in c.factors if x.source == "api")
    assert api.params["names"] == ("old_api", "api")  # private definitions are not public API
    assert {x.part for x in c.factors if x.source in ("size", "core", "api")} == {"reach"}
    assert c.breaking_reasons[0].key == "breaking.marked"


def test_config_fields_count_only_in_classes_marked_as_config():
    f = src(config_keys_added=("Logger.level",))
    assert not any(x.source == "config" for x in classify(snap(), DiffAnalysis((f,)), ()).factors)
    c = classify(snap(), DiffAnalysis((f,)), (), is_config=lambda path, cls: cls == "Logger")
    assert any(x.source == "config" for x in c.factors)


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
    # 2 is a skim now (a CI or test fix is worth a glance); only 1 is safe to skip.
    assert [reading_level(i) for i in (1, 2, 3, 4, 5, 6, 7, 10)] == ["skip", "skim", "skim", "skim", "quick", "quick", "deep", "deep"]
    assert reading_level(10, minutes=3) == "quick"  # important but short: read it now, quickly
    assert reading_level(8, minutes=19) == "quick"  # a deep read needs 20 minutes of reading
    assert reading_level(4, behaviour=True) == "quick"  # a small fix that changes behaviour


def test_rule_points_are_capped_and_areas_ranked_by_size():
    big = src("big/a.py", additions=300)
    small = src("small/b.py", additions=3)
    hits = tuple(RuleHit(f"area-{i}", "f:1", areas=(f"a{i}",), importance=2, files=("small/b.py",)) for i in range(4))
    hits += (RuleHit("area-big", "f:9", areas=("big",), importance=2, files=("big/a.py",)),
             RuleHit("scope", "f:10", areas=("titled",), files=("small/b.py",)))
    c = classify(snap(title="[Titled, other] fix: x"), DiffAnalysis((big, small)), hits)
    assert sum(f.points for f in c.factors if f.key == "factor.rule") == 2
    assert c.areas[:2] == ("titled", "big")
    # Five areas at most; the sixth is counted, and its label left off.
    assert len(c.areas) == 5 and c.areas_more == 1


def test_reading_minutes_formula():
    a = DiffAnalysis((src(additions=100), FileAnalysis(path="tests/t.py", status="added", kind="test", additions=60),
                      FileAnalysis(path="uv.lock", status="modified", kind="generated", additions=5000)))
    assert reading_minutes(a) == 13  # 1 + sqrt(100 * 1.5 + 60 * 0.1) = 13.5; lock files are not read
    assert reading_minutes(DiffAnalysis(())) == 1
    assert reading_minutes(DiffAnalysis((src(additions=10),))) == 5  # a ten-line fix: about five minutes


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
    assert reading_minutes(DiffAnalysis((gone, ci))) == 4  # 1 + sqrt(120 * 0.1); the removed file is not read
    assert reading_minutes(DiffAnalysis((src(additions=100000),))) == 180


def test_title_scopes():
    from bot.engine.classify import title_scopes

    assert title_scopes("[BREAKING][megatron, FSDP] feat: x") == ("breaking", "megatron", "fsdp")
    assert title_scopes("fix(ckpt,ray)!: y") == ("ckpt", "ray")
    assert title_scopes("plain title [not a scope]") == ()


def test_risk_lines_rest_on_exact_code_tokens_not_substrings():
    # Class 2 of issue 20: "grad" in "degrades", "weight" in save_weights, a dtype= keyword,
    # sequential awaits and words in comments or strings are no risk evidence.
    noisy = src(
        added_lines=("# this degrades the loss", "save_weights(path)", "x = torch.zeros(3, dtype=torch.int64)",
                     "a = await f()", "b = await g()", 'log("calls eval( on .float()")'),
        removed_lines=("save_weights(old_path)",),
    )
    c = classify(snap(), DiffAnalysis((noisy,)), (RuleHit("t", "f:1", change_type="fix"),))
    assert not {"numerics", "concurrency", "untrusted"} & {f.source for f in c.factors}
    # A cast that moved (same count on both sides) is no change either.
    moved = src(added_lines=("    y = x.float()",), removed_lines=("y = x.float()",))
    c = classify(snap(), DiffAnalysis((moved,)), (RuleHit("t", "f:1", change_type="fix"),))
    assert "numerics" not in {f.source for f in c.factors}
    # A dropped cast and a removed eval( are stated as what they are, with the line.
    real = src(removed_lines=("w = w.to(torch.float32)", "value = eval(text)"), added_lines=("w = w", "value = ast.literal_eval(text)"))
    c = classify(snap(), DiffAnalysis((real,)), (RuleHit("t", "f:1", change_type="fix"),))
    by = {f.source: f for f in c.factors}
    assert by["numerics"].key == "factor.numerics_removed" and by["numerics"].params["code"] == ".to(torch.float32)"
    assert by["untrusted"].key == "factor.untrusted_removed" and by["untrusted"].params["code"] == "eval"
    assert by["untrusted"].evidence and by["untrusted"].evidence[0].old == "eval("


# --- a helper's call found without a regex per name -------------------------------------------------

import re  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from bot.engine.breaking import _calls  # noqa: E402


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["get_uuid", "x", "_", ".", "(", " ", "é", "٣", "-", "a1", "\n"]), max_size=12).map("".join),
       st.sampled_from(["get_uuid", "x", "é"]))
def test_a_helper_call_is_found_as_the_regex_finds_it(line, short):
    regex = re.compile(rf"(?<![\w.]){re.escape(short)}[(.]")
    assert _calls(line, short) == (regex.search(line) is not None)


def test_config_keys_one_option_in_two_config_files_counts_once():
    from bot.engine.classify import _config_keys

    a = FileAnalysis(path="cfg/a.yaml", status="modified", kind="config", language="yaml", config_keys_added=("veomni.rms_norm", "seed", "lr"))
    b = FileAnalysis(path="cfg/b.yaml", status="modified", kind="config", language="yaml",
                     config_keys_added=("rms_norm", "trainer.seed", "other.lr_min", "lr"), config_keys_removed=("model.veomni.rms_norm",))
    # ``rms_norm`` ends ``veomni.rms_norm``, ``trainer.seed`` ends with ``seed``, ``model.veomni.rms_norm``
    # with ``veomni.rms_norm``, ``lr`` equals ``lr``: all of another file; ``other.lr_min`` is its own option.
    assert _config_keys(DiffAnalysis((a, b)), None) == ["veomni.rms_norm", "seed", "lr", "other.lr_min"]
    # Within one file nothing is folded.
    c = FileAnalysis(path="cfg/c.yaml", status="modified", kind="config", language="yaml", config_keys_added=("x.seed", "seed"))
    assert _config_keys(DiffAnalysis((c,)), None) == ["x.seed", "seed"]
