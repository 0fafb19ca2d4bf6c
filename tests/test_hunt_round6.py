"""Round 6 of the hunt: the tags page's label pages, the fix-origin links of tag-view entries,
the blame's drift check (each blamed file read at the merge's parent) and the description
parser's newest rules, attacked as an attacker and as an unlucky operator.

Each test fails on the code as merged (054fd9b) and passes with its fix, or is marked
``xfail(strict=True)`` with the reason it is not fixed here."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from step_count import line_events
from pg_helpers import pg_url  # noqa: F401 - fixture

# --- the tags page: a page number past 64-bit offsets ---------------------------------------------

#: Pages whose offset ((page - 1) x the page size) is past a signed 64-bit integer.
HUGE_PAGES = ("9223372036854775807", "4611686018427387905", "99999999999999999999999")


def _store(backend: str, tmp_path, request):
    from bot.tagview.store import GuideStore

    if backend == "sqlite":
        return GuideStore(tmp_path / "pages.db")
    from bot.tagview.pgstore import PgGuideStore

    return PgGuideStore.open(request.getfixturevalue("pg_url"))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_page_number_past_64_bit_offsets_is_a_bad_request_not_a_500_or_an_outage(tmp_path, request, backend):
    """``?page=9223372036854775807`` (any caller, no token needed on a public repository) made an
    ``OFFSET`` past a 64-bit integer: SQLite raised ``OverflowError`` (a 500 with a traceback
    in the log) and PostgreSQL ``bigint out of range`` (a 503 with ``Retry-After``: the
    database reported down to monitoring) on the tags page filtered or of one label, and on
    ``tags.json``. A page is at most ``MAX_PAGE``; past it the answer is a 400, on both
    backends. Digits of other scripts and ``+2``/``1_0`` are no page number either."""
    from test_tagview_store import make_guide
    from test_tagview_web import client_for

    with _store(backend, tmp_path, request) as store:
        for number in (1, 2, 3):
            store.save(make_guide(number), visibility="public")
        c = await client_for(store, rows_per_label=2, page_entries=2, page_size=2)
        try:
            for page in HUGE_PAGES:
                for path in ("tags?page=", "tags?q=thing&page=", "tags?label=bug&page=", "tags.json?page=",
                             "tags.json?per_page=2&label=bug&page="):  # fmt: skip
                    response = await c.get(f"/repos/acme/rocket/{path}{page}")
                    assert response.status == 400, (path, page, response.status)
            for page in ("١٢", "%2B2", "1_0", "0", "-1", "9" * 5000):  # (%2B: a literal "+"; "+" is a space)
                assert (await c.get(f"/repos/acme/rocket/tags?page={page}")).status == 400, page
            # The largest page (web.MAX_PAGE) is past the last one: an empty page, not an error.
            for path in ("tags?page=", "tags?q=thing&page=", "tags?label=bug&page=", "tags.json?page="):
                assert (await c.get(f"/repos/acme/rocket/{path}1000000")).status == 200, path
            assert (await c.get("/repos/acme/rocket/tags.json?per_page=" + "9" * 30)).status == 200  # lowered to 100
        finally:
            await c.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_store_refuses_an_offset_past_64_bits_as_a_bad_value(tmp_path, request, backend):
    """The stores' own check said only ``offset >= 0``: a caller's huge offset failed as a database
    error would (``OverflowError``, ``psycopg.DataError``), not as the ``ValueError`` of a bad value."""
    from test_tagview_store import make_guide

    from bot.tagview.model import GuideFilter

    with _store(backend, tmp_path, request) as store:
        store.save(make_guide(1), visibility="public")
        for call in (
            lambda: store.query("acme/rocket", limit=10, offset=2**63),
            lambda: store.section_page("acme/rocket", limit=10, offset=2**63),
            lambda: store.section_page("acme/rocket", GuideFilter(search="thing"), limit=10, offset=2**63),
        ):
            with pytest.raises(ValueError):
                call()



async def test_the_tags_page_stays_bounded_however_many_labels_its_filter_form_offers(tmp_path):
    """``page_entries`` bounds the sections (30 entries here), but the filter form's label and
    area lists offer every label and area: 3,000 of each made a 344 KB page of 6,000
    ``<option>`` elements per request (pages 2, 3... and one label's page alike), read and
    rendered each time. The form now offers the most used ``form_options`` (50) labels and areas
    and the ones selected, so the page stays about the same size however many labels there are."""
    from test_tagview_store import make_guide
    from test_tagview_web import client_for

    from bot.tagview.store import GuideStore

    with GuideStore(tmp_path / "labels.db") as store:
        for i in range(1, 401):
            label = f"label-{i:05d}"
            store.save(make_guide(i, labels=[label], label_details=[{"name": label, "source": "rule", "rule": "r"}],
                                  areas=[f"area-{i}"]), visibility="public")  # fmt: skip
        c = await client_for(store, page_entries=30)
        try:
            html = await (await c.get("/repos/acme/rocket/tags?page=2")).text()
        finally:
            await c.close()
    assert html.count("<option") <= 4 * 30, html.count("<option")

def _labelled(number: int, label: str, area: str) -> dict:
    from test_tagview_store import make_guide

    return make_guide(number, labels=[label], label_details=[{"name": label, "source": "rule", "rule": "r"}], areas=[area])


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_stores_give_the_most_used_labels_and_areas_and_the_one_asked_for(tmp_path, request, backend):
    """The filter form's options, read by a bounded query on both backends: the ``limit`` most
    used (then by name), plus the one ``include`` names (any case) when it is stored, by name."""
    with _store(backend, tmp_path, request) as store:
        counts = {"common": 3, "Middle": 2, "rare": 1, "also-rare": 1}
        number = 0
        for label, count in counts.items():
            for _ in range(count):
                number += 1
                store.save(_labelled(number, label, f"area-{label}"), visibility="public")
        top = store.labels("acme/rocket", limit=2)
        assert [(o.name, o.count) for o in top] == [("common", 3), ("Middle", 2)]
        assert [o.name for o in store.labels("acme/rocket", limit=2, include="RARE")] == ["common", "Middle", "rare"]
        assert [o.name for o in store.labels("acme/rocket", limit=2, include="middle")] == ["common", "Middle"]
        assert [o.name for o in store.labels("acme/rocket", limit=2, include="nowhere")] == ["common", "Middle"]
        assert [o.name for o in store.labels("acme/rocket")] == ["also-rare", "common", "Middle", "rare"]  # unbounded, as before
        assert store.label_count("acme/rocket") == 4
        assert store.areas("acme/rocket", limit=1, include="area-rare") == [("area-common", 3), ("area-rare", 1)]
        assert len(store.areas("acme/rocket")) == 4


async def test_a_label_past_the_form_s_options_is_offered_when_selected_and_still_filters(tmp_path):
    """A label not among the most used is still the form's selected option on its page, and
    ``?label=`` still filters on it; the labels past the bound are not offered otherwise."""
    from test_tagview_web import client_for

    from bot.tagview.store import GuideStore

    with GuideStore(tmp_path / "labels.db") as store:
        for i in range(1, 5):
            store.save(_labelled(i, "common", "core"), visibility="public")
        store.save(_labelled(5, "rare-one", "edge"), visibility="public")
        c = await client_for(store, form_options=1)
        try:
            everything = await (await c.get("/repos/acme/rocket/tags")).text()
            rare = await (await c.get("/repos/acme/rocket/tags?label=rare-one")).text()
        finally:
            await c.close()
    assert '<option value="common"' in everything and '<option value="rare-one"' not in everything
    assert '<option value="rare-one" selected>' in rare
    assert "/pull/5" in rare and "/pull/1\"" not in rare


# --- the blame's drift check ----------------------------------------------------------------------


def _drift_line_events(fn) -> int:
    """Python line events run in :mod:`bot.engine.history.drift` while ``fn()`` runs (a step count, not a time)."""
    from bot.engine.history import drift

    return line_events(drift.__file__, fn)


def test_a_hostile_patch_costs_the_drift_check_a_bounded_number_of_places():
    """A patch of many hunks, each of lines the file at the parent holds 200 times (the most a
    hunk is looked for at) without the hunk: every hunk compared 200 places. 1,000 hunks cost
    200,000 comparisons on the app's event loop per file (a 1.8 MB patch: 1.4 s per file, ten
    files per pull request). The places compared per file are bounded (``MAX_PLACES``);
    hunks past them place no line."""
    from bot.engine.history.drift import lines_at_parent

    block = ["a", "b", "c", "d", "e", "f", "g"]
    parent = "".join("\n".join([*block[:-1], f"s{i}", "g"]) + "\n" for i in range(200))
    hunks = [f"@@ -{1 + 8 * h},7 +{1 + 8 * h},6 @@\n a\n b\n c\n-d\n e\n f\n g" for h in range(1000)]
    steps = _drift_line_events(lambda: lines_at_parent("\n".join(hunks), parent))
    assert steps <= 4 * 20_000 + 20 * len(hunks), steps  # drift.MAX_PLACES
    # A file the base branch left alone is still read whole.
    text = "".join(f"line {i}\n" for i in range(1, 3001))
    patch = "\n".join(f"@@ -{n},3 +{n},3 @@\n line {n}\n-line {n + 1}\n+changed {n + 1}\n line {n + 2}" for n in range(1, 3000, 10))
    assert len(lines_at_parent(patch, text)) == 3 * 300


def test_a_hunk_the_base_branch_changed_is_not_placed_at_an_identical_copy():
    """The file holds one block twice; the pull request changes the middle line of the first copy
    (its patch's old side is the whole block: three lines of context each side); meanwhile the
    base branch edits the first copy's top line, three lines away (no merge conflict). At the
    parent the old side is found once, at the second copy, so the lines are blamed there and
    the guide names whoever wrote the second copy as the author of the lines the fix changed.
    The changed line with its neighbours (``c``, ``d``, ``e``: lines a merge would have
    conflicted on) is still in the first copy: it is there twice, so no telling which."""
    from bot.engine.history.drift import lines_at_parent

    block = ["a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6", "g = 7"]
    patch = "@@ -2,7 +2,7 @@\n a = 1\n b = 2\n c = 3\n-d = 4\n+d = 40\n e = 5\n f = 6\n g = 7"
    parent = "\n".join(["# head", "a = 100", *block[1:], "# middle", *block, "# tail"]) + "\n"
    placed = lines_at_parent(patch, parent)
    assert placed.get(5) in (None, 5), placed  # the first copy's line 5, or nothing; never the copy's 13
    # A hunk moved by lines the base branch put above it is still found where it is.
    assert lines_at_parent(patch, "\n".join(["# new", "# header", "# head", *block, "# tail"]) + "\n") == {
        n: n + 2 for n in range(2, 9)
    }
    # ... and so is one whose copy lacks the lines by the change (the copy is not the same block).
    other = ["a = 1", "b = 2", "x = 3", "d = 4", "e = 5", "f = 6", "g = 7"]
    assert lines_at_parent(patch, "\n".join(["# more", "# head", *block, "# middle", *other]) + "\n") == {
        n: n + 1 for n in range(2, 9)
    }


class _OneAnswer:
    """A GraphQL client answering every query with ``answer``."""

    api_url = "https://api.github.com"

    def __init__(self, answer: dict[str, Any]):
        self.answer = answer
        self.calls = 0
        self.queries: list[str] = []

    async def post(self, url: str, *, data: Any, optional: bool) -> Any:
        self.calls += 1
        self.queries.append(data["query"])
        return self.answer


def test_an_error_about_one_file_s_blame_keeps_the_other_files():
    """Five files per request; one of them cannot be blamed at the parent (the base branch
    renamed it since the merge base: ``NOT_FOUND``). GitHub nulls the non-null field's parent,
    which was the commit holding every file's blame, so the blame of the four others was lost
    with it and the guide said nothing of who wrote the lines. Each file's blame is now under
    an object of its own (``fN``): the error nulls that file's alone."""
    from test_blame_drift import MODULE, PATCH

    from bot.app.blame import fetch_blame
    from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

    files = (ChangedFile("a.py", "modified", 3, 3, PATCH), ChangedFile("b.py", "modified", 3, 3, PATCH))
    snapshot = PullRequestSnapshot(repository="o/r", number=9, title="fix: limits", files=files, merge_commit_sha="c" * 40)
    blob = {"text": MODULE, "isTruncated": False, "isBinary": False}
    pull = {"number": 1, "title": "Add the limit", "mergedAt": "2024-05-01T00:00:00Z", "author": {"login": "ann"}}
    commit = {"oid": "a" * 40, "committedDate": "2024-05-01T00:00:00Z", "author": {"name": "Ann", "user": None},
              "associatedPullRequests": {"nodes": [pull]}}
    parent = {"oid": "p" * 40, "committedDate": "2024-06-01T00:00:00Z", "associatedPullRequests": {"nodes": []}}
    blame = {"ranges": [{"startingLine": 1, "endingLine": 8, "age": 1, "commit": commit}]}
    answer = {
        "data": {"repository": {"ignoreRevs": None, "t0": blob, "t1": blob, "f0": {"blame": blame}, "f1": None,
                                "object": {"parents": {"nodes": [parent]}}}},
        "errors": [{"type": "NOT_FOUND", "path": ["repository", "f1", "blame"],
                    "message": "Could not resolve file for path 'b.py'."}],
    }  # fmt: skip
    client = _OneAnswer(answer)
    facts = asyncio.run(fetch_blame(client, snapshot))
    assert client.calls == 1
    assert facts is not None and {o.path for o in facts.origins} == {"a.py"}
    assert {(o.line, o.pull) for o in facts.origins} == {(2, 1), (3, 1), (4, 1)}
    # Each file's blame sits under an object of its own in the query: none shares the commit.
    query = client.queries[0]
    assert "f0: object(expression: $parent)" in query and "f1: object(expression: $parent)" in query


# --- the description: quoted text is the author's only over the template's quote ------------------


@pytest.mark.parametrize(
    "body",
    [
        # The report, quoted after the author's own words: the bug, not the change.
        "### What does this PR do?\n\nFixes #12.\n\n> Calling `compute_limit` from run0 now crashes the server.\n",
        # A quote opening a description without the template.
        "> Calling `compute_limit` from run0 now crashes the server.\n\nThis PR fixes that.",
        # A quote in the design section.
        "### Design & Code Changes\n\n> `compute_limit` in run0 now returns None for every input.\n",
    ],
)
def test_a_quoted_bug_report_is_not_the_guide_s_summary(body):
    """Since quotes were read as the author's words (authors write over the template's
    ``> Add concise overview …`` and keep its marker), a quoted issue report became the
    purpose, and the guide's summary said the bug as what the change does ("Calling
    compute_limit from run0 now crashes the server."). A quote is the author's only where
    the template's quote was: opening the "What does this PR do?" section."""
    from loopback import shipped_rules

    from bot.engine.analysis.description import parse_description
    from bot.engine.build import build_guide
    from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

    assert parse_description(body).purpose == ""
    lines = "\n".join(f"+    run{i}_{n} = compute_limit({n})" for i in range(1) for n in range(40))
    files = tuple(
        ChangedFile(f"pkg/mod{i}.py", "modified", 40, 0, f"@@ -1,2 +1,42 @@\n def run{i}():\n{lines}\n     return None\n")
        for i in range(4)
    )
    snapshot = PullRequestSnapshot(repository="o/r", number=1, title="fix: caps", body=body, changed_files=4,
                                   additions=160, deletions=0, files=files)  # fmt: skip
    assert "crashes" not in str(build_guide(snapshot, shipped_rules()).data.get("summary"))
    # Over the template's quote, the author's words still are the purpose.
    own = "### What does this PR do?\n\n> Makes `compute_limit` cap values so run0 never overflows.\n\nFixes #12."
    assert parse_description(own).purpose == "Makes `compute_limit` cap values so run0 never overflows."
