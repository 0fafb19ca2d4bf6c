"""What the reviewers said and what is left to do after the merge."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from bot.engine.analysis.model import DiffAnalysis, Evidence
from bot.engine.focus.model import (
    MAX_NAMES,
    TODO_PREFIX,
    FollowUp,
    ReviewSummary,
    Thread,
)
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
    snapshot: PullRequestSnapshot,
    analysis: DiffAnalysis,
    review: ReviewSummary,
    change_type: str,
    *,
    promised: Sequence[tuple[str, str]] = (),
) -> tuple[FollowUp, ...]:
    """Things left to do: TODOs added, unanswered suggestions, untested source changes, gaps.

    ``promised`` are ``(name, sentence)`` pairs: a flag, option or function the
    description says this change adds that no line of the diff has
    (:func:`bot.engine.analysis.description.promised_missing`). Each follow-up carries
    the :class:`Evidence` it rests on.
    """
    out: list[FollowUp] = []
    for name, sentence in promised[:2]:
        out.append(FollowUp("follow.description_missing", {"names": (name,), "count": 1}, None, (Evidence(new=sentence, source="description"),)))
    for f in analysis.files:
        for todo in f.todos_added[:2]:
            out.append(FollowUp("follow.todo", {"text": TODO_PREFIX.sub("", todo) or todo}, f.path, (Evidence(f.path, new=todo),)))
    for thread in review.threads:
        if thread.has_suggestion and not thread.author_replied:
            ev = (Evidence(thread.path, thread.line or 0, thread.line or 0, new=thread.opening[:160], source="review"),)
            out.append(FollowUp("follow.suggestion", {"line": thread.line, "people": thread.participants}, thread.path, ev))
    if any(state == "CHANGES_REQUESTED" for _, state, _ in review.reviewers):
        people = tuple(u for u, s, _ in review.reviewers if s == "CHANGES_REQUESTED")
        out.append(FollowUp("follow.changes_requested", {"people": people}, None, (Evidence(new="CHANGES_REQUESTED: " + ", ".join(people), source="review"),)))
    sources = [f for f in analysis.of_kind("source") if f.changes]
    # A CI workflow that gains lines may be the test (fresh-m #2519 added the e2e steps that
    # save and resume a checkpoint): "no test file changed" then reads as "untested".
    ci_grew = any(f.additions for f in analysis.of_kind("ci"))
    if sources and not analysis.of_kind("test") and not ci_grew and change_type not in ("docs", "ci", "build", "revert"):
        ev = tuple(Evidence(f.path, new=f"+{f.additions}/-{f.deletions}", source="metadata") for f in sources[:MAX_NAMES])
        out.append(FollowUp("follow.no_tests", {"count": len(sources), "lines": sum(f.changes for f in sources)}, None, ev))
    if snapshot.truncated:
        ev = (Evidence(new=f"{len(snapshot.files)} of {snapshot.changed_files} files listed", source="metadata"),)
        out.append(FollowUp("follow.truncated", {"listed": len(snapshot.files), "total": snapshot.changed_files}, None, ev))
    missing = [f for f in analysis.files if f.patch_missing and f.kind != "binary"]
    if missing:
        ev = tuple(Evidence(f.path, new=f"+{f.additions}/-{f.deletions}, no patch", source="metadata") for f in missing[:MAX_NAMES])
        out.append(FollowUp("follow.missing_patches", {"count": len(missing), "names": tuple(f.path for f in missing[:MAX_NAMES])}, None, ev))
    return tuple(out[:10])
