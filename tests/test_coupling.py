"""Change coupling (bot.engine.history.coupling): which files usually change with a pull
request's files, counted on small made-up histories, and the replay that decides whether a
repository's guides name them at all."""

from __future__ import annotations

from dataclasses import replace

from bot.engine.history.coupling import (
    GRID,
    LOOSEST,
    Horizon,
    MergedChange,
    Thresholds,
    calibrate,
    earlier,
    followed_up,
    merged_change,
    replay,
    usual_partners,
)
from bot.engine.snapshot import ChangedFile

FIVE_AT_60 = Thresholds(min_changes=5, min_share=0.6)


def history(*path_sets: tuple[str, ...], start: int = 1) -> list[MergedChange]:
    return [MergedChange(start + i, tuple(paths)) for i, paths in enumerate(path_sets)]


def test_a_partner_changed_in_most_of_the_files_last_changes_is_named_with_its_counts():
    past = history(*([("src/config.py", "conf/trainer.yaml")] * 7), ("src/config.py",), ("src/config.py", "README.txt"))
    (found,) = usual_partners(["src/config.py"], past, thresholds=FIVE_AT_60)
    assert (found.file, found.partner, found.together, found.changes) == ("src/config.py", "conf/trainer.yaml", 7, 9)
    assert found.numbers == (7, 6, 5, 4, 3, 2, 1)  # newest first


def test_support_confidence_and_window_decide():
    four = history(*([("a.py", "b.py")] * 4))
    assert usual_partners(["a.py"], four, thresholds=FIVE_AT_60) == ()  # 4 changes: under the support
    assert usual_partners(["a.py"], four, thresholds=replace(FIVE_AT_60, min_changes=4))
    half = history(*([("a.py", "b.py")] * 5 + [("a.py",)] * 5))
    assert usual_partners(["a.py"], half, thresholds=FIVE_AT_60) == ()  # 5 of 10 < 60 %
    assert usual_partners(["a.py"], half, thresholds=replace(FIVE_AT_60, min_share=0.5))
    # An old habit fades: only the file's last ``window`` changes count.
    faded = history(*([("a.py", "b.py")] * 10 + [("a.py",)] * 10))
    assert usual_partners(["a.py"], faded, thresholds=FIVE_AT_60) == ()
    assert usual_partners(["a.py"], faded, thresholds=replace(FIVE_AT_60, window=20, min_share=0.5))
    # 7 of 10 passes a 0.7 confidence although 7 / 10 < 0.7 in binary floating point.
    seven = history(*([("a.py", "b.py")] * 7 + [("a.py",)] * 3))
    assert usual_partners(["a.py"], seven, thresholds=replace(FIVE_AT_60, min_share=0.7))


def test_a_partner_this_pr_touched_or_that_is_gone_is_not_named():
    past = history(*([("a.py", "b.py", "c.py")] * 6))
    names = {p.partner for p in usual_partners(["a.py", "b.py"], past, thresholds=FIVE_AT_60, limit=5)}
    assert "b.py" not in names and "c.py" in names
    removed = past + [MergedChange(99, ("c.py",), gone=("c.py",))]
    assert {p.partner for p in usual_partners(["a.py"], removed, thresholds=FIVE_AT_60, limit=5)} == {"b.py"}
    renamed = past + [MergedChange(99, ("d.py",), gone=("c.py",))]
    assert {p.partner for p in usual_partners(["a.py"], renamed, thresholds=FIVE_AT_60, limit=5)} == {"b.py"}
    # Removed, then added back later: it exists again.
    back = removed + [MergedChange(100, ("c.py",))]
    assert "c.py" in {p.partner for p in usual_partners(["a.py"], back, thresholds=FIVE_AT_60, limit=5)}


def test_huge_pull_requests_are_not_counted_and_get_no_line():
    mass = tuple(f"f{i}.py" for i in range(60))
    past = history(*([("a.py", *mass)] * 8))
    assert usual_partners(["a.py"], past, thresholds=FIVE_AT_60) == ()
    small = history(*([("a.py", "b.py")] * 6))
    assert usual_partners(["a.py", *mass], small, thresholds=FIVE_AT_60) == ()  # this PR is itself a mass change


def test_tests_and_docs_are_not_named_unless_asked():
    past = history(*([("pkg/a.py", "tests/test_a.py", "docs/a.md", "pkg/b.py")] * 6))
    assert [p.partner for p in usual_partners(["pkg/a.py"], past, thresholds=FIVE_AT_60, limit=5)] == ["pkg/b.py"]
    kept = replace(FIVE_AT_60, skip_kinds=())
    assert {p.partner for p in usual_partners(["pkg/a.py"], past, thresholds=kept, limit=5)} == {
        "pkg/b.py", "tests/test_a.py", "docs/a.md"}


def test_each_partner_once_best_first_and_at_most_limit():
    past = history(*([("a.py", "x.py", "y.py")] * 6 + [("b.py", "x.py")] * 6 + [("a.py", "z.py")] * 2))
    found = usual_partners(["a.py", "b.py"], past, thresholds=FIVE_AT_60, limit=5)
    assert [(p.partner, p.file) for p in found] == [("x.py", "b.py"), ("x.py", "a.py")][:1] + [("y.py", "a.py")]
    assert len(usual_partners(["a.py", "b.py"], past, thresholds=FIVE_AT_60, limit=1)) == 1
    assert usual_partners(["a.py"], past, thresholds=FIVE_AT_60, limit=0) == ()


def test_own_entry_and_focal_files():
    past = history(*([("a.py", "b.py")] * 4))
    own = MergedChange(50, ("a.py", "b.py"))
    assert usual_partners(["a.py"], [*past, own], thresholds=FIVE_AT_60, own=50) == ()
    assert usual_partners(["a.py"], [*past, own], thresholds=FIVE_AT_60)  # counted when not said to be its own
    # A file the PR removed is touched but not looked at.
    assert usual_partners(["a.py"], past + [own], focal=[], thresholds=FIVE_AT_60) == ()


def test_earlier_keeps_what_was_merged_before():
    past = [MergedChange(1, ("a",), merged_at="2026-01-01T00:00:00Z"), MergedChange(3, ("a",), merged_at="2026-01-03T00:00:00Z"),
            MergedChange(2, ("a",), merged_at="2026-01-02T10:00:00+08:00"), MergedChange(4, ("a",))]
    assert [c.number for c in earlier(past, 9, "2026-01-02T03:00:00Z")] == [1, 2]  # +08:00 is 02:00Z
    # #4 has no time: it is after #3, which was merged later than the asked time.
    assert [c.number for c in earlier(past, 9, "2026-01-05T00:00:00Z")] == [1, 3, 2, 4]
    assert [c.number for c in earlier(past, 3, None)] == [1]  # by position, before its own entry
    assert [c.number for c in earlier(past, 9, None)] == [1, 3, 2, 4]
    assert [c.number for c in earlier(past, 3, "2026-01-03T00:00:00Z")] == [1, 2]


def test_merged_change_from_files():
    files = [ChangedFile("a.py"), ChangedFile("b.py", status="removed"), ChangedFile("c.py", status="renamed", previous_filename="old.py")]
    change = merged_change(5, files, merged_at="2026-01-01T00:00:00Z", author="alice")
    assert change == MergedChange(5, ("a.py", "b.py", "c.py"), ("b.py", "old.py"), "2026-01-01T00:00:00Z", "alice")


def test_followed_up_by_the_next_prs_or_the_authors_next():
    h = [MergedChange(i, ("x.py",), merged_at=f"2026-01-{i:02d}T00:00:00Z", author="bob") for i in range(1, 10)]
    h[0] = replace(h[0], author="alice")
    h[7] = MergedChange(8, ("p.py",), merged_at="2026-01-08T00:00:00Z", author="alice")
    assert not followed_up(h, 0, "p.py", Horizon(prs=5, author=False))
    assert followed_up(h, 0, "p.py", Horizon(prs=5))  # alice's own next PR, 7 days later
    assert not followed_up(h, 0, "p.py", Horizon(prs=5, days=3))
    assert followed_up(h, 0, "p.py", Horizon(prs=7, author=False))


def _forgetful(rounds: int, *, fixed: bool) -> list[MergedChange]:
    """Rounds of eight pull requests: ``a.py`` changes with ``b.py``, except every third round,
    when ``b.py`` is forgotten and (when ``fixed``) changed by the next pull request; ``b.py``
    also changes alone six and seven pull requests after ``a.py`` (too late to count as a
    follow-up, and often enough that ``b.py`` does not point back at ``a.py``)."""
    out: list[MergedChange] = []

    def add(*paths: str) -> None:
        out.append(MergedChange(len(out) + 1, paths))

    for i in range(rounds):
        forgets = i % 3 == 2
        add("a.py") if forgets else add("a.py", "b.py")
        add("b.py") if forgets and fixed else add(f"o{i}-1.py")
        for k in range(2, 6):
            add(f"o{i}-{k}.py")
        add("b.py")
        add("b.py")
    return out


def test_replay_scores_each_threshold_on_what_came_after():
    loose, strict = replay(_forgetful(60, fixed=True), [FIVE_AT_60, replace(FIVE_AT_60, min_share=0.9)])
    assert loose.named >= 8 and loose.precision == 1.0  # each forgotten b.py came in the next PR
    assert strict.named == 0  # 2 of 3 is under 90 %
    assert loose.replayed == 200
    never = replay(_forgetful(60, fixed=False), [FIVE_AT_60])[0]
    assert never.named == loose.named and never.precision == 0.0


def test_calibrate_shows_the_line_only_where_it_was_right():
    good = calibrate(_forgetful(60, fixed=True), min_lines=5)
    assert good.thresholds is not None and good.score.precision >= 0.6 and good.score.named >= 5
    assert good.thresholds in GRID
    assert calibrate(_forgetful(60, fixed=True)).thresholds is None  # fewer than 20 lines say too little
    bad = calibrate(_forgetful(60, fixed=False), min_lines=5)
    assert bad.thresholds is None and bad.score is not None and bad.score.precision < 0.6
    assert calibrate([]).thresholds is None
    assert LOOSEST.min_changes == min(t.min_changes for t in GRID)


def test_the_replay_index_finds_what_the_walk_back_finds():
    # The replay reads each file's last changes from an index (coupling._PathIndex); the
    # guide's walk back (_pairs) is the reference. Random histories with removals,
    # renames, huge pull requests and files that change rarely.
    import random

    from bot.engine.history.coupling import _PathIndex, _pairs

    rnd = random.Random(24)
    names = [f"src/m{i}.py" for i in range(14)] + ["docs/a.md", "tests/test_x.py", "conf/c.yaml"]
    for _ in range(30):
        changes = []
        for number in range(1, rnd.randint(5, 80)):
            paths = tuple(dict.fromkeys(rnd.sample(names, rnd.choice((1, 2, 3, 4, 6, 12)))))
            gone = tuple(p for p in paths if rnd.random() < 0.1)
            changes.append(MergedChange(number, paths, gone))
        for thresholds in (LOOSEST, replace(LOOSEST, max_files=5, window=4, min_changes=2, min_share=0.3, skip_kinds=())):
            index = _PathIndex(changes, thresholds.max_files)
            for end in range(len(changes) + 1):
                point = changes[min(end, len(changes) - 1)]
                focal = [p for p in point.paths if p not in point.gone]
                changed = (*point.paths, *point.gone)
                walked = _pairs(changed, changes, end, focal, thresholds)
                assert sorted(index.pairs(changed, end, focal, thresholds), key=repr) == sorted(walked, key=repr)
