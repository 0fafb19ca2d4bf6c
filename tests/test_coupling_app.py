"""The app names the files that usually change together from the guides it stored: the merged
history comes from the tag view's store, the thresholds from its replay, and each merged
pull request's paths are stored for the next one (sandbox on loopback)."""

from __future__ import annotations

import pytest
from loopback import app_private_key, pr_delivery, start_loopback  # noqa: F401
from sandbox_helpers import synthetic_bundle

from bot.app.server import wait_idle
from bot.engine.history.coupling import MergedChange

REPO = "octo-org/demo"
LINE = "`src/a.py` usually changes with `src/b.py`"


def forgetful_history(rounds: int = 13) -> list[MergedChange]:
    """src/a.py changes with src/b.py, except every third round, when src/b.py is forgotten
    and changed by the next pull request (oldest first, one day apart)."""
    out: list[MergedChange] = []

    def add(*paths: str) -> None:
        n = len(out) + 1
        out.append(MergedChange(n, paths, merged_at=f"2024-{1 + n // 28:02d}-{1 + n % 28:02d}T10:00:00Z"))

    for i in range(rounds):
        forgets = i % 3 == 2
        add("src/a.py") if forgets else add("src/a.py", "src/b.py")
        add("src/b.py") if forgets else add(f"notes/{i}.txt")
        add(f"other/{i}-1.txt")
        add(f"other/{i}-2.txt")
    return out


def forgetting_pr(number: int) -> dict:
    bundle = synthetic_bundle(number, repo=REPO, files=0)
    bundle["pull"]["merged_at"] = "2024-05-01T10:00:00Z"
    bundle["files"] = [{"filename": "src/a.py", "status": "modified", "additions": 1, "deletions": 1, "changes": 2,
                        "patch": "@@ -1 +1 @@\n-A = 1\n+A = 2"}]  # fmt: skip
    return bundle


def store_history(guides, history: list[MergedChange]) -> None:
    for change in history:
        data = {"repository": REPO, "number": change.number, "title": f"change {change.number}", "merged_at": change.merged_at}
        guides.save(data, visibility="public", change=change)


@pytest.fixture
def few_lines(monkeypatch):
    # A made-up history of ~50 pull requests names fewer lines than a real replay needs.
    monkeypatch.setattr("bot.engine.history.coupling.MIN_LINES", 3)


async def test_the_merge_guide_names_the_forgotten_partner_from_stored_guides(app_private_key, tmp_path, few_lines):  # noqa: F811
    number = 900
    async with start_loopback(app_private_key, tmp_path, {number: forgetting_pr(number)}) as lb:
        guides = lb.state.services.guides
        store_history(guides, forgetful_history())
        resp = await lb.deliver(pr_delivery(lb.bundles[number]), delivery="merge-900")
        assert resp.status == 202
        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(REPO, number)
        assert LINE in comment.body and "this PR did not touch it" in comment.body
        # The merged pull request's own paths are history for the next one.
        assert guides.merged_changes(REPO)[-1] == MergedChange(number, ("src/a.py",), (), "2024-05-01T10:00:00Z", "alice")
        assert LINE in guides.get(REPO, number)["markdown"]


async def test_no_line_without_a_history_or_where_the_replay_was_not_precise(app_private_key, tmp_path):  # noqa: F811
    async with start_loopback(app_private_key, tmp_path, {901: forgetting_pr(901), 902: forgetting_pr(902)}) as lb:
        resp = await lb.deliver(pr_delivery(lb.bundles[901]), delivery="merge-901")
        assert resp.status == 202
        await wait_idle(lb.app)
        store_history(lb.state.services.guides, forgetful_history())  # 20 lines are needed: this history has fewer
        resp = await lb.deliver(pr_delivery(lb.bundles[902]), delivery="merge-902")
        assert resp.status == 202
        await wait_idle(lb.app)
        for number in (901, 902):
            (comment,) = lb.sandbox.comments(REPO, number)
            assert "usually changes with" not in comment.body
