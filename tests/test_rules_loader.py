"""Rule files: loading, merging and every kind of problem, reported as FILE:LINE: rule ID: message."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.paths import config_dir
from bot.engine.rules import RuleError, RuleSet, check_rule_paths, load_rules, load_settings, parse_rules


def problems_of(text: str, source: str = "rules.yml") -> list[str]:
    with pytest.raises(RuleError) as info:
        parse_rules(textwrap.dedent(text), source)
    return [str(p) for p in info.value.problems]


def test_a_valid_file_loads_in_order():
    rules = parse_rules(
        textwrap.dedent(
            """\
            rules:
              - id: docs
                files: "docs/**"
                labels: [docs]
              - id: big
                min_lines: 500
                importance: 2
            """
        ),
        "rules.yml",
    )
    assert rules.rule_ids == ("docs", "big")
    assert rules.rule("docs").source == "rules.yml:2"
    assert rules.rule("big").source == "rules.yml:5"


def test_unknown_key_suggests_the_closest_known_key():
    assert problems_of(
        """\
        rules:
          - id: docs
            titel: "^docs"
            labels: [docs]
        """
    ) == ["rules.yml:3: rule docs: unknown key 'titel' (did you mean 'title'?)"]


def test_unknown_top_level_key_and_files_key():
    assert problems_of(
        """\
        rulez: []
        rules:
          - id: docs
            files: {any: "docs/**", exlude: "docs/old/**"}
            labels: [docs]
        """
    ) == [
        "rules.yml:1: unknown key 'rulez' (did you mean 'rules'?)",
        "rules.yml:4: rule docs: files: unknown key 'exlude' (did you mean 'exclude'?)",
    ]


def test_bad_regex_names_the_line_of_the_list_item():
    assert problems_of(
        """\
        rules:
          - id: scope
            title:
              - "^ok"
              - "^[unclosed"
            labels: [x]
        """
    ) == [
        "rules.yml:5: rule scope: title: invalid regex '^[unclosed': unterminated character set at position 10",
    ]


def test_nested_quantifier_is_rejected_at_load_time():
    assert problems_of(
        """\
        rules:
          - id: slow
            added: '(a+)+$'
            labels: [x]
        """
    ) == [
        "rules.yml:3: rule slow: added: regex '(a+)+$' repeats a group of repeated items ((a+)+), which can take"
        " exponential time; put a literal character in the group, or make it atomic with (?>...) or possessive with ++",
    ]


def test_bad_globs():
    assert problems_of(
        """\
        rules:
          - id: g
            files: ["/docs/**", "!tests/**", "", 3]
            labels: [x]
        """
    ) == [
        "rules.yml:3: rule g: files: expected text, got a number",
        "rules.yml:3: rule g: files: glob '/docs/**' starts with '/'; globs are relative to the repository root, write 'docs/**'",
        "rules.yml:3: rule g: files: glob '!tests/**' starts with '!'; list files to leave out under 'exclude:' instead",
        "rules.yml:3: rule g: files: empty glob",
    ]


def test_wrong_types_unknown_kinds_and_types():
    assert problems_of(
        """\
        rules:
          - id: t
            min_lines: -1
            max_files: "many"
            bots: "yes"
            kinds: [tests]
            type: feat
            importance: 11
            breaking: 1
            labels: 7
        """
    ) == [
        "rules.yml:3: rule t: min_lines: expected a whole number >= 0, got -1",
        "rules.yml:4: rule t: max_files: expected a whole number >= 0, got 'many'",
        "rules.yml:5: rule t: bots: expected true or false, got text",
        "rules.yml:6: rule t: kinds: unknown kind 'tests' (did you mean 'test'?); kinds are source, test, docs, config, ci, build, example, generated, binary",
        "rules.yml:7: rule t: type: unknown change type 'feat' (did you mean 'feature'?); types are revert, fix, feature, perf, refactor, test, docs, ci, build, deps, chore",
        "rules.yml:8: rule t: importance: expected a whole number from -10 to 10, got 11",
        "rules.yml:9: rule t: breaking: expected true or false, got a number",
        "rules.yml:10: rule t: labels: expected text or a list of text, got a number",
    ]


def test_missing_id_uses_the_rule_position():
    assert problems_of(
        """\
        rules:
          - id: first
            skip: true
          - labels: [x]
        """
    ) == ["rules.yml:4: rule #2: missing 'id'"]


def test_yaml_booleans_as_ids_are_explained():
    assert problems_of("rules:\n  - id: off\n    skip: true\n") == [
        "rules.yml:2: rule #1: 'id' must be text, but YAML reads yes/no/on/off/true/false as true or false; put the id in quotes"
    ]


def test_rule_without_effect_and_impossible_bounds():
    assert problems_of(
        """\
        rules:
          - id: nothing
            min_lines: 10
            max_lines: 5
        """
    ) == [
        "rules.yml:2: rule nothing: rule has no effect; give it labels, area, type, importance, breaking, audience, focus or skip",
        "rules.yml:4: rule nothing: max_lines 5 is below min_lines 10; no pull request can match",
    ]


def test_unknown_placeholder_in_a_label_and_in_focus():
    assert problems_of(
        """\
        rules:
          - id: scope
            title: '^\\[(?P<scope>[^\\]]+)\\]'
            labels: ["module/{scop}"]
            focus: {en: "see {fil}", zh: "{file}"}
        """
    ) == [
        "rules.yml:4: rule scope: labels: unknown placeholder {scop} (did you mean 'scope'?); this rule provides area, author, scope",
        "rules.yml:5: rule scope: focus.en: unknown placeholder {fil} (did you mean 'file'?); this rule provides area, author, file, key, scope, symbol",
    ]


def test_effects_inside_any_are_reported():
    assert problems_of(
        """\
        rules:
          - id: a
            any:
              - files: "docs/**"
                labels: [docs]
            labels: [docs]
        """
    ) == ["rules.yml:5: rule a: any[1]: 'labels' is an effect; effects belong to the rule, not inside 'any'"]


def test_yaml_syntax_error_gives_file_and_line():
    assert problems_of("rules:\n  - id: a\n    labels: [x\n  - id: b\n") == [
        "rules.yml:4: YAML syntax error: while parsing a flow sequence, expected ',' or ']', but got ':'"
    ]


def test_duplicate_keys_in_one_mapping():
    assert problems_of(
        """\
        rules:
          - id: a
            labels: [x]
            labels: [y]
        """
    ) == ["rules.yml:4: duplicate key 'labels' (first on line 3)"]


def test_all_problems_of_a_file_are_reported_in_line_order():
    found = problems_of(
        """\
        rules:
          - id: one
            titel: x
            labels: [a]
          - id: two
            type: nope
        """
    )
    assert [p.split(":")[1] for p in found] == ["3", "6"]


def test_duplicate_id_names_both_places(tmp_path: Path):
    (tmp_path / "a.yml").write_text("rules:\n  - id: same\n    labels: [a]\n", encoding="utf-8")
    (tmp_path / "b.yml").write_text(
        "rules:\n  - id: other\n    labels: [b]\n  - id: same\n    labels: [c]\n", encoding="utf-8"
    )
    with pytest.raises(RuleError) as info:
        load_rules([tmp_path], defaults=False)
    # Named relative to the folder they were found in: no server path reaches a comment or a page.
    assert [str(p) for p in info.value.problems] == ["b.yml:4: rule same: duplicate rule id (also defined at a.yml:2)"]


def test_duplicate_id_within_one_file():
    assert problems_of("rules:\n  - id: x\n    skip: true\n  - id: x\n    skip: true\n") == [
        "rules.yml:4: rule x: duplicate rule id (also defined at rules.yml:2)"
    ]


def test_unknown_area_and_unknown_disabled_id(tmp_path: Path):
    file = tmp_path / "r.yml"
    file.write_text(
        "areas:\n  core: {en: Core}\ndisable: [no-such-rule]\nrules:\n  - id: a\n    area: coer\n", encoding="utf-8"
    )
    with pytest.raises(RuleError) as info:
        load_rules([file], defaults=False)
    assert [str(p) for p in info.value.problems] == [
        "r.yml:3: disable: there is no rule 'no-such-rule' in the files loaded before this one",
        "r.yml:6: rule a: area: unknown area 'coer'; declared areas: core",
    ]


def test_label_and_area_declarations_are_validated():
    assert problems_of(
        """\
        labels:
          docs: {color: blue, description: Docs}
          "area/{area}": {color: "123456", description: "Changes {area} and {what}"}
        areas:
          core: {en: Core, audience: {en: core people, fr: gens}}
        """
    ) == [
        "rules.yml:2: labels: docs: color must be 6 hex digits such as 'd73a4a', got 'blue'",
        "rules.yml:3: labels: area/{area}: description uses {what}, which the label name does not have",
        "rules.yml:5: areas: core.audience: unknown key 'fr'",
    ]


def test_missing_path_is_a_problem(tmp_path: Path):
    missing = tmp_path / "nope.yml"
    assert [str(p) for p in check_rule_paths([missing])] == [f"{missing}:1: no such rule file or folder"]


def test_shipped_rules_and_examples_are_clean():
    assert check_rule_paths([]) == []
    assert check_rule_paths([config_dir() / "rules"]) == []  # given twice, read once
    assert check_rule_paths([config_dir() / "examples"]) == []


def test_defaults_load_with_settings():
    rules = load_rules()
    assert {"type-fix", "size-xs", "docs", "breaking"} <= set(rules.rule_ids)
    assert rules.settings == load_settings()
    assert load_settings().language in ("en", "zh")


def test_settings_problems_are_reported(tmp_path: Path):
    file = tmp_path / "settings.yml"
    file.write_text("language: fr\ncolour: x\n", encoding="utf-8")
    with pytest.raises(RuleError) as info:
        load_settings(file)
    assert [str(p) for p in info.value.problems] == [
        f"{file}:1: language: invalid value 'fr'",
        f"{file}:2: unknown key 'colour'; settings are language, label_color, max_focus_per_rule, regex_timeout_ms",
    ]


def test_repository_config_can_disable_and_replace_a_default_rule():
    defaults = load_rules()
    repo = parse_rules(
        "disable: [size-xs, gone-rule]\nrules:\n  - id: size-xs\n    max_lines: 3\n    labels: [tiny]\n",
        ".github/prguide.yml",
        extra_keys=("language",),
    )
    merged = defaults.merged(repo)
    assert merged.rule("size-xs").source == ".github/prguide.yml:3"
    assert merged.rule_ids.count("size-xs") == 1
    assert [str(w) for w in merged.warnings] == [
        ".github/prguide.yml:1: disable: there is no rule 'gone-rule' to disable"
    ]


def test_merging_a_duplicate_id_without_disabling_is_an_error():
    defaults = load_rules()
    repo = parse_rules("rules:\n  - id: docs\n    labels: [d]\n", ".github/prguide.yml")
    with pytest.raises(RuleError) as info:
        defaults.merged(repo)
    (problem,) = info.value.problems
    assert str(problem).startswith(".github/prguide.yml:2: rule docs: duplicate rule id (also defined at ")
    assert "files.yml:" in str(problem)


def test_extra_keys_are_left_to_the_caller():
    rules = parse_rules("language: zh\nrules: []\n", "cfg.yml", extra_keys=("language",))
    assert rules.rule_ids == ()
    assert problems_of("language: zh\n", "cfg.yml") == ["cfg.yml:1: unknown key 'language'"]


def test_without_and_disabled_rules():
    rules = parse_rules(
        "rules:\n  - id: a\n    skip: true\n  - id: b\n    enabled: false\n    skip: true\n  - id: c\n    skip: true\n",
        "r.yml",
    )
    assert rules.rule_ids == ("a", "c")
    assert rules.without(["a"]).rule_ids == ("c",)
    assert rules.rule("b") is not None


def test_label_specs_exact_pattern_and_fallback():
    rules = parse_rules(
        textwrap.dedent(
            """\
            labels:
              docs: {color: "0075CA", description: Documentation}
              "area/{area}": {color: "#1d76db", description: "Changes the {area} area"}
              "size/*": {color: "eeeeee", description: Size}
            """
        ),
        "l.yml",
    )
    assert dict(rules.label_specs) == {"docs": rules.label_spec("docs")}
    assert rules.label_spec("Docs").color == "0075ca"
    spec = rules.label_spec("area/megatron")
    assert (spec.color, spec.description) == ("1d76db", "Changes the megatron area")
    assert rules.label_spec("size/XL").description == "Size"
    assert rules.label_spec("unknown").color == "ededed"


def test_later_label_declaration_wins_when_merged():
    base = parse_rules("labels:\n  docs: {color: '000000'}\n", "a.yml")
    over = parse_rules("labels:\n  docs: {color: 'ffffff'}\n", "b.yml")
    assert base.merged(over).label_spec("docs").color == "ffffff"


def test_areas_display_and_audience():
    rules = parse_rules(
        "areas:\n  mcore:\n    en: Megatron backend\n    zh: Megatron 后端\n    audience:\n"
        "      en: engineers maintaining the Megatron backend\n",
        "a.yml",
    )
    assert rules.area_name("mcore", "zh") == "Megatron 后端"
    assert rules.area_audience("mcore", "zh") == "engineers maintaining the Megatron backend"  # falls back to English
    assert rules.area_name("other", "en") == "other"
    assert rules.area_audience("other", "en") is None


def test_empty_file_and_non_mapping():
    assert parse_rules("", "e.yml").rule_ids == ()
    assert problems_of("- id: a\n", "e.yml") == [
        "e.yml:1: a rule file must be a mapping with a 'rules:' list, got a list"
    ]
    assert problems_of("rules: {id: a}\n", "e.yml") == ["e.yml:1: 'rules' must be a list of rules, got a mapping"]


def test_ruleset_is_usable_empty():
    assert RuleSet().rule_ids == ()


def test_python_tags_are_refused_with_their_line(tmp_path):
    from bot.engine.rules import check_rule_paths

    path = tmp_path / "evil.yml"
    path.write_text('rules:\n  - id: x\n    labels: !!python/object/apply:os.system ["echo hi"]\n', encoding="utf-8")
    problems = [str(p) for p in check_rule_paths([path])]
    assert any(p.startswith(f"{path}:3:") and "unsupported YAML tag" in p for p in problems)
