"""Parsing GitHub's per-file ``patch`` text into hunks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, parse_patch

SIMPLE = """@@ -122,6 +122,8 @@ class _FakeTokenizer:
         return "<decoded>"
 
 
+def helper():
+    return 1
 @pytest.mark.asyncio
 async def test_x(monkeypatch):
-    captured = {}
+    captured: dict = {}"""


def test_header_numbers_and_section_text():
    (hunk,) = parse_patch(SIMPLE)
    assert (hunk.old_start, hunk.old_length, hunk.new_start, hunk.new_length) == (122, 6, 122, 8)
    assert hunk.section == "class _FakeTokenizer:"


def test_line_kinds_and_numbers_follow_each_side():
    (hunk,) = parse_patch(SIMPLE)
    kinds = "".join(line.kind for line in hunk.lines)
    assert kinds == "   ++  -+"
    first_added = hunk.added[0]
    assert (first_added.text, first_added.old_line, first_added.new_line) == ("def helper():", 0, 125)
    removed = hunk.removed[0]
    assert (removed.text, removed.old_line, removed.new_line) == ("    captured = {}", 127, 0)
    last = hunk.lines[-1]
    assert (last.kind, last.new_line) == (ADDED, 129)
    assert hunk.lines[0].kind == CONTEXT and hunk.lines[0].old_line == hunk.lines[0].new_line == 122


def test_several_hunks_and_header_without_lengths():
    patch = "@@ -1 +1 @@\n-a\n+b\n@@ -10,2 +10,3 @@ def f():\n x\n+y\n z"
    first, second = parse_patch(patch)
    assert (first.old_length, first.new_length) == (1, 1)
    assert [line.text for line in first.lines] == ["a", "b"]
    assert second.section == "def f():"
    assert [(line.kind, line.new_line) for line in second.lines] == [(CONTEXT, 10), (ADDED, 11), (CONTEXT, 12)]


def test_no_newline_marker_is_recorded_per_side():
    patch = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file"
    (hunk,) = parse_patch(patch)
    assert [line.text for line in hunk.lines] == ["a", "b", "c"]
    assert hunk.old_missing_newline and hunk.new_missing_newline


def test_no_newline_only_on_new_side():
    patch = "@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file"
    (hunk,) = parse_patch(patch)
    assert hunk.new_missing_newline and not hunk.old_missing_newline


def test_crlf_line_ends_are_stripped():
    patch = "@@ -1,2 +1,2 @@ section\r\n keep\r\n-old\r\n+new\r\n"
    (hunk,) = parse_patch(patch)
    assert hunk.section == "section"
    assert [(line.kind, line.text) for line in hunk.lines] == [(CONTEXT, "keep"), (REMOVED, "old"), (ADDED, "new")]


def test_empty_context_line_without_its_space_counts_as_context():
    patch = "@@ -1,3 +1,3 @@\n a\n\n-b\n+c"
    (hunk,) = parse_patch(patch)
    assert [line.kind for line in hunk.lines] == [CONTEXT, CONTEXT, REMOVED, ADDED]
    assert hunk.lines[1].text == ""


def test_full_git_diff_headers_are_not_read_as_changes():
    patch = (
        "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n"
        "@@ -1 +1 @@\n-old\n+new\n"
        "diff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n"
        "@@ -5 +5 @@\n-five\n+FIVE"
    )
    first, second = parse_patch(patch)
    assert [line.text for line in first.lines] == ["old", "new"]
    assert [line.text for line in second.lines] == ["five", "FIVE"]


def test_lines_beyond_the_announced_counts_are_ignored():
    (hunk,) = parse_patch("@@ -1 +1 @@\n-a\n+b\n+stray\n-stray")
    assert [line.text for line in hunk.lines] == ["a", "b"]


def test_new_file_hunk_starts_at_zero():
    (hunk,) = parse_patch("@@ -0,0 +1,2 @@\n+one\n+two")
    assert hunk.old_start == 0 and [line.new_line for line in hunk.lines] == [1, 2]


def test_added_line_that_starts_with_at_signs_is_content():
    (hunk,) = parse_patch("@@ -1,0 +1,2 @@\n+@@ not a header\n+@decorator")
    assert [line.text for line in hunk.lines] == ["@@ not a header", "@decorator"]


def test_no_patch_empty_patch_and_garbage_give_no_hunks():
    assert parse_patch(None) == ()
    assert parse_patch("") == ()
    assert parse_patch("Binary files differ") == ()
    assert parse_patch("@@ garbage @@\n+x") == ()
    assert parse_patch(12345) == ()


def test_bytes_are_decoded_with_replacement():
    (hunk,) = parse_patch(b"@@ -1 +1 @@\n-caf\xe9\n+caf\xc3\xa9")
    assert hunk.lines[0].text == "caf\ufffd"
    assert hunk.lines[1].text == "café"


def test_absurd_line_numbers_are_rejected():
    assert parse_patch("@@ -1,99999999999 +1 @@\n+x") == ()


_patchy_text = st.lists(
    st.one_of(
        st.sampled_from(["@@ -1,3 +1,4 @@ def f():", "@@ -0,0 +1 @@", "@@ -5 +5,2 @@", "\\ No newline at end of file", "", "\r"]),
        st.builds(lambda p, t: p + t, st.sampled_from(["+", "-", " ", "@", "\\", ""]), st.text(max_size=30)),
    ),
    max_size=40,
).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), _patchy_text))
def test_parse_patch_never_raises_and_line_numbers_are_consistent(text):
    for hunk in parse_patch(text):
        olds = [line.old_line for line in hunk.lines if line.kind != ADDED]
        news = [line.new_line for line in hunk.lines if line.kind != REMOVED]
        assert olds == list(range(hunk.old_start, hunk.old_start + len(olds)))
        assert news == list(range(hunk.new_start, hunk.new_start + len(news)))
        assert len(olds) <= hunk.old_length and len(news) <= hunk.new_length
        assert all("\n" not in line.text for line in hunk.lines)


# Well-formed hunks: rows exactly as many as the header counts, so the whole-hunk path takes them.
_exact_hunks = st.lists(
    st.tuples(st.lists(st.sampled_from(["+", "-", " "]), min_size=1, max_size=12), st.text(alphabet="ab \t\\@+-", max_size=6),
              st.sampled_from(["", "old", "new", "both"])),
    min_size=1, max_size=4,
)


def _render(hunks) -> str:
    out, start = [], 1
    for kinds, text, eof in hunks:
        old = sum(k != "+" for k in kinds)
        new = sum(k != "-" for k in kinds)
        out.append(f"@@ -{start},{old} +{start},{new} @@")
        for i, kind in enumerate(kinds):
            out.append(f"{kind}{text}{i}")
            if eof == "both" and i == len(kinds) - 1 or eof == "old" and kind == "-" and i == len(kinds) - 1:
                out.append("\\ No newline at end of file")
        start += 20
    return "\n".join(out)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_exact_hunks.map(_render), st.text(), _patchy_text))
def test_the_whole_hunk_path_reads_as_row_by_row_does(text):
    import bot.engine.analysis.patch as patch

    fast = patch.parse_patch_lines(text)
    original = patch._whole_rows
    patch._whole_rows = lambda *args: None  # every hunk read row by row
    try:
        slow = patch.parse_patch_lines(text)
    finally:
        patch._whole_rows = original
    assert fast == slow
    assert [tuple(map(type, line)) for h in fast[0] for line in h.lines] == [tuple(map(type, line)) for h in slow[0] for line in h.lines]
