"""Bundle files: the corpus loads whole, and malformed bundles fail with the file named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.engine.snapshot import PullRequestSnapshot
from bot.sources import BundleError, iter_bundles, load_bundle, read_bundle, snapshot_from_bundle


def _pull(number: int = 12, **extra) -> dict:
    base = {"ref": "main", "repo": {"full_name": "acme/widgets"}}
    return {"number": number, "title": f"PR {number}", "base": base, **extra}


def _write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.corpus
def test_every_corpus_bundle_loads_with_matching_counts(corpus_dir):
    loaded = list(iter_bundles(corpus_dir))

    assert len(loaded) == len(list(corpus_dir.glob("*.json"))) > 0
    numbers = [snap.number for _, snap in loaded]
    assert numbers == sorted(numbers)
    for path, snap in loaded:
        raw = read_bundle(path)
        assert snap.number == raw["pull"]["number"] == int(path.stem)
        assert snap.changed_files == raw["pull"]["changed_files"]
        assert len(snap.files) == len(raw["files"])
        assert [f.filename for f in snap.files] == [f["filename"] for f in raw["files"]]
        assert snap.additions == raw["pull"]["additions"]
        assert snap.repository == "verl-project/verl"
        assert snap.merged


@pytest.mark.corpus
def test_corpus_bundle_keeps_github_patch_omissions(corpus_dir):
    snap = load_bundle(corpus_dir / "3427.json")
    raw = read_bundle(corpus_dir / "3427.json")

    omitted = {entry["filename"] for entry in raw["_meta"]["patch_omitted"]}
    assert {f.filename for f in snap.files if f.patch is None} == omitted
    assert all(f.patch.startswith("@@") for f in snap.files if f.patch is not None)


def test_meta_and_unknown_keys_are_kept_raw_and_ignored_by_the_snapshot(tmp_path):
    path = _write(tmp_path, "12.json", {"pull": _pull(), "files": [{"filename": "a.py"}], "_meta": {"source": "x"}})

    assert read_bundle(path)["_meta"] == {"source": "x"}
    snap = load_bundle(path)
    assert isinstance(snap, PullRequestSnapshot)
    assert snap.number == 12 and snap.repository == "acme/widgets"
    assert [f.filename for f in snap.files] == ["a.py"]
    assert snap.reviews == () and snap.review_comments == ()


def test_missing_reviews_default_to_empty_lists(tmp_path):
    path = _write(tmp_path, "12.json", {"pull": _pull(), "files": []})

    raw = read_bundle(path)

    assert raw["reviews"] == [] and raw["review_comments"] == []


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not JSON"),
        ("[]", "must be a JSON object, not a list"),
        ({"files": []}, '"pull" is missing'),
        ({"pull": [], "files": []}, '"pull" must be an object'),
        ({"pull": {"title": "x"}, "files": []}, '"pull.number" must be an integer, not null'),
        ({"pull": {"number": "12"}, "files": []}, '"pull.number" must be an integer, not a string'),
        ({"pull": _pull()}, '"files" is missing'),
        ({"pull": _pull(), "files": {"a.py": {}}}, '"files" must be a list, not an object'),
        ({"pull": _pull(), "files": [{"filename": "a.py"}, {"status": "added"}]}, '"files[1]" has no "filename"'),
        ({"pull": _pull(), "files": [{"filename": ""}]}, '"files[0]" has no "filename"'),
        ({"pull": _pull(), "files": ["a.py"]}, '"files[0]" must be an object, not a string'),
        ({"pull": _pull(), "files": [], "reviews": {}}, '"reviews" must be a list'),
        ({"pull": _pull(), "files": [], "review_comments": [1]}, '"review_comments[0]" must be an object'),
    ],
)
def test_malformed_bundle_names_the_file_and_the_problem(tmp_path, content, problem):
    path = _write(tmp_path, "broken-7.json", content)

    with pytest.raises(BundleError) as caught:
        load_bundle(path)

    assert isinstance(caught.value, ValueError)
    assert str(path) in str(caught.value)
    assert problem in str(caught.value)
    assert caught.value.source == str(path)


def test_bundle_that_is_not_utf8_is_reported(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"pull": {"number": 1, "title": "caf\xe9"}, "files": []}')

    with pytest.raises(BundleError, match="not UTF-8"):
        read_bundle(path)


def test_missing_bundle_file_is_reported(tmp_path):
    with pytest.raises(BundleError, match="cannot be read") as caught:
        read_bundle(tmp_path / "nope.json")
    assert "nope.json" in str(caught.value)


def test_pull_without_repository_is_a_bundle_error(tmp_path):
    path = _write(tmp_path, "5.json", {"pull": {"number": 5}, "files": []})

    with pytest.raises(BundleError, match="cannot tell its repository") as caught:
        load_bundle(path)
    assert "5.json" in str(caught.value)


def test_snapshot_from_bundle_names_its_source():
    with pytest.raises(BundleError, match=r"^replay #3: "):
        snapshot_from_bundle({"pull": {"number": 3}}, "replay #3")


def test_iter_bundles_orders_by_pr_number_not_file_name(tmp_path):
    _write(tmp_path, "a.json", {"pull": _pull(100), "files": []})
    _write(tmp_path, "9.json", {"pull": _pull(9), "files": []})
    _write(tmp_path, "10.json", {"pull": _pull(10), "files": []})
    _write(tmp_path, "notes.md", "not a bundle")

    order = [(path.name, snap.number) for path, snap in iter_bundles(tmp_path)]

    assert order == [("9.json", 9), ("10.json", 10), ("a.json", 100)]


def test_iter_bundles_fails_up_front_on_a_bad_file(tmp_path):
    _write(tmp_path, "1.json", {"pull": _pull(1), "files": []})
    _write(tmp_path, "2.json", {"pull": _pull(2)})

    with pytest.raises(BundleError, match=r"2\.json.*\"files\" is missing"):
        iter_bundles(tmp_path)


def test_iter_bundles_needs_a_folder(tmp_path):
    with pytest.raises(BundleError, match="not a folder"):
        iter_bundles(tmp_path / "missing")
