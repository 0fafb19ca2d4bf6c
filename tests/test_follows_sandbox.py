"""In the app, "Follows #N" end to end: a pull request whose author changed the same functions
in a pull request merged a few days before says so, from the definitions stored with the
earlier guide; one whose description names the pull request it follows up says that
(real app, worker pool and sandbox on loopback)."""

from __future__ import annotations

from loopback import app_private_key, start_loopback  # noqa: F401
from sandbox_helpers import made_up_fix

from bot.app.server import wait_idle
from bot.engine.marker import parse_marker

REPO = "octo-org/demo"
FIRST, SECOND, OTHER, NAMED = 100, 110, 120, 130


def bundles() -> dict[int, dict]:
    out = {}
    for number, author, merged, body in (
        (FIRST, "alice", "2024-05-01T10:00:00Z", "Uploads failed for good on a transient 503."),
        (SECOND, "alice", "2024-05-04T22:00:00Z", "Uploads are retried a bit longer."),
        (OTHER, "bob", "2024-05-05T10:00:00Z", "Uploads are retried once more."),
        (NAMED, "cid", "2024-05-06T10:00:00Z", f"Follow-up to #{FIRST}: fewer retries.\n\nSee also other/lib#7."),
    ):
        bundle = made_up_fix(number, repo=REPO, author=author)
        bundle["pull"].update(merged_at=merged, body=body)
        out[number] = bundle
    return out


def guide_body(lb, number: int) -> str:
    (found,) = [c for c in lb.sandbox.comments(REPO, number) if c.user == "prguide[bot]" and parse_marker(c.body)]
    return found.body


async def merge(lb, number: int) -> None:
    payload = lb.sandbox.state.pull_request_event(*REPO.split("/"), number)
    assert (await lb.deliver(payload, delivery=f"merge-{number}")).status == 202
    await wait_idle(lb.app)


async def test_a_pull_request_following_up_an_earlier_one_says_so(app_private_key, tmp_path):  # noqa: F811
    async with start_loopback(app_private_key, tmp_path, bundles()) as lb:
        for number in (FIRST, SECOND, OTHER, NAMED):
            await merge(lb, number)
        assert "Follows" not in guide_body(lb, FIRST)
        assert f"Follows #{FIRST} by the same author (merged 3 days earlier): both change `send`." in guide_body(lb, SECOND)
        assert "Follows" not in guide_body(lb, OTHER)  # another author's change of the same function
        named = guide_body(lb, NAMED)
        assert f"Follows up #{FIRST}, as the description says (“Follow-up to #{FIRST}”); both change `send`." in named
        stored = lb.state.services.guides.get(REPO, SECOND)
        assert stored["follows"]["number"] == FIRST and stored["follows"]["shared"] == ["verl/utils/upload.py::send"]
        assert f"本 PR 接续同一作者的 #{FIRST}" in stored["languages"]["zh"]["markdown"]
