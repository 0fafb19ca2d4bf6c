"""What the reviewers said and what is left to do after the merge."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from bot.engine.analysis.model import (
    DiffAnalysis,
)
from bot.engine.focus.model import (
    MAX_NAMES,
    TODO_PREFIX,
    FollowUp,
    ReviewSummary,
    Thread,
)
from bot.engine.focus.names import CODE_LIKE
from bot.engine.snapshot import PullRequestSnapshot


def review_summary(snapshot: PullRequestSnapshot) -> ReviewSummary:
    """Reviewers with their last decisive state, and threads busiest first.

    A reviewer's state is their last ``APPROVED``/``CHANGES_REQUESTED``/``DISMISSED``
    review, else ``COMMENTED`` ("List reviews for a pull request"). The PR author's
    own reviews (replies) are left out.
    """
    states: dict[str, tuple[str, bool]] = {}
    for review in snapshot.reviews:
        if review.user == snapshot.author or review.state == "PENDING":
            continue
        previous = states.get(review.user)
        if previous is None or review.state != "COMMENTED":
            states[review.user] = (review.state, review.user_is_bot)
    by_thread: dict[int, list] = defaultdict(list)
    for comment in snapshot.review_comments:
        by_thread[comment.thread_id].append(comment)
    threads = []
    for comments in by_thread.values():
        first = comments[0]
        people = tuple(dict.fromkeys(c.user for c in comments))
        threads.append(
            Thread(
                path=first.path,
                line=first.line,
                comments=len(comments),
                participants=people,
                opening=first.body,
                has_suggestion=any("```suggestion" in c.body for c in comments),
                author_replied=any(c.user == snapshot.author for c in comments[1:]) or first.user == snapshot.author,
            )
        )
    threads.sort(key=lambda t: (-t.comments, t.path))
    return ReviewSummary(tuple((u, s, b) for u, (s, b) in states.items()), tuple(threads))


def follow_ups(
    snapshot: PullRequestSnapshot, analysis: DiffAnalysis, review: ReviewSummary, change_type: str, *, absent: Sequence[str] = ()
) -> tuple[FollowUp, ...]:
    """Things left to do: TODOs added, unanswered suggestions, untested source changes, gaps.

    ``absent`` are identifiers the description names that the merged diff does not
    contain (:func:`bot.engine.analysis.description.check_against_diff`): the guide says so
    rather than repeating them as fact.
    """
    out: list[FollowUp] = []
    code_like = [n for n in absent if CODE_LIKE.search(n) and not n.startswith("--") and "/" not in n][:MAX_NAMES + 2]
    if code_like:
        out.append(FollowUp("follow.description_missing", {"names": tuple(code_like), "count": len(code_like)}))
    for f in analysis.files:
        for todo in f.todos_added[:2]:
            out.append(FollowUp("follow.todo", {"text": TODO_PREFIX.sub("", todo) or todo}, f.path))
    for thread in review.threads:
        if thread.has_suggestion and not thread.author_replied:
            out.append(FollowUp("follow.suggestion", {"line": thread.line, "people": thread.participants}, thread.path))
    if any(state == "CHANGES_REQUESTED" for _, state, _ in review.reviewers):
        people = tuple(u for u, s, _ in review.reviewers if s == "CHANGES_REQUESTED")
        out.append(FollowUp("follow.changes_requested", {"people": people}))
    sources = [f for f in analysis.of_kind("source") if f.changes]
    if sources and not analysis.of_kind("test") and change_type not in ("docs", "ci", "build", "revert"):
        out.append(FollowUp("follow.no_tests", {"count": len(sources), "lines": sum(f.changes for f in sources)}))
    if snapshot.truncated:
        out.append(FollowUp("follow.truncated", {"listed": len(snapshot.files), "total": snapshot.changed_files}))
    missing = [f for f in analysis.files if f.patch_missing and f.kind != "binary"]
    if missing:
        out.append(FollowUp("follow.missing_patches", {"count": len(missing), "names": tuple(f.path for f in missing[:MAX_NAMES])}))
    return tuple(out[:10])
