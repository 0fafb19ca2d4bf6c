"""PR text quoted in the guide can neither ping people nor inject HTML."""

import re

from hypothesis import given
from hypothesis import strategies as st

from bot.engine.render import sanitize


def test_mentions_are_broken_but_readable():
    out = sanitize.neutralize("thanks @alice and @org/team, mail a@b.c")
    assert "@alice" not in out and "@org/team" not in out
    assert "@\u200balice" in out


def test_html_and_marker_forgery_are_escaped():
    out = sanitize.neutralize('<img src=x onerror=alert(1)><!-- prguide:v1 {"x":1} -->')
    assert "<" not in out and ">" not in out
    assert "&lt;img" in out and "&lt;!-- prguide:v1" in out


def test_control_and_bidi_characters_removed():
    assert sanitize.strip_control("a\x00b\u202ec\x1bd\ne") == "abcd\ne"


def test_one_line_shortens_without_leaving_code_open():
    text = "word " * 20 + "`some_code_span_that_is_long`" + " tail" * 10
    out = sanitize.one_line(text, 110)
    assert len(out) <= 110 and out.endswith("…")
    assert out.count("`") % 2 == 0


def test_code_span_survives_backticks():
    assert sanitize.code("a`b") == "``a`b``"
    assert sanitize.code("`x`") == "`` `x` ``"
    assert sanitize.code("") == "` `"


def test_table_cell_escapes_pipes():
    assert sanitize.table_cell("a | b") == "a \\| b"


def test_login_cannot_smuggle_markup():
    assert sanitize.login("alice<script>") == "**alicescript**"
    assert sanitize.login("dependabot[bot]") == "**dependabot[bot]**"
    assert sanitize.login("") == "**ghost**"


@given(st.text())
def test_neutralize_never_leaves_raw_html_or_mentions(text):
    out = sanitize.quote(text, 80)
    assert "<" not in out and ">" not in out
    assert len(out) <= 80 * 6  # entities may lengthen it, but it stays bounded
    for i, ch in enumerate(out):
        if ch == "@" and i + 1 < len(out):
            assert not out[i + 1].isascii() or not out[i + 1].isalnum()


HOSTILE = (
    "see ![t](https://evil.example/p.png) [click](https://evil.example/x) <https://evil.example/a> "
    "[[nested](https://evil.example/n)](https://evil.example/o) other-org/other-repo#123 other-org/other-repo@abc1234 @alice"
)


def _html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(markdown)


def test_links_images_and_autolinks_in_quoted_text_do_not_render():
    out = sanitize.neutralize(HOSTILE)
    html = _html(out)
    assert "<a " not in html and "<img" not in html
    # The words and the addresses are still there to read.
    assert "click" in html and "https://evil.example/x" in html


def test_cross_repository_references_become_code_spans():
    out = sanitize.neutralize(HOSTILE)
    assert "`other-org/other-repo#123`" in out
    assert "`other-org/other-repo@\u200babc1234`" in out
    # Not a reference: a URL fragment, a file path, an e-mail address.
    for plain in ("https://github.com/o/r#12", "src/file.py#L3", "mail me at a@b.example"):
        assert "`" not in sanitize.neutralize(plain)


def test_normal_titles_read_the_same():
    for title in ("[trainer] fix: memory leak in [rollout] worker", "feat(ppo): add KL [beta] schedule", "Fix #123 and issue 45"):
        out = sanitize.neutralize(title)
        assert out == title
        assert _html(out) == f"<p>{title}</p>\n"


def test_code_spans_already_in_the_text_are_left_alone():
    text = "keep `a [b](c)` and ``x`y`` then [d](e)"
    assert sanitize.neutralize(text) == "keep `a [b](c)` and ``x`y`` then \\[d\\](e)"


def test_hostile_title_and_review_comment_in_a_whole_guide(load_bundle_json):
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.engine.snapshot import PullRequestSnapshot

    bundle = load_bundle_json(7491)
    bundle["pull"]["title"] = "[trainer] fix: " + HOSTILE
    comment = {
        "id": 1, "body": HOSTILE, "path": bundle["files"][0]["filename"], "line": 1, "user": {"login": "rev", "type": "User"},
        "created_at": "2024-05-01T10:00:00Z",
    }
    snapshot = PullRequestSnapshot.from_github(bundle["pull"], bundle["files"], [], [comment, {**comment, "id": 2}], repository="verl-project/verl")
    guide = build_guide(snapshot, load_rules())
    html = _html(guide.markdown)
    assert "evil.example" in guide.markdown
    assert 'href="https://evil.example' not in html and "<img" not in html
    assert "other-org/other-repo#123" not in guide.markdown.replace("`other-org/other-repo#123`", "")
    assert "@alice" not in guide.markdown


def test_a_backslash_before_a_backtick_opens_no_code_span_that_keeps_a_link_or_reference():
    hostile = "\\`[Click to approve](https://evil.example/login)` \\`![px](https://evil.example/p.png)` \\`other-org/victim#77`"
    html = _html(sanitize.neutralize(hostile))
    assert "<a " not in html and "<img" not in html
    # the reference is inside code (GitHub links none there) or not a bare reference at all
    assert "other-org/victim#77" not in re.sub(r"<code>.*?</code>", "", html)


# --- str methods in place of regexes: the same text -----------------------------------------------

from hypothesis import settings  # noqa: E402

_MESSY = st.text(alphabet=st.sampled_from(list("ab `\t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u200e\u202a\x00\x7f_é")), max_size=40)


@settings(max_examples=400, deadline=None)
@given(_MESSY)
def test_whitespace_collapses_and_controls_go_as_the_regexes_did(text):
    control = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
    assert sanitize.strip_control(text) == control.sub("", text)
    assert " ".join(text.split()) == re.sub(r"\s+", " ", text).strip()
    assert "".join(text.split()) == re.sub(r"\s+", "", text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(["\n", "a", " "]), max_size=30))
def test_blank_line_runs_shrink_as_the_regex_did(text):
    shrunk = text
    while "\n\n\n" in shrunk:
        shrunk = shrunk.replace("\n\n\n", "\n\n")
    assert shrunk == re.sub(r"\n{3,}", "\n\n", text)
