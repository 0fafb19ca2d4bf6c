"""New definitions used in the same diff (entry-point evidence) and the content kind of a diff."""

from __future__ import annotations

import pytest

from bot.analysis import analyse
from bot.analysis.usage import called_new_symbols, content_kind
from bot.snapshot import ChangedFile, PullRequestSnapshot
from bot.sources.bundle import load_bundle
from conftest import CORPUS


def snapshot(files: dict[str, str]) -> PullRequestSnapshot:
    return PullRequestSnapshot.from_github(
        {"number": 1, "title": "t", "body": "", "merged": True, "user": {"login": "a"}, "base": {"ref": "main", "repo": {"full_name": "o/r"}}},
        [{"filename": p, "status": "modified", "additions": 1, "deletions": 0, "changes": 1, "patch": patch} for p, patch in files.items()],
        [],
        [],
        repository="o/r",
    )


def added(*lines: str) -> str:
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + line for line in lines) + "\n"


def test_called_in_another_file_registered_or_exported():
    analysis = analyse(
        snapshot(
            {
                "pkg/core.py": added(
                    "def build_engine(cfg):", "    return cfg",
                    "def unused_helper(x):", "    return x",
                    "@register_backend('fast')", "def fast_backend(x):", "    return x",
                    "def exported(x):", "    return x",
                    "def mapped(x):", "    return x",
                    "class Policy:", "    pass",
                ),
                "pkg/main.py": added("engine = build_engine(config)", "REGISTRY = {'m': mapped}", "p = core.Policy()"),
                "pkg/__init__.py": added('__all__ = ["exported"]'),
                "docs/index.md": added("unused_helper(1)"),
            }
        )
    )  # fmt: skip
    assert analysis.called_new_symbols == {"build_engine", "fast_backend", "exported", "mapped", "Policy"}
    assert called_new_symbols(analysis) == analysis.called_new_symbols


def test_a_definition_alone_is_not_called():
    analysis = analyse(snapshot({"pkg/core.py": added("def lonely(x):", "    return x")}))
    assert analysis.called_new_symbols == frozenset()


def test_same_file_call_counts():
    analysis = analyse(snapshot({"pkg/core.py": added("def step(x):", "    return x", "def run():", "    return step(1)")}))
    assert analysis.called_new_symbols == {"step"}


def test_real_pr_7373_new_config_class_is_used():
    path = CORPUS / "7373.json"
    if not path.exists():
        pytest.skip(f"verl corpus not found at {CORPUS}")
    assert "HybridRolloutSwitchConfig" in analyse(load_bundle(path)).called_new_symbols


@pytest.mark.parametrize(
    ("files", "kind"),
    [
        ({"tests/test_a.py": added("def test_x():", "    pass")}, "test"),
        ({"docs/a.md": added("text"), "README.md": added("more")}, "docs"),
        ({".github/workflows/ci.yml": added("on: push")}, "ci"),
        ({"requirements.txt": added("torch>=2.4"), "uv.lock": added('name = "x"')}, "deps"),
        ({"requirements.txt": added("# just a comment")}, ""),
        ({"tests/test_a.py": added("x = 1"), "docs/a.md": added("y")}, ""),
        ({"pkg/a.py": added("x = 1")}, ""),
    ],
)
def test_content_kind(files, kind):
    analysis = analyse(snapshot(files))
    assert content_kind(analysis) == kind == analysis.content_kind


def test_content_kind_of_nothing():
    assert content_kind(analyse(snapshot({}))) == ""
    assert ChangedFile("x") is not None
