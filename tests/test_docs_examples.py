"""The rule-file examples in the README and docs are valid rule files."""

import re
from pathlib import Path

import pytest

from bot.engine.repo_config import parse_repo_config
from bot.engine.rules import check_rule_paths

ROOT = Path(__file__).resolve().parents[1]


def _examples():
    for doc in ("README.md", "docs/rules.md"):
        for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", (ROOT / doc).read_text(encoding="utf-8"), re.S)):
            if "- id:" in block and "# conditions" not in block:  # the layout sketch is not a file
                yield pytest.param(block, id=f"{doc}#{i}")


@pytest.mark.parametrize("text", list(_examples()))
def test_documented_rule_files_are_valid(text, tmp_path):
    if text.startswith("lang:"):  # a .github/prguide.yml example
        config = parse_repo_config(text)
        assert config.lang == "zh" and config.rules is not None
        return
    path = tmp_path / "example.yml"
    path.write_text(text, encoding="utf-8")
    problems = [str(p) for p in check_rule_paths([path])]
    assert problems == []
