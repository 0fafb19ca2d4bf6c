"""What each rule condition matches, and how effects are filled in."""

from __future__ import annotations

import textwrap

from bot.engine.analysis.model import Definition, DependencyChange, DiffAnalysis, FileAnalysis
from bot.engine.rules import RuleHit, parse_rules
from bot.engine.snapshot import PullRequestSnapshot


def fa(path: str, kind: str = "source", adds: int = 1, dels: int = 0, **kw) -> FileAnalysis:
    return FileAnalysis(path=path, status=kw.pop("status", "modified"), kind=kind, additions=adds, deletions=dels, **kw)


def pr(
    *files: FileAnalysis,
    title: str = "change",
    body: str = "",
    author: str = "alice",
    bot: bool = False,
    base: str = "main",
    changed_files: int | None = None,
):
    snapshot = PullRequestSnapshot(
        repository="o/r",
        number=7,
        title=title,
        body=body,
        author=author,
        author_is_bot=bot,
        base_branch=base,
        changed_files=len(files) if changed_files is None else changed_files,
    )
    return snapshot, DiffAnalysis(tuple(files))


def hits(rules_yaml: str, snapshot, analysis) -> dict[str, RuleHit]:
    rules = parse_rules(textwrap.dedent(rules_yaml), "r.yml")
    return {h.rule_id: h for h in rules.evaluate(snapshot, analysis)}


def test_files_any_with_reason_and_matched_files():
    found = hits(
        """\
        rules:
          - id: mcore
            files: "verl/models/mcore/**"
            labels: [mcore]
        """,
        *pr(
            fa("verl/models/mcore/a.py"),
            fa("verl/models/mcore/b/c.py"),
            fa("verl/x.py"),
            fa("docs/a.md"),
            fa("README.md"),
        ),
    )
    hit = found["mcore"]
    assert hit.labels == ("mcore",)
    assert hit.reasons == ("files: 2 of 5 changed files match verl/models/mcore/**",)
    assert hit.files == ("verl/models/mcore/a.py", "verl/models/mcore/b/c.py")
    assert hit.source == "r.yml:2"


def test_files_all_and_exclude():
    rules = """\
        rules:
          - id: docs-only
            files:
              all: ["docs/**", "**/*.md"]
              exclude: [".github/**"]
            labels: [docs-only]
        """
    only_docs = hits(rules, *pr(fa("docs/a.rst"), fa("README.md"), fa(".github/workflows/x.yml")))
    assert only_docs["docs-only"].reasons == ("files: all 2 changed files match docs/**, **/*.md (1 excluded)",)
    assert "docs-only" not in hits(rules, *pr(fa("docs/a.rst"), fa("src/x.py")))
    assert "docs-only" not in hits(rules, *pr(fa(".github/workflows/x.yml")))  # nothing left to match
    assert "docs-only" not in hits(rules, *pr())


def test_globstar_matches_dot_folders_and_braces():
    found = hits(
        """\
        rules:
          - id: anything-yaml
            files: "**/*.{yml,yaml}"
            labels: [yaml]
          - id: workflows
            files: ".github/**"
            labels: [gh]
        """,
        *pr(fa(".github/workflows/ci.yml"), fa("a/.hidden/conf.yaml")),
    )
    assert found["anything-yaml"].files == (".github/workflows/ci.yml", "a/.hidden/conf.yaml")
    assert found["workflows"].files == (".github/workflows/ci.yml",)


def test_title_capture_with_a_list_gives_one_label_per_item():
    found = hits(
        """\
        labels:
          "module/{scope}": {color: "c5def5", description: "Touches {scope}"}
        rules:
          - id: scope
            title: '^\\[(?P<scope>[^\\]]+)\\]'
            labels: ["module/{scope}"]
            focus: "Scope {scope}"
        """,
        *pr(fa("a.py"), title="[Megatron, FSDP] fix: overlap"),
    )
    hit = found["scope"]
    assert hit.labels == ("module/megatron", "module/fsdp")
    assert hit.captures == {"scope": "Megatron, FSDP"}
    assert hit.reasons == ('title matched "^\\[(?P<scope>[^\\]]+)\\]" (scope=Megatron, FSDP)',)
    assert hit.focus[0].text == {"en": "Scope Megatron, FSDP", "zh": "Scope Megatron, FSDP"}


def test_title_is_case_insensitive_unless_marked():
    rules = """\
        rules:
          - id: loose
            title: "^wip"
            labels: [a]
          - id: strict
            title: "(?-i)^WIP"
            labels: [b]
        """
    assert set(hits(rules, *pr(title="wip: x"))) == {"loose"}
    assert set(hits(rules, *pr(title="WIP: x"))) == {"loose", "strict"}


def test_body_regex_is_multiline_and_reports_the_match():
    found = hits(
        """\
        rules:
          - id: footer
            body: '(?-i)^BREAKING CHANGE:'
            breaking: true
        """,
        *pr(body="Intro\n\nBREAKING CHANGE: config key renamed"),
    )
    assert found["footer"].breaking is True
    assert found["footer"].reasons == ('body matched "(?-i)^BREAKING CHANGE:" at "BREAKING CHANGE:"',)


def test_added_lines_narrowed_to_matched_files_with_focus_per_file():
    rules = """\
        rules:
          - id: torch-import
            files: "src/**"
            added: '^import torch'
            focus: "`{file}` now imports torch"
          - id: anywhere
            files: "src/**"
            added: {regex: '^import torch', in_matched_files: false}
            labels: [torch]
        """
    files = (
        fa("src/a.py", added_lines=("x = 1", "import torch")),
        fa("tests/t.py", kind="test", added_lines=("import torch",)),
        fa("src/b.py", added_lines=("y = 2",)),
    )
    found = hits(rules, *pr(*files))
    hit = found["torch-import"]
    assert [n.file for n in hit.focus] == ["src/a.py"]
    assert hit.focus[0].text["en"] == "`src/a.py` now imports torch"
    assert hit.reasons[-1] == 'added lines match "^import torch" in src/a.py: "import torch"'
    assert "anywhere" in found
    only_tests = hits(
        rules, *pr(fa("src/b.py", added_lines=("y",)), fa("tests/t.py", kind="test", added_lines=("import torch",)))
    )
    assert "torch-import" not in only_tests
    assert "anywhere" in only_tests


def test_removed_lines_and_match_never_spans_lines():
    rules = """\
        rules:
          - id: dropped-check
            removed: 'assert\\s+ok'
            labels: [x]
        """
    assert "dropped-check" in hits(rules, *pr(fa("a.py", removed_lines=("    assert  ok",))))
    # "assert" ends one line and "ok" starts the next: no match across the line break.
    assert "dropped-check" not in hits(rules, *pr(fa("a.py", removed_lines=("x = assert", "ok = 1"))))


def test_symbols_focus_one_note_per_symbol_capped():
    names = tuple(f"Trainer.step_{i}" for i in range(9))
    found = hits(
        """\
        rules:
          - id: trainer
            symbols: '^Trainer\\.'
            focus: {en: "Check `{symbol}` in `{file}`", zh: "检查 `{file}` 中的 `{symbol}`"}
        """,
        *pr(fa("t.py", symbols_touched=("helper", *names))),
    )
    notes = found["trainer"].focus
    assert len(notes) == 5  # max_focus_per_rule
    assert notes[0].symbol == "Trainer.step_0"
    assert notes[0].text == {"en": "Check `Trainer.step_0` in `t.py`", "zh": "检查 `t.py` 中的 `Trainer.step_0`"}


def test_removed_definitions_ignores_moves_and_private_names():
    rules = """\
        rules:
          - id: api-removed
            removed_definitions: '.'
            focus: "`{symbol}` was removed"
        """
    moved = pr(
        fa("a.py", definitions_removed=(Definition("moved", "function"), Definition("_private", "function"))),
        fa("b.py", definitions_added=(Definition("moved", "function"),)),
    )
    assert "api-removed" not in hits(rules, *moved)
    gone = pr(fa("a.py", definitions_removed=(Definition("Api.call", "method"),)))
    assert hits(rules, *gone)["api-removed"].focus[0].text["en"] == "`Api.call` was removed"


def test_config_keys_focus_one_note_per_key():
    found = hits(
        """\
        rules:
          - id: config
            files: "conf/**"
            config_keys: '^actor\\.'
            focus: "`{key}` in `{file}`"
        """,
        *pr(
            fa(
                "conf/a.yaml",
                kind="config",
                config_keys_added=("actor.lr", "critic.lr"),
                config_keys_removed=("actor.old",),
            )
        ),
    )
    assert [n.text["en"] for n in found["config"].focus] == [
        "`actor.lr` in `conf/a.yaml`",
        "`actor.old` in `conf/a.yaml`",
    ]


def test_removed_config_keys_and_dependencies():
    rules = """\
        rules:
          - id: key-gone
            removed_config_keys: 'timeout'
            labels: [key-gone]
          - id: torch-dep
            dependencies: '^torch$'
            labels: [torch]
        """
    files = (
        fa("c.yaml", kind="config", config_keys_removed=("net.timeout",)),
        fa("requirements.txt", kind="build", dependency_changes=(DependencyChange("torch", "changed", "2.1", "2.2"),)),
    )
    found = hits(rules, *pr(*files))
    assert found["key-gone"].reasons == ('removed config keys match "timeout": net.timeout',)
    assert found["torch-dep"].reasons == ('changed dependencies match "^torch$": torch',)


def test_authors_globs_treat_brackets_literally_and_bots():
    rules = """\
        rules:
          - id: named-bot
            authors: ["*[bot]"]
            labels: [a]
          - id: any-bot
            bots: true
            labels: [b]
          - id: people
            bots: false
            labels: [c]
          - id: alice
            authors: [ALICE, bob]
            labels: [d]
        """
    assert set(hits(rules, *pr(author="dependabot[bot]", bot=True))) == {"named-bot", "any-bot"}
    assert set(hits(rules, *pr(author="xb"))) == {"people"}  # "[bot]" is not a character class
    alice = hits(rules, *pr(author="alice"))
    assert alice["alice"].reasons == ('author alice matches "ALICE"',)
    assert alice["people"].reasons == ("author alice is not a bot",)


def test_base_branch_globs():
    rules = """\
        rules:
          - id: release
            base_branch: ["release/*", "stable"]
            importance: 2
        """
    assert hits(rules, *pr(base="release/1.2"))["release"].reasons == ('base branch release/1.2 matches "release/*"',)
    assert "release" not in hits(rules, *pr(base="main"))


def test_size_bounds_and_file_counts():
    rules = """\
        rules:
          - id: huge
            min_lines: 1000
            labels: [huge]
          - id: small
            max_lines: 9
            labels: [small]
          - id: many-files
            min_files: 3000
            labels: [many]
        """
    big = hits(
        rules, *pr(fa("a.py", adds=1200, dels=33), fa("uv.lock", kind="generated", adds=5000), changed_files=3400)
    )
    assert big["huge"].reasons == ("lines changed 1,233 >= 1,000",)
    assert big["many-files"].reasons == ("changed files 3,400 >= 3,000",)
    assert "small" not in big
    assert "small" in hits(rules, *pr(fa("a.py", adds=9)))


def test_kinds_any_all_and_narrowing():
    rules = """\
        rules:
          - id: docs-only
            kinds: {all: [docs]}
            labels: [docs-only]
          - id: generated
            kinds: [generated]
            focus: "`{file}` is generated"
          - id: test-in-src
            files: "src/**"
            kinds: [test]
            labels: [t]
        """
    found = hits(rules, *pr(fa("src/a.py"), fa("src/gen_pb2.py", kind="generated"), fa("tests/t.py", kind="test")))
    assert "docs-only" not in found
    assert [n.file for n in found["generated"].focus] == ["src/gen_pb2.py"]
    assert "test-in-src" not in found  # the test file is not under src/
    docs = hits(rules, *pr(fa("docs/a.md", kind="docs"), fa("README.md", kind="docs")))
    assert docs["docs-only"].reasons == ("kinds: all 2 changed files are docs",)


def test_scopes_condition_and_any_groups():
    rules = """\
        areas:
          megatron: {en: Megatron}
        labels:
          "area/{area}": {color: "1d76db", description: "Changes {area}"}
        rules:
          - id: area-megatron
            any:
              - files: "megatron/**"
              - scopes: [megatron, mcore]
            area: megatron
            labels: ["area/{area}"]
        """
    by_scope = hits(rules, *pr(fa("other.py"), title="[BREAKING][mcore, fsdp] feat: x"))["area-megatron"]
    assert by_scope.areas == ("megatron",)
    assert by_scope.labels == ("area/megatron",)
    assert by_scope.reasons == ("title scopes [mcore, fsdp] include mcore",)
    assert by_scope.files == ()
    by_files = hits(rules, *pr(fa("megatron/a.py"), title="fix: x"))["area-megatron"]
    assert by_files.files == ("megatron/a.py",)
    conventional = hits(rules, *pr(fa("x.py"), title="feat(megatron)!: x"))
    assert "area-megatron" in conventional
    assert "area-megatron" not in hits(rules, *pr(fa("x.py"), title="[fsdp] fix: megatron-free"))


def test_templated_area_from_scope():
    found = hits(
        """\
        rules:
          - id: any-scope
            scopes: ["*"]
            area: "{scope}"
            labels: ["area/{area}"]
            audience: "people who work on {area}"
        """,
        *pr(fa("x.py"), title="[ray, Doc] fix: y"),
    )
    hit = found["any-scope"]
    assert hit.areas == ("ray", "doc")
    assert hit.labels == ("area/ray", "area/doc")
    assert hit.audience == {"en": "people who work on ray, doc", "zh": "people who work on ray, doc"}


def test_skip_disabled_rule_and_rule_without_conditions():
    rules = """\
        rules:
          - id: skip-me
            title: '\\[skip prguide\\]'
            skip: true
          - id: turned-off
            enabled: false
            labels: [never]
          - id: always
            importance: -1
        """
    found = hits(rules, *pr(title="docs: typo [skip prguide]"))
    assert found["skip-me"].skip is True
    assert "turned-off" not in found
    assert found["always"].reasons == ("always applies (no conditions)",)
    assert found["always"].importance == -1


def test_long_generated_label_is_dropped_with_a_warning():
    rules = parse_rules("rules:\n  - id: s\n    title: '^(?P<what>\\w+)'\n    labels: ['x/{what}']\n", "r.yml")
    result = rules.run(*pr(title="a" * 60))
    assert result.hits[0].labels == ()
    assert result.warnings == (f"rule s: label 'x/{'a' * 60}' is longer than 50 characters; not added",)


def test_analysis_without_files_falls_back_to_the_snapshot_file_list():
    from bot.engine.snapshot import ChangedFile

    snapshot = PullRequestSnapshot(
        repository="o/r", number=1, title="t", files=(ChangedFile("docs/a.md", additions=3),), changed_files=1
    )
    found = {
        h.rule_id: h
        for h in parse_rules("rules:\n  - id: d\n    files: 'docs/**'\n    labels: [d]\n", "r.yml").evaluate(
            snapshot, DiffAnalysis()
        )
    }
    assert found["d"].files == ("docs/a.md",)
