"""Merged pull requests rebuilt from real git repositories made in a temporary folder."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.engine.snapshot import PullRequestSnapshot
from bot.sources import (
    GitRepositoryError,
    load_bundle,
    load_merged_pull_requests,
    merged_pull_requests,
)
from git_helpers import START, Repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

APP_V1 = (
    'import sys\n\n\ndef greet(name):\n    return "hello " + name\n\n\n'
    "def main():\n    print(greet(sys.argv[1]))\n    return 0\n"
)
APP_V2 = APP_V1.replace('return "hello " + name', 'return f"Hello, {name}!"')
SUB_A = "1" * 40
SUB_B = "2" * 40
UNICODE_PATH = "docs/ünï cødé.md"


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    """One repository holding every case; returns its path and the commit of each PR."""
    repo = Repo(tmp_path_factory.mktemp("src") / "widgets")
    shas: dict[int | str, str] = {}
    repo.write("app.py", APP_V1)
    repo.write("README.md", "# Widgets\nA demo.\n")
    repo.write("docs/old name.md", "Read me.\n")
    repo.write("data.bin", b"\x00\x01\x02binary\x00")
    repo.write("notes.txt", "draft")
    repo.write("link", "target\n")
    shas[1] = repo.commit("Initial import (#1)")
    repo.write("app.py", APP_V2)
    repo.write("notes.txt", "final")
    shas[2] = repo.commit("Fix greeting (#2)\n\nSay hello properly.\n\nSecond paragraph.\n")
    repo.write(".editorconfig", "root = true\n")
    shas["direct"] = repo.commit("Tidy up without a pull request")
    repo.git("mv", "docs/old name.md", "docs/new name.md")
    repo.git("rm", "-q", "README.md")
    shas[3] = repo.commit("Rename docs and drop README (#3)")
    repo.write("data.bin", b"\x00\x01\x02binary, changed\x00")
    shas[4] = repo.commit("Update binary (#4)")
    repo.write("big.lock", "".join(f"row {i}\n" for i in range(3500)))
    repo.write("medium.txt", "".join(f"row {i}\n" for i in range(2000)))
    shas[5] = repo.commit("Add lock file (#5)")
    repo.write(UNICODE_PATH, "Ünïcödé text\n")
    shas[6] = repo.commit("Add ünïcode 文档 (#6)")

    repo.git("checkout", "-q", "-b", "feature/login")
    repo.write("login.py", "def login():\n    pass\n")
    repo.commit("Add login", author="alice")
    repo.write("templates/login.html", "<form></form>\n")
    shas["branch-tip"] = repo.commit("Add login template", author="alice")
    repo.git("checkout", "-q", "main")
    repo.write("CHANGES.md", "Unrelated change on main\n")
    shas["main-only"] = repo.commit("Note changes without a pull request")
    repo.git(
        "merge", "-q", "--no-ff", "feature/login",
        "-m", "Merge pull request #7 from alice/feature/login", "-m", "Add login page", "-m", "Details here.",
        author="Maintainer", committer="Maintainer",
    )  # fmt: skip
    shas[7] = repo.git("rev-parse", "HEAD")
    repo.clock += 3600

    shas[8] = repo.commit("Keep the release train moving (#8)")
    repo.write("requirements.txt", "requests==2.32.0\n")
    shas[9] = repo.commit("Bump requests from 2.31.0 to 2.32.0 (#9)", author="dependabot[bot]")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{SUB_A},vendor/lib")
    shas[10] = repo.commit("Vendor lib (#10)", add=())
    repo.git("update-index", "--cacheinfo", f"160000,{SUB_B},vendor/lib")
    shas[11] = repo.commit("Update vendored lib (#11)", add=())
    (repo.path / "link").unlink()
    (repo.path / "link").symlink_to("app.py")
    shas[12] = repo.commit("Make link a symlink (#12)", add=("link",))
    return {"path": repo.path, "shas": shas, "bundles": merged_pull_requests(repo.path)}


def by_number(bundles: list[dict]) -> dict[int, dict]:
    return {b["pull"]["number"]: b for b in bundles}


def files_of(bundle: dict) -> dict[str, dict]:
    return {f["filename"]: f for f in bundle["files"]}


def test_pull_requests_come_newest_first_and_skip_direct_pushes(history):
    numbers = [b["pull"]["number"] for b in history["bundles"]]

    assert numbers == [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    commits = {b["pull"]["merge_commit_sha"] for b in history["bundles"]}
    assert history["shas"]["direct"] not in commits and history["shas"]["main-only"] not in commits


def test_squash_commit_gives_title_body_and_github_shaped_patch(history):
    pr = by_number(history["bundles"])[2]
    pull = pr["pull"]

    assert pull["title"] == "Fix greeting"
    assert pull["body"] == "Say hello properly.\n\nSecond paragraph."
    assert pull["merged"] is True and pull["state"] == "closed"
    assert pull["merge_commit_sha"] == history["shas"][2]
    assert pull["base"]["sha"] == history["shas"][1] and pull["base"]["ref"] == "main"
    app = files_of(pr)["app.py"]
    assert app == {
        "filename": "app.py",
        "status": "modified",
        "additions": 1,
        "deletions": 1,
        "changes": 2,
        "patch": (
            "@@ -2,7 +2,7 @@ import sys\n"
            " \n"
            " \n"
            " def greet(name):\n"
            '-    return "hello " + name\n'
            '+    return f"Hello, {name}!"\n'
            " \n"
            " \n"
            " def main():"
        ),
    }


def test_missing_final_newline_marker_is_kept(history):
    notes = files_of(by_number(history["bundles"])[2])["notes.txt"]

    assert notes["patch"] == (
        "@@ -1 +1 @@\n-draft\n\\ No newline at end of file\n+final\n\\ No newline at end of file"
    )


def test_committer_date_is_merged_at_and_author_name_is_login(history):
    pull = by_number(history["bundles"])[1]["pull"]

    assert pull["merged_at"] == "2023-11-14T22:14:20Z"  # START + 60 s, the committer date
    assert pull["closed_at"] == pull["merged_at"]
    assert pull["user"] == {"login": "Dev One", "type": "User"}
    assert "example.com" not in json.dumps(history["bundles"])


def test_root_commit_is_diffed_against_the_empty_tree(history):
    pr = by_number(history["bundles"])[1]

    assert pr["pull"]["base"]["sha"] is None
    assert {f["status"] for f in pr["files"]} == {"added"}
    assert files_of(pr)["README.md"]["patch"] == "@@ -0,0 +1,2 @@\n+# Widgets\n+A demo."
    assert pr["pull"]["changed_files"] == len(pr["files"]) == 6


def test_rename_and_removal(history):
    files = files_of(by_number(history["bundles"])[3])

    assert files["docs/new name.md"] == {
        "filename": "docs/new name.md",
        "status": "renamed",
        "additions": 0,
        "deletions": 0,
        "changes": 0,
        "previous_filename": "docs/old name.md",
    }
    assert files["README.md"]["status"] == "removed"
    assert files["README.md"]["deletions"] == 2
    assert files["README.md"]["patch"] == "@@ -1,2 +0,0 @@\n-# Widgets\n-A demo."


def test_binary_file_has_no_patch_and_zero_counts(history):
    pr = by_number(history["bundles"])[4]

    assert pr["files"] == [
        {"filename": "data.bin", "status": "modified", "additions": 0, "deletions": 0, "changes": 0}
    ]
    assert pr["_meta"]["patch_omitted"] == [{"filename": "data.bin", "reason": "binary"}]


def test_diff_over_3000_lines_has_no_patch_but_keeps_counts(history):
    pr = by_number(history["bundles"])[5]
    files = files_of(pr)

    assert "patch" not in files["big.lock"]
    assert files["big.lock"]["additions"] == 3500 and files["big.lock"]["changes"] == 3500
    assert files["medium.txt"]["patch"].startswith("@@ -0,0 +1,2000 @@\n+row 0\n")
    assert pr["pull"]["additions"] == 5500
    assert pr["_meta"]["patch_omitted"] == [{"filename": "big.lock", "reason": "diff too large"}]


def test_unicode_title_and_path_with_spaces(history):
    pr = by_number(history["bundles"])[6]

    assert pr["pull"]["title"] == "Add ünïcode 文档"
    assert [f["filename"] for f in pr["files"]] == [UNICODE_PATH]
    assert pr["files"][0]["patch"] == "@@ -0,0 +1 @@\n+Ünïcödé text"


def test_merge_commit_pull_request(history):
    pr = by_number(history["bundles"])[7]
    pull = pr["pull"]

    assert pull["title"] == "Add login page"
    assert pull["body"] == "Details here."
    assert pull["head"] == {"ref": "feature/login", "sha": history["shas"]["branch-tip"]}
    assert pull["base"]["sha"] == history["shas"]["main-only"]
    # The merge commit's author merged it; the branch's author wrote it.
    assert pull["user"]["login"] == "alice"
    # Diffed against the first parent: the branch's files only, not main's own change.
    assert [f["filename"] for f in pr["files"]] == ["login.py", "templates/login.html"]
    assert pr["_meta"]["kind"] == "merge"


def test_empty_commit_has_no_files(history):
    pr = by_number(history["bundles"])[8]

    assert pr["files"] == []
    assert pr["pull"]["changed_files"] == pr["pull"]["additions"] == pr["pull"]["deletions"] == 0


def test_bot_author(history):
    assert by_number(history["bundles"])[9]["pull"]["user"] == {"login": "dependabot[bot]", "type": "Bot"}


def test_submodule_changes_are_small_patches(history):
    added = files_of(by_number(history["bundles"])[10])["vendor/lib"]
    updated = files_of(by_number(history["bundles"])[11])["vendor/lib"]

    assert added["status"] == "added"
    assert added["patch"] == f"@@ -0,0 +1 @@\n+Subproject commit {SUB_A}"
    assert updated["status"] == "modified"
    assert (updated["additions"], updated["deletions"]) == (1, 1)
    assert updated["patch"] == f"@@ -1 +1 @@\n-Subproject commit {SUB_A}\n+Subproject commit {SUB_B}"


def test_file_turned_symlink_is_one_modified_file(history):
    pr = by_number(history["bundles"])[12]

    assert pr["files"] == [
        {
            "filename": "link",
            "status": "modified",
            "additions": 1,
            "deletions": 1,
            "changes": 2,
            "patch": "@@ -1 +0,0 @@\n-target\n@@ -0,0 +1 @@\n+app.py\n\\ No newline at end of file",
        }
    ]


def test_every_patch_has_github_shape(history):
    for bundle in history["bundles"]:
        for entry in bundle["files"]:
            if "patch" in entry:
                assert entry["patch"].startswith("@@")
                assert not entry["patch"].endswith("\n")
                assert "\ndiff --git" not in entry["patch"] and "\n+++ " not in entry["patch"]


def test_last_keeps_the_newest(history):
    assert [b["pull"]["number"] for b in merged_pull_requests(history["path"], last=3)] == [12, 11, 10]
    assert merged_pull_requests(history["path"], last=0) == []
    assert len(merged_pull_requests(history["path"], last=50)) == 12


def test_ref_picks_where_the_walk_starts(history):
    bundles = merged_pull_requests(history["path"], ref=history["shas"][5], last=2)

    assert [b["pull"]["number"] for b in bundles] == [5, 4]
    [on_branch] = merged_pull_requests(history["path"], ref="feature/login", last=1)
    assert on_branch["pull"]["base"]["ref"] == "feature/login"


def test_bare_clone_gives_the_same_pull_requests(history, tmp_path):
    bare = tmp_path / "widgets.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(history["path"]), str(bare)], check=True)

    bundles = merged_pull_requests(bare)

    assert [b["files"] for b in bundles] == [b["files"] for b in history["bundles"]]
    assert [b["pull"]["title"] for b in bundles] == [b["pull"]["title"] for b in history["bundles"]]
    # A local-path origin says nothing about GitHub: the folder name stands in.
    assert bundles[0]["pull"]["base"]["repo"]["full_name"] == "local/widgets"
    assert bundles[0]["pull"]["html_url"] == ""


def test_shallow_clone_stops_at_the_depth_limit(history, tmp_path):
    shallow = tmp_path / "shallow"
    clone = ["git", "clone", "-q", "--depth", "3", f"file://{history['path']}", str(shallow)]
    subprocess.run(clone, check=True, capture_output=True)

    bundles = merged_pull_requests(shallow)

    # #10 is at the depth limit: without its parent its diff would be the whole tree.
    assert [b["pull"]["number"] for b in bundles] == [12, 11]
    assert [b["files"] for b in bundles] == [b["files"] for b in history["bundles"][:2]]


def test_dot_git_folder_works_like_the_working_tree(history):
    assert merged_pull_requests(history["path"] / ".git", last=1)[0]["pull"]["number"] == 12


def test_snapshots_build_from_the_output(history):
    snaps = load_merged_pull_requests(history["path"], repository="acme/widgets")

    assert all(isinstance(s, PullRequestSnapshot) for s in snaps)
    assert [s.number for s in snaps] == [b["pull"]["number"] for b in history["bundles"]]
    snap = {s.number: s for s in snaps}[5]
    assert snap.repository == "acme/widgets"
    assert snap.html_url == "https://github.com/acme/widgets/pull/5"
    assert snap.missing_patches == ("big.lock",)
    assert snap.merged and snap.merged_at == "2023-11-15T03:14:20Z"
    assert {s.number: s for s in snaps}[9].author_is_bot


def test_output_round_trips_through_a_bundle_file(history, tmp_path):
    bundle = by_number(history["bundles"])[3]
    path = tmp_path / "3.json"
    path.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")

    snap = load_bundle(path)

    assert snap.title == "Rename docs and drop README"
    assert [(f.filename, f.status, f.previous_filename) for f in snap.files] == [
        ("README.md", "removed", None),
        ("docs/new name.md", "renamed", "docs/old name.md"),
    ]


@pytest.mark.corpus
def test_output_uses_only_fields_the_corpus_has(history, load_bundle_json):
    corpus = load_bundle_json(7074)
    pull_keys = set(corpus["pull"])
    file_keys = set().union(*(set(f) for f in corpus["files"]))

    for bundle in history["bundles"]:
        assert set(bundle["pull"]) <= pull_keys
        assert set(bundle["pull"]["base"]) <= set(corpus["pull"]["base"])
        assert set(bundle["pull"]["head"]) <= set(corpus["pull"]["head"])
        for entry in bundle["files"]:
            assert set(entry) <= file_keys


@pytest.fixture
def tiny(tmp_path) -> Repo:
    repo = Repo(tmp_path / "tiny-repo")
    repo.write("a.txt", "a\n")
    repo.commit("Start (#1)")
    return repo


@pytest.mark.parametrize(
    ("url", "repository", "html_url"),
    [
        ("https://github.com/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets/pull/1"),
        ("https://github.com/acme/widgets", "acme/widgets", "https://github.com/acme/widgets/pull/1"),
        ("git@github.com:acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets/pull/1"),
        ("ssh://git@github.com/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets/pull/1"),
        ("https://x:s3cret@github.com/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets/pull/1"),
        ("https://gitlab.example.com/acme/widgets.git", "acme/widgets", ""),
        ("https://gitlab.example.com/group/sub/widgets.git", "local/tiny-repo", ""),
        ("/srv/mirrors/widgets.git", "local/tiny-repo", ""),
        ("file:///srv/mirrors/widgets.git", "local/tiny-repo", ""),
    ],
)
def test_repository_is_guessed_from_origin(tiny, url, repository, html_url):
    tiny.git("config", "remote.origin.url", url)

    [bundle] = merged_pull_requests(tiny.path)

    assert bundle["pull"]["base"]["repo"]["full_name"] == repository
    assert bundle["pull"]["html_url"] == html_url
    assert "s3cret" not in json.dumps(bundle)


def test_without_origin_the_folder_names_the_repository(tiny):
    [bundle] = merged_pull_requests(tiny.path)

    assert bundle["pull"]["base"]["repo"]["full_name"] == "local/tiny-repo"


def test_given_repository_wins_and_is_checked(tiny):
    tiny.git("config", "remote.origin.url", "git@github.com:acme/widgets.git")

    [bundle] = merged_pull_requests(tiny.path, repository="other/place")

    assert bundle["pull"]["html_url"] == "https://github.com/other/place/pull/1"
    with pytest.raises(ValueError, match="owner/name"):
        merged_pull_requests(tiny.path, repository="just-a-name")


def test_git_environment_of_the_caller_does_not_redirect_the_read(tiny, history, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(history["path"] / ".git"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "false")

    assert [b["pull"]["title"] for b in merged_pull_requests(tiny.path)] == ["Start"]


def test_not_a_repository(tmp_path):
    with pytest.raises(GitRepositoryError, match="not a git repository") as caught:
        merged_pull_requests(tmp_path)
    assert str(tmp_path) in str(caught.value)


def test_folder_inside_a_working_tree_is_refused(history):
    with pytest.raises(GitRepositoryError, match="not a git repository"):
        merged_pull_requests(history["path"] / "docs")


def test_missing_folder(tmp_path):
    with pytest.raises(GitRepositoryError, match="no such folder"):
        merged_pull_requests(tmp_path / "nowhere")


def test_empty_repository_and_unknown_ref(tmp_path, tiny):
    empty = Repo(tmp_path / "empty")
    with pytest.raises(GitRepositoryError, match="names no commit"):
        merged_pull_requests(empty.path)
    with pytest.raises(GitRepositoryError, match="'no-such-branch' names no commit"):
        merged_pull_requests(tiny.path, ref="no-such-branch")
    with pytest.raises(GitRepositoryError, match="is not a ref"):
        merged_pull_requests(tiny.path, ref="--all")


def test_git_missing(tiny, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))

    with pytest.raises(GitRepositoryError, match="git is not installed"):
        merged_pull_requests(tiny.path)


def test_negative_last_is_refused(tiny):
    with pytest.raises(ValueError, match="last"):
        merged_pull_requests(tiny.path, last=-1)


def fast_import(path: Path, commits: int, files_per_commit: int = 4) -> None:
    """Build a repository of ``commits`` squash-merge commits in one ``git fast-import``."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, capture_output=True)
    chunks = []
    for i in range(commits):
        message = f"Change {i} (#{i + 1})\n".encode()
        chunks.append(b"commit refs/heads/main\n")
        chunks.append(f"author Dev <dev@example.com> {START + i} +0000\n".encode())
        chunks.append(f"committer Dev <dev@example.com> {START + i} +0000\n".encode())
        chunks.append(b"data %d\n%s\n" % (len(message), message))
        for j in range(files_per_commit):
            content = "".join(f"line {k} of commit {i}\n" if k % 7 == i % 7 else f"line {k}\n" for k in range(40))
            data = content.encode()
            chunks.append(b"M 100644 inline pkg/mod_%d.py\ndata %d\n%s\n" % (j, len(data), data))
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(chunks), check=True)


def test_git_runs_a_fixed_number_of_times_whatever_the_history_length(tmp_path, monkeypatch):
    fast_import(tmp_path / "many", commits=60)
    calls: list[list[str]] = []
    real_popen = subprocess.Popen

    def popen(cmd, *args, **kwargs):  # subprocess.run starts its process through Popen too
        calls.append(cmd)
        return real_popen(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)

    bundles = merged_pull_requests(tmp_path / "many")

    assert len(bundles) == 60
    assert bundles[0]["pull"]["title"] == "Change 59"
    assert all(len(b["files"]) == 4 for b in bundles)  # the root adds 4 files, every later commit edits them
    # rev-parse x3, config, for-each-ref (pull request refs: none here), log, diff-tree
    assert len(calls) <= 7
    assert sum("diff-tree" in cmd for cmd in calls) == 1
    assert sum("log" in cmd for cmd in calls) == 1


def test_line_counts_are_gits_own_numstat_read_from_the_patch_alone(history, monkeypatch):
    """Additions and deletions come from counting the patch's lines, not from a second diff
    (``--numstat`` made git diff every file twice: half of its time); they equal git's numstat
    for every kind of change: edits, renames, removals, binary files, long diffs, submodules,
    a file turned symlink, a merge, the root commit."""
    asked: list[list[str]] = []
    real_popen = subprocess.Popen

    def popen(cmd, *args, **kwargs):
        asked.append(list(cmd))
        return real_popen(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    bundles = merged_pull_requests(history["path"])
    monkeypatch.undo()
    assert not [cmd for cmd in asked if "diff-tree" in cmd and "--numstat" in cmd]
    assert bundles == history["bundles"]  # the same files, counts and patches as read before
    for bundle in bundles:
        base, commit = bundle["pull"]["base"]["sha"], bundle["pull"]["merge_commit_sha"]
        argv = ["git", "-C", str(history["path"]), "diff", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv",
                "--ignore-submodules=none", base or "4b825dc642cb6eb9a060e54bf8d69288fbee4904", commit]  # fmt: skip
        out = subprocess.run(argv, capture_output=True, check=True).stdout.split(b"\0")
        counts, i = {}, 0
        while i < len(out) - 1:
            added, deleted, path = out[i].split(b"\t", 2)
            if not path:  # a rename: old then new path
                path, i = out[i + 2], i + 2
            counts[path.decode()] = (0 if added == b"-" else int(added), 0 if deleted == b"-" else int(deleted))
            i += 1
        for f in bundle["files"]:
            assert (f["additions"], f["deletions"]) == counts[f["filename"]], (bundle["pull"]["number"], f["filename"])
