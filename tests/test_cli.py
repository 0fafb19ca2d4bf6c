"""The prguide command line on real bundles, a real git repository and rule files."""

import json
import subprocess

import pytest

from bot.cli import main


def test_guide_markdown_and_json(corpus_dir, capsys):
    assert main(["guide", str(corpus_dir / "7491.json")]) == 0
    md = capsys.readouterr().out
    assert md.startswith("<!-- prguide:v1 ") and "Reading guide for #7491" in md

    assert main(["guide", str(corpus_dir / "7491.json"), "--format", "json", "--lang", "zh"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("number", "labels", "areas", "change_type", "importance", "importance_factors", "reading_level",
                "reading_minutes", "audience", "focus", "follow_ups", "truncated", "markdown"):
        assert key in data
    assert data["number"] == 7491 and data["lang"] == "zh" and 1 <= data["importance"] <= 10
    assert all({"file", "symbol", "reason"} <= set(f) for f in data["focus"])
    assert "阅读指南" in data["markdown"]


def test_guide_all_prints_one_line_per_bundle(corpus_dir, capsys):
    assert main(["guide", "--all", str(corpus_dir)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(list(corpus_dir.glob("*.json")))
    assert all(line.startswith("#") and "/10" in line for line in lines)


def test_guide_with_extra_rules_and_without_defaults(corpus_dir, tmp_path, capsys):
    rules = tmp_path / "extra.yml"
    rules.write_text("rules:\n  - id: everything\n    files: ['**']\n    labels: ['seen-by-prguide']\n", encoding="utf-8")
    assert main(["guide", str(corpus_dir / "7491.json"), "--no-default-rules", "--rules", str(rules), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == ["seen-by-prguide"]


def test_guide_reports_bad_bundle_and_bad_rules(tmp_path, capsys, corpus_dir):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["guide", str(bad)]) == 1
    assert "bad.json" in capsys.readouterr().err
    rules = tmp_path / "r.yml"
    rules.write_text("rules:\n  - id: x\n    title: '('\n", encoding="utf-8")
    assert main(["guide", str(corpus_dir / "7491.json"), "--rules", str(rules)]) == 1
    assert "r.yml:3" in capsys.readouterr().err
    assert main(["guide"]) == 2


def test_rules_check(tmp_path, capsys):
    assert main(["rules", "check", "config/rules", "config/examples"]) == 0
    bad = tmp_path / "bad.yml"
    bad.write_text("rules:\n  - id: x\n    filez: ['a']\n", encoding="utf-8")
    assert main(["rules", "check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:3: rule x:" in out


def _git(repo, *args):
    env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "a@x",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    (r / "app.py").write_text("def run():\n    return 1\n", encoding="utf-8")
    _git(r, "add", ".")
    _git(r, "commit", "-qm", "init")
    (r / "app.py").write_text("def run():\n    return 2\n\n\ndef stop():\n    return 0\n", encoding="utf-8")
    _git(r, "commit", "-qam", "feat: add stop (#12)")
    return r


def test_history_writes_guides_and_stores_them(repo, tmp_path, capsys):
    out = tmp_path / "out"
    db = tmp_path / "g.db"
    assert main(["history", "--repo", str(repo), "--last", "5", "--out", str(out), "--db", str(db), "--format", "json"]) == 0
    data = json.loads((out / "12.json").read_text(encoding="utf-8"))
    assert data["change_type"] == "feature" and "stop" in json.dumps(data["focus"])
    assert main(["history", "--repo", str(repo), "--lang", "zh"]) == 0
    assert "#12 阅读指南" in capsys.readouterr().out
    from bot.tagview.store import GuideStore

    assert GuideStore(db).get(data["repository"], 12) is not None


def test_history_on_a_folder_that_is_not_a_repository(tmp_path, capsys):
    assert main(["history", "--repo", str(tmp_path)]) == 1
    assert "prguide history:" in capsys.readouterr().err


def test_serve_refuses_to_start_without_settings(monkeypatch, capsys):
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET"):
        monkeypatch.delenv(name, raising=False)
    assert main(["serve"]) == 2
    assert "GITHUB_WEBHOOK_SECRET" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: prguide" in capsys.readouterr().out


def test_guide_all_reports_bad_bundles_and_still_prints_the_good_ones(corpus_dir, tmp_path, capsys):
    import shutil

    shutil.copy(corpus_dir / "7491.json", tmp_path / "7491.json")
    (tmp_path / "broken.json").write_text("[]", encoding="utf-8")
    assert main(["guide", "--all", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("#7491") and "broken.json" in captured.err
    assert main(["guide", str(tmp_path / "7491.json"), "--all", str(tmp_path)]) == 2


def test_public_flag_makes_stored_guides_visible(corpus_dir, tmp_path):
    from bot.tagview.store import GuideStore

    db = tmp_path / "g.db"
    assert main(["guide", str(corpus_dir / "7491.json"), "--db", str(db)]) == 0
    assert GuideStore(db).visibility("verl-project/verl") == "private"
    assert main(["guide", str(corpus_dir / "7491.json"), "--db", str(db), "--public"]) == 0
    assert GuideStore(db).visibility("verl-project/verl") == "public"


def test_rules_check_reports_globs_that_can_never_match_and_empty_files(tmp_path, capsys):
    rules = tmp_path / "globs.yml"
    rules.write_text(
        "rules:\n"
        "  - id: a\n"
        "    files:\n"
        "      - ./docs/**\n"        # 4
        "      - ../x/**\n"          # 5
        "      - docs/[a-\n"         # 6
        "      - docs/{a,b\n"        # 7
        "      - docs/[z-a]\n"       # 8
        "      - docs/\n"            # 9
        "      - docs/[a-z]/*.md\n"  # fine
        "    labels: [a]\n",
        encoding="utf-8",
    )
    empty = tmp_path / "empty.yml"
    empty.write_text("# rules come later\n", encoding="utf-8")
    assert main(["rules", "check", str(rules), str(empty)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": rule a: ")[0] for line in out[:-1]] == [f"{rules}:{n}" for n in range(4, 10)]
    assert "never start with './'; write 'docs/**'" in out[0]
    assert "never start with '../'" in out[1]
    assert "'[' is never closed" in out[2]
    assert "'{' is never closed" in out[3]
    assert "the range 'z-a' is empty" in out[4]
    assert "no path ends in '/'" in out[5]
    assert out[-1] == f"{empty}:1: the file has no rules, labels, areas or disable list"
