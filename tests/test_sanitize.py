"""PR text quoted in the guide can neither ping people nor inject HTML."""

from hypothesis import given
from hypothesis import strategies as st

from bot.render import sanitize


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
