"""Reverts end to end: when a pull request reverting #N is merged, #N's guide comment and its
stored guide say "Reverted by #M N days after it was merged"; a redelivery changes nothing,
and a later refresh of #N keeps the line (real app, worker pool and sandbox on loopback)."""

from __future__ import annotations

from loopback import app_private_key, start_loopback  # noqa: F401
from sandbox_helpers import made_up_fix

from bot.app.server import wait_idle
from bot.engine.marker import parse_marker
from bot.engine.render.revert_note import reverted_by

REPO = "octo-org/demo"
FIX, REVERT = 100, 130
MAINTAINER = "mo"
NOTE = "> [!WARNING]\n> Reverted by #130 3 days after it was merged.\n"


def bundles() -> dict[int, dict]:
    fix = made_up_fix(FIX, repo=REPO, author="alice")
    fix["pull"]["merged_at"] = "2024-05-01T10:00:00Z"
    revert = made_up_fix(REVERT, repo=REPO, author="bob")
    revert["pull"].update(title='Revert "fix: retry uploads when storage answers 503"',
                          body=f"Reverts {REPO}#{FIX}\n\nThe retries hid a real outage.",
                          merged_at="2024-05-04T22:00:00Z")  # fmt: skip
    return {FIX: fix, REVERT: revert}


def guide_comment(lb, number: int):
    (found,) = [c for c in lb.sandbox.comments(REPO, number) if c.user == "prguide[bot]" and parse_marker(c.body)]
    return found


async def merge(lb, number: int, delivery: str) -> None:
    payload = lb.sandbox.state.pull_request_event(*REPO.split("/"), number)
    resp = await lb.deliver(payload, delivery=delivery)
    assert resp.status == 202
    await wait_idle(lb.app)


def comment_edits(lb, comment_id: int) -> int:
    return sum(1 for r in lb.sandbox.requests if r["method"] == "PATCH" and r["path"].endswith(f"/issues/comments/{comment_id}"))


async def test_a_merged_revert_notes_the_reverted_guide_once(app_private_key, tmp_path):  # noqa: F811
    async with start_loopback(app_private_key, tmp_path, bundles(), sandbox_options={"collaborators": {MAINTAINER: "maintain"}}) as lb:
        await merge(lb, FIX, "merge-fix")
        before = guide_comment(lb, FIX)
        before_id, before_body = before.id, before.body  # the sandbox edits the comment object in place
        assert "Reverted by" not in before_body

        await merge(lb, REVERT, "merge-revert")
        noted = guide_comment(lb, FIX)
        assert noted.id == before_id and noted.body.count(NOTE) == 1
        title = next(line for line in noted.body.splitlines() if line.startswith("### "))
        assert noted.body.index(NOTE) == noted.body.index(title) + len(title) + 2  # right under the title
        assert reverted_by(parse_marker(noted.body)) == (REVERT, 3)
        # Only the one line was added: the rest of the comment is as it was.
        assert noted.body.replace("\n" + NOTE, "").split("-->", 1)[1] == before_body.split("-->", 1)[1]
        stored = lb.state.services.guides.get(REPO, FIX)
        assert stored["reverted_by"] == {"number": REVERT, "days": 3} and NOTE in stored["markdown"]
        # The tag view's Chinese text of the guide says so too.
        assert f"本 PR 已被 #{REVERT} 回退" in stored["languages"]["zh"]["markdown"]
        # The tag view's entries of the reverted pull request say so, in either language.
        cards = [lb.state.services.guides.cards(REPO, [FIX], lang)[FIX] for lang in ("en", "zh")]
        assert [c["reverted_by"] for c in cards] == [{"number": REVERT, "days": 3}] * 2
        assert comment_edits(lb, before_id) == 1
        assert "Reverted by" not in guide_comment(lb, REVERT).body  # the revert's own guide is not noted

        # GitHub's redelivery (same delivery id) and another delivery of the same merge.
        await merge(lb, REVERT, "merge-revert")
        await merge(lb, REVERT, "merge-revert-again")
        assert comment_edits(lb, before_id) == 1
        assert guide_comment(lb, FIX).body == noted.body

        # A maintainer's refresh of the reverted pull request keeps the line.
        command = lb.sandbox.state.create_comment(*REPO.split("/"), FIX, "/prguide refresh", user=MAINTAINER)
        resp = await lb.deliver(lb.sandbox.state.issue_comment_event(command, "created"), event="issue_comment", delivery="refresh")
        assert resp.status == 202
        await wait_idle(lb.app)
        assert guide_comment(lb, FIX).body.count(NOTE) == 1
        assert lb.state.services.guides.get(REPO, FIX)["reverted_by"] == {"number": REVERT, "days": 3}


async def test_a_revert_of_a_pull_request_without_a_guide_writes_nothing(app_private_key, tmp_path):  # noqa: F811
    async with start_loopback(app_private_key, tmp_path, bundles()) as lb:
        await merge(lb, REVERT, "merge-revert")  # #100 was merged before prguide was installed
        assert [c for c in lb.sandbox.comments(REPO, FIX)] == []
        assert lb.state.services.guides.get(REPO, FIX) is None
        assert lb.jobs()["parked"] == 0
