"""The per-repository settings file, .github/prguide.yml."""

from __future__ import annotations

import pytest

from bot.engine.repo_config import RepoConfig, RepoConfigError, load_repo_config, parse_repo_config

SOURCE = ".github/prguide.yml"


def test_full_file():
    config = parse_repo_config(
        "# prguide settings\n"
        "lang: zh\n"
        "relabel: [maintainers, authors]\n"
        "disable: [size-xxl]\n"
        "rules:\n"
        "  - id: engine-area\n"
        "    files: src/engine/**\n"
        "    labels: [area/engine]\n"
    )
    assert config.lang == "zh"
    assert config.relabel == ("maintainers", "authors")
    assert config.disable == ("size-xxl",)
    assert config.rules.rule_ids == ("engine-area",)
    assert config.problems == ()


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n"])
def test_empty_file_gives_defaults(text):
    assert parse_repo_config(text) == RepoConfig.default()


def test_settings_without_rules_keep_rules_none():
    config = parse_repo_config("lang: en\nrelabel: authors\n")
    assert (config.lang, config.relabel, config.rules) == ("en", ("authors",), None)


def test_every_problem_has_file_line_and_message():
    with pytest.raises(RepoConfigError) as info:
        parse_repo_config(
            "lnag: zh\n"
            "relabel: bosses\n"
            "lang: fr\n"
            "rules:\n"
            "  - id: bad-rule\n"
            "    filez: src/**\n"
            "    labels: [x]\n"
        )
    text = str(info.value).splitlines()
    assert text[0] == f"{SOURCE}:1: unknown key 'lnag' (did you mean 'lang'?)"
    assert text[1] == f"{SOURCE}:2: relabel must be one or more of maintainers, authors, got 'bosses'"
    assert text[2] == f"{SOURCE}:3: lang must be one of en, zh, got 'fr'"
    assert text[3].startswith(f"{SOURCE}:6: rule bad-rule: unknown key 'filez'")
    assert len(text) == 4


def test_yaml_syntax_error_is_reported_once_with_its_line():
    with pytest.raises(RepoConfigError) as info:
        parse_repo_config("lang: en\nrules: [\n")
    (problem,) = info.value.problems
    assert problem.file == SOURCE and problem.line >= 2
    assert "YAML" in problem.message


def test_top_level_must_be_a_mapping():
    with pytest.raises(RepoConfigError, match="mapping"):
        parse_repo_config("- lang: zh\n")


def test_custom_source_name_is_used():
    with pytest.raises(RepoConfigError, match=r"^\.github/prguide\.yaml:1: "):
        parse_repo_config("nope: 1\n", source=".github/prguide.yaml")


def test_load_never_raises_and_keeps_every_valid_key():
    assert load_repo_config(None) == RepoConfig.default()
    broken = load_repo_config("lang: fr\nrelabel: [authors]\n")
    assert broken.lang is None and broken.relabel == ("authors",)
    assert [(p.line, p.message) for p in broken.problems] == [(1, "lang must be one of en, zh, got 'fr'")]


def test_one_typo_does_not_void_the_file():
    # An unknown key used to void the whole file: the guide came in English and narrated.
    config = load_repo_config("lang: zh\ndisabel: [size-xxl]\nnarrator: off\n")
    assert (config.lang, config.narrator) == ("zh", False)
    assert [str(p) for p in config.problems] == [f"{SOURCE}:2: unknown key 'disabel' (did you mean 'disable'?)"]


@pytest.mark.parametrize(
    "text, field, safe",
    [
        ("narrator: offf\n", "narrator", False),
        ("narrator: 0\n", "narrator", False),
        ("narrator: on\nnarrator: off\n", "narrator", False),  # which one was meant is unknown
        ("backfill: off\n", "backfill", 0),
        ("backfill: 5000\n", "backfill", 0),
        ("comment: none\n", "comment", "off"),
        ("backfill_comments: sure\n", "backfill_comments", False),
        ("relabel: [everyone]\n", "relabel", ("maintainers",)),
    ],
)
def test_an_opt_out_that_cannot_be_read_is_off(text, field, safe):
    config = load_repo_config("lang: zh\n" + text)
    assert getattr(config, field) == safe
    assert config.lang == "zh" and config.problems and all(p.file == SOURCE and p.line >= 2 for p in config.problems)


@pytest.mark.parametrize("text", ["narrator: off\nlang: [\n", "- narrator: off\n", "base: &off off\nnarrator: *off\n"])
def test_a_file_that_cannot_be_read_turns_nothing_on(text):
    config = load_repo_config(text)
    assert config.problems and config.narrator is False and config.backfill == 0
    assert config.comment == "all"  # the comment is where the problem is reported


def test_valid_rules_survive_a_bad_rule_and_a_bad_key():
    config = load_repo_config(
        "disable: [size-xxl]\n"
        "colour: blue\n"
        "rules:\n"
        "  - id: engine\n    files: src/**\n    labels: [area/engine]\n"
        "  - id: broken\n    filez: docs/**\n    labels: [docs]\n"
        "  - id: engine\n    files: lib/**\n    labels: [again]\n"
    )
    assert config.rules.rule_ids == ("engine",) and config.disable == ("size-xxl",)
    assert [p.line for p in config.problems] == [2, 8, 10]
    with pytest.raises(RepoConfigError):  # the strict parser still refuses the file
        parse_repo_config("colour: blue\nlang: zh\n")


def test_repository_rules_merge_onto_base_rules():
    from bot.engine.rules import parse_rules

    base = parse_rules("rules:\n  - id: docs\n    files: docs/**\n    labels: [docs]\n  - id: big\n    min_lines: 1000\n    labels: [big]\n", "base.yml")
    config = parse_repo_config("disable: [big]\nrules:\n  - id: engine\n    files: src/**\n    labels: [engine]\n")
    assert base.merged(config.rules).rule_ids == ("docs", "engine")


# --- comment: the least reading level that gets a comment (issue 20) -------------------------


def test_comment_defaults_to_all_and_every_level_gets_one():
    config = parse_repo_config("lang: en\n")
    assert config.comment == "all"
    assert all(config.wants_comment(level) for level in ("deep", "quick", "skim", "skip"))


@pytest.mark.parametrize(
    "value, commented",
    [
        ("all", {"deep", "quick", "skim", "skip"}),
        ("quick", {"deep", "quick"}),
        ("deep", {"deep"}),
        ("off", set()),
        ("'off'", set()),  # quoted: the string, not YAML's boolean
    ],
)
def test_comment_values_say_which_levels_get_a_comment(value, commented):
    config = parse_repo_config(f"comment: {value}\n")
    assert {level for level in ("deep", "quick", "skim", "skip") if config.wants_comment(level)} == commented


@pytest.mark.parametrize("value, shown", [("skim", "'skim'"), ("on", "on (YAML true)"), ("3", "3"), ("[all]", "['all']")])
def test_a_bad_comment_value_is_reported_with_file_and_line(value, shown):
    with pytest.raises(RepoConfigError) as info:
        parse_repo_config(f"lang: en\n\ncomment: {value}\n")
    assert str(info.value) == f"{SOURCE}:3: comment must be one of all, quick, deep, off, got {shown}"


def test_an_invalid_comment_setting_posts_no_comment():
    # The file says something about comments that cannot be read: the quiet side.
    config = load_repo_config("comment: sometimes\n")
    assert config.problems and config.comment == "off"
