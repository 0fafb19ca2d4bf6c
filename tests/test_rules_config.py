"""The rule files' ``config:`` section: which files and classes are user configuration."""

from __future__ import annotations

import pytest

from bot.paths import config_dir
from bot.engine.rules import RuleError, load_rules


def rules_from(tmp_path, text: str, name: str = "r.yml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_rules([path], defaults=False)


def test_paths_and_classes(tmp_path):
    rs = rules_from(tmp_path, 'config:\n  paths: ["verl/trainer/config/**", "verl/workers/config/**"]\n  classes: ["*Config"]\n')
    assert rs.is_config("verl/workers/config/actor.py")
    assert rs.is_config("/verl/trainer/config/ppo_trainer.yaml")
    assert rs.is_config("verl/utils/x.py", "FSDPConfig") and rs.is_config("verl/utils/x.py", "FSDPConfig.offload")
    assert not rs.is_config("verl/utils/x.py", "Trainer") and not rs.is_config("verl/utils/x.py")


def test_without_a_section_nothing_is_configuration(tmp_path):
    rs = rules_from(tmp_path, "rules: []\n")
    assert not rs.is_config("verl/workers/config/actor.py", "FSDPConfig")


def test_sections_add_up_when_merged(tmp_path):
    a = rules_from(tmp_path, 'config:\n  paths: "a/**"\n', "a.yml")
    b = rules_from(tmp_path, 'config:\n  classes: "*Settings"\n', "b.yml")
    merged = a.merged(b)
    assert merged.is_config("a/x.py") and merged.is_config("b/y.py", "AppSettings")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("config: [a]\n", "r.yml:1: 'config' must be a mapping"),
        ("config:\n  paths: 3\n", "r.yml:2: config: paths: expected text or a list of text"),
        ("config:\n  paths: ['/abs/**']\n", "r.yml:2: config: paths: glob '/abs/**' starts with '/'"),
        ("config:\n  classes:\n    - ok\n    - 'no spaces'\n", "r.yml:4: config: classes: 'no spaces' is not a class-name glob"),
        ("config:\n  clases: ['*Config']\n", "r.yml:2: config: unknown key 'clases' (did you mean 'classes'?)"),
    ],
)
def test_bad_sections_are_reported_with_file_and_line(tmp_path, text, message):
    with pytest.raises(RuleError) as err:
        rules_from(tmp_path, text)
    assert message in str(err.value)


def test_the_verl_example_marks_its_config_tree():
    rs = load_rules([config_dir() / "examples" / "verl.yml"])
    assert rs.is_config("verl/trainer/config/actor/actor.yaml") and rs.is_config("verl/models/x.py", "HybridRolloutSwitchConfig")
