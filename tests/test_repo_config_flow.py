"""The repository's .github/prguide.yml in the merged-PR flow: read cheaply, checked when a PR changes it."""

from __future__ import annotations

import copy

from loopback import REPO, SMALL_PR, app_private_key, loopback, pr_delivery  # noqa: F401

from bot.app.server import wait_idle

CONFIG = "/repos/verl-project/verl/contents/.github/prguide.yml"


def config_reads(sandbox) -> list[dict]:
    return [r for r in sandbox.requests if r["path"].split("?")[0] == CONFIG]


def bundle_changing_config(loopback, number: int) -> dict:
    bundle = copy.deepcopy(loopback.bundles[SMALL_PR])
    bundle["pull"]["number"] = number
    bundle["files"].append({"filename": ".github/prguide.yml", "status": "added", "additions": 2, "deletions": 0,
                            "changes": 2, "patch": "@@ -0,0 +1,2 @@\n+lang: en\n+colour: blue"})
    bundle["pull"]["changed_files"] = len(bundle["files"])
    loopback.sandbox.add_bundle(bundle)
    return bundle


async def merge(loopback, bundle, delivery):
    resp = await loopback.deliver(pr_delivery(bundle), delivery=delivery)
    assert resp.status == 202
    await wait_idle(loopback.app)


async def test_a_missing_config_file_is_asked_for_once_not_per_guide(loopback):
    await loopback.merged(delivery="first")
    await loopback.merged(7422, delivery="second")
    assert [r["status"] for r in config_reads(loopback.sandbox)] == [404]
    assert len(loopback.comments()) == 1 and len(loopback.comments(7422)) == 1


async def test_a_pr_that_adds_an_invalid_config_gets_a_check_with_the_line(loopback):
    await loopback.merged(delivery="first")  # the repository is now remembered as having no config
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "lang: en\ncolour: blue\n")
    bundle = bundle_changing_config(loopback, 9001)
    await merge(loopback, bundle, "adds-config")
    (comment,) = loopback.comments(9001)
    assert "changed in this PR and has problems" in comment.body
    assert "`.github/prguide.yml:2`" in comment.body
    assert [r["status"] for r in config_reads(loopback.sandbox)][-1] == 200  # read fresh despite the memory


async def test_a_pr_that_adds_a_valid_config_is_told_so(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    bundle = bundle_changing_config(loopback, 9002)
    await merge(loopback, bundle, "adds-good-config")
    (comment,) = loopback.comments(9002)
    assert "本 PR 修改了 `.github/prguide.yml`，校验通过。" in comment.body
    assert [r["status"] for r in config_reads(loopback.sandbox)] == [200]  # read once: that read is already fresh


async def test_a_config_named_prguide_yaml_is_read(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yaml", "lang: zh\n")
    await loopback.merged(delivery="yaml")
    (comment,) = loopback.comments()
    assert "快速阅读" in comment.body or "阅读" in comment.body  # the guide is in Chinese
    assert "Quick read" not in comment.body


async def test_a_pr_that_changes_prguide_yaml_gets_its_check(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yaml", "lang: en\ncolour: blue\n")
    bundle = bundle_changing_config(loopback, 9003)
    bundle["files"][-1]["filename"] = ".github/prguide.yaml"
    loopback.sandbox.add_bundle(bundle)
    await merge(loopback, bundle, "adds-yaml-config")
    (comment,) = loopback.comments(9003)
    assert "changed in this PR and has problems" in comment.body and "`.github/prguide.yaml:2`" in comment.body


async def test_the_check_of_a_merge_into_another_branch_reads_the_file_it_merged(loopback):
    bundle = bundle_changing_config(loopback, 9004)
    bundle["pull"]["base"]["ref"] = "release-1.0"
    bundle["pull"]["merge_commit_sha"] = "f" * 40
    loopback.sandbox.add_bundle(bundle)
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "lang: en\n")  # the default branch's file: valid
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "lang: en\ncolour: blue\n", ref="f" * 40)  # what this merge left
    await merge(loopback, bundle, "release-config")
    (comment,) = loopback.comments(9004)
    assert "changed in this PR and has problems" in comment.body and "`.github/prguide.yml:2`" in comment.body
    refs = [r["path"] for r in config_reads(loopback.sandbox) if "ref=" in r["path"]]
    assert any("ref=" + "f" * 40 in path for path in refs)


# --- comment: all | quick | deep | off (issue 20) ----------------------------------------------
# SMALL_PR (7491) is a quick read: "quick" comments on it, "deep" and "off" do not. Below the
# setting's level the labels and the tag view are still updated.


def stored(loopback, number: int = SMALL_PR):
    return loopback.state.services.guides.get(REPO, number)


async def test_comment_off_updates_labels_and_the_tag_view_without_a_comment(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "comment: off\n")
    await loopback.merged(delivery="off")
    assert loopback.comments() == []
    assert "type/fix" in loopback.labels()
    data = stored(loopback)
    assert data is not None and data["reading_level"] == "quick"


async def test_comment_deep_skips_a_quick_read(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "comment: deep\n")
    await loopback.merged(delivery="deep")
    assert loopback.comments() == []
    assert "type/fix" in loopback.labels() and stored(loopback) is not None


async def test_comment_quick_posts_on_a_quick_read(loopback):
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "comment: quick\n")
    await loopback.merged(delivery="quick")
    (comment,) = loopback.comments()
    assert "**Quick read**" in comment.body
    assert "type/fix" in loopback.labels()


async def test_by_default_every_guide_gets_its_comment(loopback):
    await loopback.merged(7406, delivery="docs")  # a docs line: "Safe to skip"
    (comment,) = loopback.comments(7406)
    assert "Safe to skip" in comment.body


async def test_comment_off_remembers_a_label_a_human_removed(loopback):
    # No comment, so no marker on GitHub: the stored guide's marker remembers which labels
    # prguide added, and a label a maintainer removed is not added back on a redelivery.
    loopback.sandbox.set_file(REPO, ".github/prguide.yml", "comment: off\n")
    await loopback.merged(delivery="first")
    assert loopback.comments() == [] and "type/fix" in loopback.labels()
    owner, name = REPO.split("/")
    loopback.sandbox.state.remove_label(owner, name, SMALL_PR, "type/fix", actor="maintainer-mo")
    resp = await loopback.deliver(pr_delivery(loopback.bundles[SMALL_PR]), delivery="second")
    assert resp.status == 202
    await wait_idle(loopback.app)
    assert "type/fix" not in loopback.labels()


async def test_a_stored_guide_that_cannot_be_read_costs_nothing():
    import sqlite3
    from types import SimpleNamespace

    from bot.features.guide import _stored_marker

    class Broken:
        blocking = False

        def get(self, repository, number):
            raise sqlite3.OperationalError("database is locked")

    class Empty(Broken):
        def get(self, repository, number):
            return {"markdown": "no marker here"}

    assert await _stored_marker(SimpleNamespace(guides=Broken()), REPO, 1) is None
    assert await _stored_marker(SimpleNamespace(guides=Empty()), REPO, 1) is None
