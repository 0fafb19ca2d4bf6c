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
    resp = await loopback.deliver(pr_delivery(loopback.template, bundle), delivery=delivery)
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
