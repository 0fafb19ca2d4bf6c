"""The prguide command line on real bundles, a real git repository and rule files."""

import json
import re
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


@pytest.mark.parametrize("how", ["flag", "variable"])
@pytest.mark.parametrize("role", ["web", "worker"])
def test_serve_refuses_a_split_role_on_sqlite_in_one_line(role, how, monkeypatch, capsys, tmp_path):
    # A web replica on the SQLite file answered 202 to every delivery and never ran a job.
    import bot.app.server
    from bot.demo import generate_private_key

    monkeypatch.setenv("GITHUB_APP_ID", "1")
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", generate_private_key())
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s" * 20)
    monkeypatch.setenv("PRGUIDE_DB", str(tmp_path / "jobs.db"))
    monkeypatch.delenv("PRGUIDE_DATABASE_URL", raising=False)
    monkeypatch.setattr(bot.app.server, "run", lambda settings: pytest.fail("the server started"))
    if how == "variable":
        monkeypatch.setenv("PRGUIDE_ROLE", role)
    assert main(["serve", *(["--role", role] if how == "flag" else [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("prguide serve: cannot start: ")
    assert f"{role} needs PRGUIDE_DATABASE_URL" in err and "use role all" in err
    monkeypatch.setenv("PRGUIDE_ROLE", role)
    started = []
    monkeypatch.setattr(bot.app.server, "run", started.append)
    assert main(["serve", "--role", "all"]) == 0 and started[0].role == "all"  # the flag wins over the variable


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
    # Loading it stays harmless (a server is not refused over it); only the check says so.
    from bot.engine.rules import load_rules

    assert load_rules([empty], defaults=False).rules == ()


# --- bad paths: one line on stderr, a non-zero exit, never a traceback -------------------------------------


def _bad_paths(tmp_path):
    """Paths that are each wrong in their own way, by kind."""
    import os

    text = tmp_path / "notes.txt"
    text.write_text("hello, not what you think\n", encoding="utf-8")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    unreadable = tmp_path / "locked.json"
    unreadable.write_text("{}", encoding="utf-8")
    unreadable.chmod(0)
    paths = {"missing": tmp_path / "missing" / "nothing.yml", "folder": folder, "text": text}
    if os.geteuid() != 0:  # root reads files whatever their mode
        paths["unreadable"] = unreadable
    return paths


def _run_cli(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    return code, capsys.readouterr().err


def test_every_command_answers_bad_paths_with_one_line(repo, tmp_path, capsys, monkeypatch):
    bad = _bad_paths(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    db = tmp_path / "good.db"
    from bot.tagview.store import GuideStore

    with GuideStore(db):
        pass
    key = tmp_path / "key.pem"
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key.write_bytes(pem)

    commands = {
        "guide BUNDLE": lambda p: ["guide", p],
        "guide --all": lambda p: ["guide", "--all", p],
        "guide --rules": lambda p: ["guide", "--all", empty, "--rules", p],
        "guide --db": lambda p: ["guide", "--all", empty, "--db", p],
        "history --repo": lambda p: ["history", "--repo", p],
        "history --rules": lambda p: ["history", "--repo", repo, "--rules", p],
        "history --db": lambda p: ["history", "--repo", repo, "--repository", "acme/app", "--db", p],
        "rules check": lambda p: ["rules", "check", p],
        "view --db": lambda p: ["view", "--db", p],
        "view --export": lambda p: ["view", "--db", db, "--export", p],
        "sandbox --app-key": lambda p: ["sandbox", "--app-id", "1", "--app-key", p],
        "sandbox --bundles": lambda p: ["sandbox", "--app-id", "1", "--app-key", key, "--bundles", p],
        "sandbox --repo": lambda p: ["sandbox", "--app-id", "1", "--app-key", key, "--repo", p],
        "demo --bundle": lambda p: ["demo", "--bundle", p],
        "demo --repo": lambda p: ["demo", "--repo", p],
    }
    # Where a missing path is fine (it is created) or a folder is what is asked for.
    allowed = {
        ("guide --db", "missing"), ("history --db", "missing"), ("view --export", "missing"),
        ("view --export", "folder"), ("guide --rules", "folder"), ("history --rules", "folder"),
        ("rules check", "folder"), ("sandbox --bundles", "folder"),
    }  # fmt: skip
    for (kind, path) in bad.items():
        for name, argv in commands.items():
            if (name, kind) in allowed:
                continue
            if name.startswith("guide --all") and kind == "folder":
                continue
            code, err = _run_cli(argv(path), capsys)
            where = f"{name} with a {kind} path: {err!r}"
            assert code not in (0, None), where
            # "prguide COMMAND: ..." or, for a rule file, the compiler-style "FILE:LINE: ...".
            assert err.count("\n") == 1 and (err.startswith("prguide") or re.match(r"\S+:\d+: ", err)), where
            assert "Traceback" not in err, where

    # serve reads its paths from the environment; run it as a process, as a user would.
    import os
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRGUIDE_"))}
    env.update(GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY_PATH=str(key), GITHUB_WEBHOOK_SECRET="s" * 20, PORT="0")
    cases = [("PRGUIDE_DB", bad["text"]), ("PRGUIDE_DB", bad["folder"]), ("PRGUIDE_RULES", bad["text"]),
             ("PRGUIDE_RULES", bad["missing"]), ("GITHUB_PRIVATE_KEY_PATH", bad["folder"]),
             ("GITHUB_PRIVATE_KEY_PATH", bad["text"])]  # fmt: skip
    for variable, path in cases:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())", "serve"], env={**env, variable: str(path)}, cwd=tmp_path,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        where = f"serve with {variable}={path}: {done.stderr!r}"
        assert done.returncode != 0, where
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("prguide serve: "), where


# --- history: naming, options checked before the work, progress ----------------------------------------------


def test_history_without_an_origin_remote_warns_and_points_at_repository(repo, tmp_path, capsys):
    db = tmp_path / "g.db"
    assert main(["history", "--repo", str(repo), "--db", str(db), "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert (
        f"prguide history: warning: {repo}: it has no 'origin' remote, so the guides are stored as local/repo "
        "and link nowhere; pass --repository OWNER/NAME to name the GitHub repository"
    ) in err
    assert main(["history", "--repo", str(repo), "--repository", "acme/app", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    assert json.loads(captured.out)[0]["url"] == "https://github.com/acme/app/pull/12"

    _git(repo, "remote", "add", "origin", "https://gitlab.example.com/acme/app.git")
    assert main(["history", "--repo", str(repo), "--format", "json"]) == 0
    assert "its origin remote (https://gitlab.example.com/acme/app.git) is not on github.com" in capsys.readouterr().err


def test_history_last_must_be_at_least_one(repo, capsys):
    for value in ("0", "-3", "many"):
        code, err = _run_cli(["history", "--repo", repo, "--last", value], capsys)
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("prguide history: argument --last: ")
    assert "N must be 1 or more, got 0" in _run_cli(["history", "--last", "0"], capsys)[1]


def test_history_repo_that_is_a_file_says_so(repo, capsys):
    assert main(["history", "--repo", str(repo / "app.py")]) == 1
    assert capsys.readouterr().err == (
        f"prguide history: {repo / 'app.py'}: is a file, not a git repository "
        "(give the top folder of a working tree or a bare repository)\n"
    )


def test_history_checks_out_and_db_before_building_any_guide(repo, tmp_path, capsys, monkeypatch):
    import bot.engine.build

    def no_work(*args, **kwargs):
        raise AssertionError("a guide was built before the outputs were checked")

    monkeypatch.setattr(bot.engine.build, "build_guide", no_work)
    taken = tmp_path / "taken"
    taken.write_text("", encoding="utf-8")
    assert main(["history", "--repo", str(repo), "--repository", "acme/app", "--out", str(taken)]) == 1
    assert capsys.readouterr().err == f"prguide history: --out {taken} is a file, not a folder\n"
    assert main(["history", "--repo", str(repo), "--repository", "acme/app", "--db", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"prguide history: {tmp_path} is a folder, not a database file\n"


def test_history_shows_progress_while_reading_git_on_a_terminal(repo, capsys, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for n in range(13, 16):  # a few more merged pull requests
        (repo / f"m{n}.py").write_text(f"X = {n}\n", encoding="utf-8")
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", f"fix: m{n} (#{n})")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["history", "--repo", str(repo), "--repository", "acme/app", "--last", "3"]) == 0
    shown = terminal.getvalue()
    for phase in ("reading history", "reading diffs", "building guides"):
        assert f"{phase}: 100%" in shown and "3/3" in shown, shown


def test_merged_pull_requests_reports_progress_per_phase(repo):
    from bot.sources.gitrepo import merged_pull_requests

    seen = []
    bundles = merged_pull_requests(repo, progress=lambda phase, done, total: seen.append((phase, done, total)))
    assert len(bundles) == 1
    assert seen == [("history", 1, None), ("diffs", 1, 1)]


def test_unexpected_errors_are_one_line_too(monkeypatch, capsys, tmp_path):
    import sqlite3

    import bot.app.server

    def broken(args):
        raise KeyError("surprise")

    def missing(args):
        raise FileNotFoundError(2, "No such file or directory", str(tmp_path / "gone.yml"))

    for func, expected in (
        (broken, "prguide rules check: internal error (KeyError: 'surprise'); please report it "
                 "(PRGUIDE_TRACEBACK=1 shows where it happened)\n"),
        (missing, f"prguide rules check: {tmp_path / 'gone.yml'}: No such file or directory\n"),
    ):
        monkeypatch.setattr("bot.cli._cmd_rules_check", func)
        assert main(["rules", "check", "x.yml"]) == 1
        assert capsys.readouterr().err == expected
    monkeypatch.setenv("PRGUIDE_TRACEBACK", "1")
    monkeypatch.setattr("bot.cli._cmd_rules_check", broken)
    with pytest.raises(KeyError):
        main(["rules", "check", "x.yml"])

    # serve: a database that turns out unusable once the server opens it
    monkeypatch.undo()
    from bot.demo import generate_private_key

    monkeypatch.setenv("GITHUB_APP_ID", "1")
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", generate_private_key())
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s" * 20)
    monkeypatch.setenv("PRGUIDE_DB", str(tmp_path / "jobs.db"))

    def not_a_database(settings):
        raise sqlite3.DatabaseError("file is not a database")

    monkeypatch.setattr(bot.app.server, "run", not_a_database)
    assert main(["serve"]) == 1
    assert capsys.readouterr().err == (
        f"prguide serve: PRGUIDE_DB {tmp_path / 'jobs.db'} is not a usable prguide database (file is not a database)\n"
    )


def test_history_of_a_repository_without_merged_pull_requests(tmp_path, capsys):
    r = tmp_path / "plain"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    (r / "a.txt").write_text("a\n", encoding="utf-8")
    _git(r, "add", ".")
    _git(r, "commit", "-qm", "just a commit")
    assert main(["history", "--repo", str(r), "--repository", "acme/plain"]) == 1
    assert capsys.readouterr().err == (
        f"prguide history: {r}: no merged pull requests found: 1 commit on the first-parent history of main, "
        "none a merge commit or a subject ending in (#N); fetch the PR refs with "
        "`git fetch https://github.com/acme/plain '+refs/pull/*/head:refs/pull/*/head'` "
        "to let prguide find rebase-merged pull requests\n"
    )


def test_history_of_a_rebase_merged_repository_gives_one_guide_per_pull_request(tmp_path, capsys):
    r = tmp_path / "rebased"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    (r / "a.txt").write_text("a\n", encoding="utf-8")
    _git(r, "add", ".")
    _git(r, "commit", "-qm", "Start")
    for number, steps in ((4, ("one", "two", "three")), (5, ("four", "five"))):
        for step in steps:
            (r / f"{step}.py").write_text(f"{step.upper()} = 1\n", encoding="utf-8")
            _git(r, "add", ".")
            _git(r, "commit", "-qm", f"Add {step} (#{number})")

    assert main(["history", "--repo", str(r), "--repository", "acme/rebased", "--format", "json"]) == 0
    guides = json.loads(capsys.readouterr().out)
    assert [g["number"] for g in guides] == [5, 4]


def test_db_migrate_applies_every_component_and_errors_are_one_line(pg_schema, capsys, monkeypatch):
    from bot.cli import main

    url, schema = pg_schema
    monkeypatch.delenv("PRGUIDE_DATABASE_URL", raising=False)
    assert main(["db", "migrate", "--url", url, "--schema", schema]) == 0
    from bot.app import pgjobs, shared_state

    jobs, state = f"jobs: version {len(pgjobs.MIGRATIONS)}", f"state: version {len(shared_state.MIGRATIONS)}"
    out = capsys.readouterr().out
    assert jobs in out and state in out
    monkeypatch.setenv("PRGUIDE_DATABASE_URL", url)
    monkeypatch.setenv("PRGUIDE_DATABASE_SCHEMA", schema)
    assert main(["db", "migrate"]) == 0  # again: nothing left to do
    assert jobs in capsys.readouterr().out
    assert main(["db", "migrate", "--url", "postgresql://127.0.0.1:1/none"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("prguide db migrate: postgresql://127.0.0.1:1/none schema") and err.count("\n") == 1
    assert main(["db", "migrate", "--url", "sqlite:x.db"]) == 2
    monkeypatch.delenv("PRGUIDE_DATABASE_URL")
    assert main(["db", "migrate"]) == 2
    assert "pass --url or set PRGUIDE_DATABASE_URL" in capsys.readouterr().err
    assert main(["db"]) == 2
