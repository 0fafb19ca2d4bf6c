"""Round 4 of the hunt: "Follows #N", the tag view's fix links and their migration, the app's
blame with ``.git-blame-ignore-revs``, attacked with hostile text, huge inputs and GitHub faults.

Each test fails on the code as merged (59c7912) and passes with its fix."""

from __future__ import annotations

import shutil
import sqlite3
import sys

import pytest
from step_count import line_events
from loopback import pr_delivery
from sandbox_helpers import app_private_key  # noqa: F401
from test_blame_sandbox import app_on_repo, graphql_calls

from bot.app import blame
from bot.app.blame import facts_from_answers
from bot.engine.history import follows
from bot.engine.history.follows import named_predecessors
from bot.engine.history.lines import ChangedLine

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


# --- "Follows #N": whose pull request a reference names -------------------------------------


def test_a_fork_s_pull_request_is_not_this_repository_s():
    """A fork has the upstream's name: ``alice/verl#12`` is alice's pull request 12, not #12 here."""
    assert named_predecessors("Follow-up to alice/verl#12.", "volcengine/verl", 99) == []
    assert named_predecessors("Follow-up to https://github.com/alice/verl/pull/12", "volcengine/verl", 99) == []
    # This repository's own long forms still count, whatever their case.
    assert [n for n, _ in named_predecessors("Follow-up to Volcengine/verl#12.", "volcengine/verl", 99)] == [12]
    assert [n for n, _ in named_predecessors("follow-up to https://github.com/volcengine/verl/pull/12", "volcengine/verl", 99)] == [12]


def test_only_ascii_digits_make_a_reference():
    """GitHub links ``#12``, never ``#１２`` (full-width) or ``#١٢`` (Arabic-Indic): no "Follows #12" from them."""
    assert named_predecessors("Follow-up to #１２", "o/r", 99) == []
    assert named_predecessors("Follow-up to #١٢", "o/r", 99) == []
    assert named_predecessors("跟进 #１２", "o/r", 99) == []
    assert [n for n, _ in named_predecessors("Follow-up to #12", "o/r", 99)] == [12]


def test_struck_through_or_quoted_as_code_a_phrase_says_nothing():
    """"~~Follow-up to #12~~ Follow-up to #13": the author took #12 back, and the guide said
    "Follows #12"; a phrase in inline code is quoted as words (a template's instructions)."""
    assert [n for n, _ in named_predecessors("~~Follow-up to #12~~ Follow-up to #13", "o/r", 99)] == [13]
    assert named_predecessors("Write `follow-up to #12` in the description to link one.", "o/r", 99) == []
    assert named_predecessors("~~old~~ and ``follow-up to #12``", "o/r", 99) == []
    # An unpaired backtick hides nothing.
    assert [n for n, _ in named_predecessors("``a` follow-up to #12", "o/r", 99)] == [12]


def test_number_zero_is_no_pull_request():
    assert named_predecessors("Follow-up to #0", "o/r", 99) == []


class _CountingFence:
    """Stands in for ``follows._FENCE``: counts the characters its ``finditer`` is asked to scan."""

    def __init__(self, pattern):
        self.pattern, self.scanned = pattern, 0

    def finditer(self, text, pos=0, endpos=sys.maxsize):
        self.scanned += min(endpos, len(text)) - pos
        return self.pattern.finditer(text, pos, endpos)


@pytest.mark.parametrize("opening", ["", "```\n```\n", "<!--\n"], ids=["plain", "fences", "comment"])
def test_a_hostile_description_is_scanned_for_hidden_parts_once(monkeypatch, opening):
    """5,000 phrases in a 65,536-character description (GitHub's limit): each match looked for
    fences from the text's start (2 s of CPU per description); the whole text is read once."""
    counting = _CountingFence(follows._FENCE)
    monkeypatch.setattr(follows, "_FENCE", counting)
    body = (opening + "follow up #7\n" * 5100)[:65536]
    assert [n for n, _ in named_predecessors(body, "o/r", 99)] == [7]  # an unclosed comment hides nothing
    assert counting.scanned <= 2 * len(body)


def test_hidden_parts_are_judged_as_before():
    """The one-pass reading hides what the per-match one hid."""
    body = "> follow-up to #1\n```\nfollow-up to #2\n```\n<!-- follow-up to #3 -->\nfollow-up to #4\n~~~\nfollow-up to #5\n"
    assert [n for n, _ in named_predecessors(body, "o/r", 99)] == [4]
    assert [n for n, _ in named_predecessors("<!-- a hint left open\nfollow-up to #6", "o/r", 99)] == [6]


# --- the app's blame: cost on huge answers and hostile ignore files ----------------------------


def _line_events(fn) -> int:
    """Python line events run in :mod:`bot.app.blame` while ``fn()`` runs (a step count, not a time)."""
    return line_events(blame.__file__, fn)


def _answer(n: int):
    commit = {"oid": "c" * 40, "committedDate": "2024-05-01T00:00:00Z", "author": {"name": "Ann"},
              "associatedPullRequests": {"nodes": [{"number": 5, "title": "t", "mergedAt": "2024-05-01T00:00:00Z"}]}}  # fmt: skip
    ranges = [{"startingLine": i, "endingLine": i, "commit": commit} for i in range(1, n + 1)]
    parent = {"oid": "p", "committedDate": "2024-06-01T00:00:00Z", "associatedPullRequests": {"nodes": []}, "f0": {"ranges": ranges}}
    lines = [ChangedLine("big.py", i, "x = 1", "big.py") for i in range(1, n + 1)]
    ignored = tuple(f"{i:07x}" for i in range(n))  # a long listing of sweeps none of these lines is from
    return [(["big.py"], {"parents": {"nodes": [parent]}})], lines, ignored


def test_blame_answers_cost_steps_in_proportion_to_their_size():
    """A pull request deleting a 20,000-line file, blamed in 2,000+ ranges, with a 512 KiB ignore
    file (65,000 hashes): each range was checked against every line and each line against every
    listed hash (10^9 steps on the event loop). Four times the input may cost about four times the steps."""
    small, big = _answer(100), _answer(400)
    steps_small = _line_events(lambda: facts_from_answers(small[0], small[1], own=10, ignored=small[2]))
    steps_big = _line_events(lambda: facts_from_answers(big[0], big[1], own=10, ignored=big[2]))
    facts = facts_from_answers(big[0], big[1], own=10, ignored=big[2])
    assert len(facts.origins) == 400 and {o.pull for o in facts.origins} == {5}
    assert steps_big <= 6 * steps_small, (steps_small, steps_big)


@needs_git
@pytest.mark.parametrize(
    "fault",
    [
        {"method": "POST", "path": "^/graphql", "status": 502, "times": None},
        {"method": "POST", "path": "^/graphql", "status": 403, "retry_after": 1, "times": None,
         "message": "You have exceeded a secondary rate limit"},
    ],
    ids=["bad-gateway", "secondary-rate-limit"],
)  # fmt: skip
async def test_a_failing_graphql_endpoint_costs_at_most_three_requests(app_private_key, tmp_path, fault):  # noqa: F811
    """A blame is an extra: a GraphQL endpoint answering 502 (or a secondary rate limit) each
    time was asked 4 times per batch (the client's retries), past the cap of 3 extra requests."""
    from bot.app.server import wait_idle

    async with app_on_repo(app_private_key, tmp_path) as (lb, name, bundles):
        lb.sandbox.add_faults([fault])
        assert (await lb.deliver(pr_delivery(bundles[3]), delivery="fix-1")).status == 202
        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 3)
        assert "were written in" not in comment.body and lb.jobs().get("done") == 1
        assert 1 <= len(graphql_calls(lb.sandbox)) <= 3, [r["status"] for r in graphql_calls(lb.sandbox)]


# --- the tag view's migration 6 on an existing database ----------------------------------------


def test_migration_6_survives_a_damaged_guide_row(tmp_path):
    """A fix whose stored data is not JSON (dbcopy names such rows "damaged"): ``json_extract``
    raised "malformed JSON", migration 6 failed and the tag view could not open its database."""
    from bot.app.db import migrate
    from bot.tagview.schema import COMPONENT, migrations
    from bot.tagview.store import GuideStore

    conn = sqlite3.connect(tmp_path / "old.db")
    migrate(conn, COMPONENT, migrations()[:5])
    rows = [(1, "fix", '{"change_type": "fix", "history": {"fixes_code_from": 7}}'), (2, "fix", '{"change_type": "fix", "hist')]
    for number, kind, data in rows:
        conn.execute(
            "INSERT INTO tagview_guides (repository, number, title, change_type, stored_at) VALUES ('acme/rocket', ?, 't', ?, '2026-01-01T00:00:00Z')",
            (number, kind),
        )
        conn.execute("INSERT INTO tagview_guide_data (guide_id, data) VALUES ((SELECT id FROM tagview_guides WHERE number = ?), ?)", (number, data))
    conn.commit()
    conn.close()
    with GuideStore(tmp_path / "old.db") as s:
        found = dict(s.connection.execute("SELECT number, fixes_from FROM tagview_guides").fetchall())
    assert found == {1: 7, 2: None}


# --- the tag view: links to an origin that is not stored --------------------------------------


async def test_a_fix_s_entry_does_not_link_to_a_guide_that_is_not_stored(tmp_path):
    from test_tagview_fix_links import fill
    from test_tagview_web import client_for

    from bot.tagview.store import GuideStore

    with GuideStore(tmp_path / "prguide.db") as store:
        fill(store)  # #16 fixes code from #99, which is not stored
        client = await client_for(store)
        try:
            assert (await client.get("/repos/acme/rocket/pulls/99/guide")).status == 404
            html = await (await client.get("/repos/acme/rocket/tags")).text()
            assert 'data-number="16"' in html or "/pulls/16/guide" in html
            assert "/pulls/99/guide" not in html
        finally:
            await client.close()


# --- the lines around insertions on a huge hunk --------------------------------------------------


class _CountingRows(list):
    """A hunk's rows that count how many of them are read (one by one or in slices)."""

    read = 0

    def __getitem__(self, key):
        got = super().__getitem__(key)
        _CountingRows.read += len(got) if isinstance(key, slice) else 1
        return got

    def __iter__(self):
        for item in super().__iter__():
            _CountingRows.read += 1
            yield item


def test_the_lines_around_one_insertion_are_found_without_reading_the_whole_hunk():
    """A pull request adding one line after each of 20,000 lines: each insertion copied the rows
    before and after it (6 s for one file, run on the app's event loop before the blame)."""
    from bot.engine.analysis.patch import parse_patch
    from bot.engine.history.lines import _around, insertion_context
    from bot.engine.snapshot import ChangedFile

    n = 2000
    patch = f"@@ -1,{n} +1,{2 * n} @@\n" + "".join(f" x{i} = {i}\n+y{i} = {i}\n" for i in range(n))
    (hunk,) = parse_patch(patch)
    rows = _CountingRows(hunk.lines)
    meaningful = {id(d) for d in hunk.lines}
    _CountingRows.read = 0
    around = _around(rows, n + 1, n + 2, meaningful, 3, None)  # the insertion in the middle
    assert [d.text for d in around] == [f"x{n // 2} = {n // 2}", f"x{n // 2 + 1} = {n // 2 + 1}"]
    assert _CountingRows.read <= 20
    lines = insertion_context([ChangedFile("big.py", status="modified", additions=n, deletions=0, patch=patch)])
    assert len(lines) == n


# --- the offline blame: a hostile .git-blame-ignore-revs -------------------------------------------


@needs_git
def test_one_revision_listed_many_ways_is_ignored_once(tmp_path):
    """A listing of one commit by each of its prefixes (7 to 40 digits, in either case) gave 34
    ``--ignore-rev`` arguments for it: a few thousand commits listed so make the blame's
    command line too long for the system (``E2BIG``) and every file's blame fail."""
    from git_helpers import Repo

    from bot.sources.gitblame import ignored_revisions
    from bot.sources.gitrun import open_repository

    r = Repo(tmp_path / "r")
    r.write("a.py", "x = 1\n")
    sweep = r.commit("Sweep (#1)")
    listing = "".join(f"{sweep[:n]}\n{sweep[:n].upper()}\n" for n in range(7, 41)) + "--help\n-L1,1\n../x\n"
    r.write(".git-blame-ignore-revs", listing)
    r.commit("List it (#2)")
    assert ignored_revisions(open_repository(r.path), "HEAD") == [sweep]
