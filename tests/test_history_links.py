"""Ranking the pull requests that wrote a fix's lines, and the description's named culprit (bot.engine.history.links)."""

from __future__ import annotations

from bot.engine.history.lines import ChangedLine
from bot.engine.history.links import describe, dominant, find_link, named_culprits, rank
from bot.engine.history.model import Candidate, HistoryFacts, LineOrigin, PullOrigin
from bot.engine.snapshot import PullRequestSnapshot

DAY = 86400
MERGED = "2024-03-10T12:00:00Z"
MERGED_TS = 1710072000


def lines(*specs: tuple[str, int]) -> list[ChangedLine]:
    return [ChangedLine(path, n, f"code {n}", path) for path, n in specs]


def facts(origins: dict[tuple[str, int], int | None], *, days_before: int = 9) -> HistoryFacts:
    pulls = {
        n: PullOrigin(n, f"{n:040d}", MERGED_TS - days_before * DAY - n, f"dev{n}", f"Change {n}")
        for n in {v for v in origins.values() if v is not None}
    }
    made = tuple(LineOrigin(p, ln, f"{n:040d}" if n else "", n) for (p, ln), n in origins.items())
    return HistoryFacts("ok", made, pulls)


def snapshot(body: str = "", number: int = 50) -> PullRequestSnapshot:
    return PullRequestSnapshot(repository="acme/widgets", number=number, title="fix: x", body=body, merged_at=MERGED)


def test_candidates_are_ranked_by_lines_written_and_old_lines_only_count_in_the_total():
    ls = lines(("a.py", 1), ("a.py", 2), ("b.py", 7), ("a.py", 3))
    ranked = rank(ls, facts({("a.py", 1): 12, ("a.py", 2): 12, ("b.py", 7): 30, ("a.py", 3): None}))
    assert [(c.number, c.lines, c.total) for c in ranked] == [(12, 2, 4), (30, 1, 4)]
    assert ranked[0].paths == ("a.py",)


def test_the_pull_request_itself_never_counts_as_a_candidate():
    assert rank(lines(("a.py", 1)), facts({("a.py", 1): 50}), own=50) == ()


def test_a_top_candidate_is_named_only_when_it_clearly_dominates():
    assert dominant([Candidate(12, 3, 4, ("a.py",)), Candidate(30, 1, 4, ("b.py",))]).number == 12
    assert dominant([Candidate(12, 2, 4, ("a.py",)), Candidate(30, 2, 4, ("b.py",))]) is None  # a tie
    assert dominant([Candidate(12, 2, 5, ("a.py",))]) is None  # most lines are older than the search
    assert dominant([Candidate(12, 3, 5, ("a.py",)), Candidate(30, 2, 5, ("b.py",))]) is None  # not twice the runner-up
    assert dominant([]) is None


def test_find_link_gives_the_origin_days_and_evidence_lines_of_the_main_file_first():
    ls = lines(("b.py", 9), ("a.py", 1), ("a.py", 2))
    link = find_link(snapshot(), ls, facts({("b.py", 9): 12, ("a.py", 1): 12, ("a.py", 2): 12}), fix=True)
    assert link.top is not None and link.top.number == 12 and link.top.share == 1.0
    assert link.origin.author == "dev12" and link.days == 9
    assert [(e[0], e[1]) for e in link.evidence] == [("a.py", 1), ("a.py", 2), ("b.py", 9)]
    assert describe(link)["fixes_code_from"] == 12


def test_unavailable_history_names_nobody_but_still_lists_the_description_claim():
    link = find_link(snapshot("This fixes a bug introduced in #7."), lines(("a.py", 1)), HistoryFacts("shallow"), fix=True)
    assert link.top is None and link.candidates == ()
    assert [(n.number, n.lines) for n in link.named] == [(7, 0)]


def test_named_culprit_is_checked_against_the_blame():
    body = "Fixes a regression from #12; see also #30."
    link = find_link(snapshot(body), lines(("a.py", 1), ("a.py", 2)), facts({("a.py", 1): 12, ("a.py", 2): 12}), fix=True)
    assert [(n.number, n.lines, n.total) for n in link.named] == [(12, 2, 2)]


def test_description_phrases_that_name_a_culprit():
    cases = {
        "This PR fixes a bug introduced in #5718 where": [5718],
        "#7205 will cause hccl error": [7205],
        "https://github.com/acme/widgets/pull/7413 introduced a regression.": [7413],
        "fix: pre-commit broken by #2354": [2354],
        "Fixed regression from:\n - https://github.com/old-owner/widgets/pull/1668": [1668],
        "CI patterns outdated since #1392": [1392],
        "caused by [ #1212].": [1212],
        "Handle comments after #1397 being merged": [],
        "Related to #44, similar to #45": [],
        "introduced in https://github.com/other/project/pull/5": [],
        "introduced in #50 (this one)": [],
    }
    for body, expected in cases.items():
        assert [n for n, _ in named_culprits(body, "acme/widgets", 50)] == expected, body


def test_lines_the_fix_moved_elsewhere_count_in_the_shares_but_name_nobody():
    ls = lines(("a.py", 1), ("a.py", 2), ("a.py", 3))
    blamed = facts({("a.py", 1): 12, ("a.py", 2): 12, ("a.py", 3): 30})
    assert find_link(snapshot(), ls, blamed, fix=True).top.number == 12  # 2 of 3
    moved = find_link(snapshot(), ls, blamed, fix=True, relocated=2)
    assert moved.top is None and [(c.number, c.lines, c.total) for c in moved.candidates] == [(12, 2, 5), (30, 1, 5)]
    assert rank(ls, facts({}), relocated=2) == ()  # nothing blamed: the moved lines alone say nothing


def test_fallback_lines_name_a_pull_request_only_when_it_wrote_all_of_them():
    two = lines(("ci.yml", 1), ("ci.yml", 2))
    assert find_link(snapshot(), two, facts({("ci.yml", 1): 12, ("ci.yml", 2): 12}), fix=True, unanimous=True).top.number == 12
    assert find_link(snapshot(), lines(("ci.yml", 1)), facts({("ci.yml", 1): 12}), fix=True, unanimous=True).top is None  # one line
    three = lines(("ci.yml", 1), ("ci.yml", 2), ("ci.yml", 3))
    mixed = facts({("ci.yml", 1): 12, ("ci.yml", 2): 12, ("ci.yml", 3): None})
    assert find_link(snapshot(), three, mixed, fix=True).top.number == 12  # 2 of 3 dominate...
    assert find_link(snapshot(), three, mixed, fix=True, unanimous=True).top is None  # ... but are not all
    around = find_link(snapshot(), two, facts({("ci.yml", 1): 12, ("ci.yml", 2): 12}), fix=True, unanimous=True, adds_only=True)
    assert around.adds_only and describe(around)["adds_only"] is True
