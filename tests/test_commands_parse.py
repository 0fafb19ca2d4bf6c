"""Finding /prguide commands in comment bodies: Markdown structure, grammar, edits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands.parse import (
    LABEL_ADD,
    LABEL_REMOVE,
    MAX_COMMANDS,
    Command,
    label_name_problem,
    new_commands,
    parse_commands,
    split_arguments,
)


def found(body: str, slug: str = "prguide") -> list[tuple[str, tuple[str, ...], str | None]]:
    return [(c.name, c.args, c.error) for c in parse_commands(body, app_slug=slug)]


# ----- where a command may stand --------------------------------------------------

STRUCTURE = [
    ("plain", "/prguide refresh", [("refresh", (), None)]),
    ("after text on its own line", "Thanks!\n/prguide refresh", [("refresh", (), None)]),
    ("case-insensitive prefix", "/PRGuide REFRESH", [("refresh", (), None)]),
    ("mid-line is prose", "please run /prguide refresh", []),
    ("longer word is not the prefix", "/prguides refresh", []),
    ("fenced code", "```\n/prguide refresh\n```", []),
    ("tilde fence, longer, indented", "  ~~~~~\n/prguide refresh\n  ~~~~~", []),
    ("unclosed fence runs to the end", "```\n/prguide refresh", []),
    ("after a closed fence", "```\ncode\n```\n/prguide refresh", [("refresh", (), None)]),
    ("indented code block", "text\n\n    /prguide refresh", []),
    ("inline code", "`/prguide refresh`", []),
    ("inline code then text", "`/prguide refresh` is the command", []),
    ("quote reply", "> /prguide refresh", []),
    ("nested quote", "> > /prguide refresh", []),
    ("lazy quote continuation", "> earlier words\n/prguide refresh", []),
    ("after a quote and a blank line", "> earlier words\n\n/prguide refresh", [("refresh", (), None)]),
    ("html comment block", "<!--\n/prguide refresh\n-->", []),
    ("html comment inline", "text <!-- x\n/prguide refresh --> tail", []),
    ("after an html comment", "<!-- note -->\n\n/prguide refresh", [("refresh", (), None)]),
    ("trailing html comment is not an argument", "/prguide refresh <!-- because -->", [("refresh", (), None)]),
    ("emphasised is not a command", "*/prguide refresh*", []),
    ("list item", "- /prguide refresh", [("refresh", (), None)]),
    ("crlf", "hi\r\n/prguide lang zh\r\n/prguide help\r\n", [("lang", ("zh",), None), ("help", (), None)]),
    ("bare cr", "hi\r/prguide help", [("help", (), None)]),
    ("hard break", "hi  \n/prguide help", [("help", (), None)]),
    ("several", "/prguide label add bug\n/prguide lang en\n/prguide why", [
        (LABEL_ADD, ("bug",), None), ("lang", ("en",), None), ("why", (), None)]),
    ("mention", "@prguide refresh", [("refresh", (), None)]),
    ("mention, other case, colon", "@PRGuide: help", [("help", (), None)]),
    ("mention with [bot]", "@prguide[bot] help", [("help", (), None)]),
    ("mention of someone else", "@alice refresh", []),
    ("empty body", "", []),
]


@pytest.mark.parametrize("body, expected", [c[1:] for c in STRUCTURE], ids=[c[0] for c in STRUCTURE])
def test_where_commands_stand(body, expected):
    assert found(body) == expected


def test_mention_uses_the_app_slug():
    assert found("@guide-bot why", slug="guide-bot") == [("why", (), None)]
    assert found("@prguide why", slug="guide-bot") == []
    assert found("/prguide why", slug="guide-bot") == [("why", (), None)]


# ----- grammar --------------------------------------------------------------------

GRAMMAR = [
    ("refresh", "/prguide refresh", ("refresh", (), None)),
    ("refresh takes nothing", "/prguide refresh now", ("refresh", (), "cmd.err.no_args")),
    ("lang zh", "/prguide lang zh", ("lang", ("zh",), None)),
    ("lang alias", "/prguide lang Chinese", ("lang", (), "cmd.err.lang_unknown")),
    ("lang cn", "/prguide lang CN", ("lang", ("zh",), None)),
    ("lang needs one", "/prguide lang", ("lang", (), "cmd.err.lang_arity")),
    ("lang two", "/prguide lang en zh", ("lang", (), "cmd.err.lang_arity")),
    ("label add several", "/prguide label add bug docs", (LABEL_ADD, ("bug", "docs"), None)),
    ("label add quoted", '/prguide label add "good first read" bug', (LABEL_ADD, ("good first read", "bug"), None)),
    ("label add curly quotes", "/prguide label add “good first read”", (LABEL_ADD, ("good first read",), None)),
    ("label as inline code", "/prguide label add `good first read`", (LABEL_ADD, ("good first read",), None)),
    ("apostrophe is a character", "/prguide label add don't-merge", (LABEL_ADD, ("don't-merge",), None)),
    ("duplicates collapse", "/prguide label add Bug bug", (LABEL_ADD, ("Bug",), None)),
    ("label remove", "/prguide label remove area/rollout", (LABEL_REMOVE, ("area/rollout",), None)),
    ("label verb case", "/prguide LABEL Remove x", (LABEL_REMOVE, ("x",), None)),
    ("label needs a verb", "/prguide label bug", ("label", (), "cmd.err.label_action")),
    ("label needs names", "/prguide label add", (LABEL_ADD, (), "cmd.err.label_none")),
    ("unclosed quote", '/prguide label add "good first', ("", (), "cmd.err.quote")),
    ("empty quoted name", '/prguide label add ""', (LABEL_ADD, (), "cmd.err.label_empty")),
    ("comma", "/prguide label add a,b", (LABEL_ADD, (), "cmd.err.label_comma")),
    ("51 characters", "/prguide label add " + "x" * 51, (LABEL_ADD, (), "cmd.err.label_long")),
    ("50 characters", "/prguide label add " + "x" * 50, (LABEL_ADD, ("x" * 50,), None)),
    ("why", "/prguide why", ("why", (), None)),
    ("why label", '/prguide why "area/rollout"', ("why", ("area/rollout",), None)),
    ("why two", "/prguide why a b", ("why", (), "cmd.err.why_arity")),
    ("help", "/prguide help", ("help", (), None)),
    ("unknown", "/prguide frobnicate", ("frobnicate", (), "cmd.err.unknown")),
    ("nothing", "/prguide", ("", (), "cmd.err.empty")),
]


@pytest.mark.parametrize("body, expected", [c[1:] for c in GRAMMAR], ids=[c[0] for c in GRAMMAR])
def test_grammar(body, expected):
    (command,) = parse_commands(body)
    assert (command.name, command.args, command.error) == expected
    assert command.ok is (expected[2] is None)


def test_control_characters_in_a_label_are_refused():
    assert label_name_problem("bad\u0007name") == "cmd.err.label_control"
    assert label_name_problem("rtl\u202ename") == "cmd.err.label_control"
    assert label_name_problem("中文标签") is None


def test_text_keeps_the_line_as_written_for_quoting_back():
    (command,) = parse_commands("/prguide   label  add   bug")
    assert command.text == "label add bug"
    assert command.key == "label add bug"


def test_too_many_commands_are_reported_once():
    body = "\n".join(["/prguide help"] * (MAX_COMMANDS + 3))
    commands = parse_commands(body)
    assert len(commands) == MAX_COMMANDS + 1
    assert commands[-1].error == "cmd.err.too_many"
    assert commands[-1].error_params["count"] == 3


def test_split_arguments():
    assert split_arguments('a "b c" “d e” f') == ["a", "b c", "d e", "f"]
    assert split_arguments('a "b') is None
    assert split_arguments("") == []


# ----- edited comments ------------------------------------------------------------

EDITS = [
    ("added a command", "Looks good.", "Looks good.\n/prguide refresh", ["refresh"]),
    ("typo fixed elsewhere", "/prguide refresh\nthx", "/prguide refresh\nthanks", []),
    ("same command twice now", "/prguide refresh", "/prguide refresh\n/prguide refresh", ["refresh"]),
    ("spacing and case do not make it new", "/prguide label add Bug", "/PRGUIDE label   add bug", []),
    ("changed arguments are new", "/prguide lang en", "/prguide lang zh", ["lang"]),
    ("command quoted before, written now", "> /prguide help", "/prguide help", ["help"]),
    ("removed a command", "/prguide help\n/prguide why", "/prguide help", []),
]


@pytest.mark.parametrize("before, after, expected", [c[1:] for c in EDITS], ids=[c[0] for c in EDITS])
def test_edited_comment_runs_only_new_commands(before, after, expected):
    assert [c.name for c in new_commands(after, before)] == expected


def test_edit_without_a_previous_body_runs_nothing():
    assert new_commands("/prguide refresh", None) == []


# ----- never crashes --------------------------------------------------------------

PIECES = list("/prguide @`~>*_-<!->[]()\"“”'\\ \t\r\nabc中,\u0000") + [
    "/prguide ", "@prguide ", "```", "~~~", "<!--", "-->", "> ", "    ", "label add ", "lang ", "\r\n",
]
markdownish = st.lists(st.sampled_from(PIECES), max_size=80).map("".join)


@settings(max_examples=300, deadline=None)
@given(markdownish)
def test_parser_never_crashes_and_returns_well_formed_commands(body):
    commands = parse_commands(body)
    assert len(commands) <= MAX_COMMANDS + 1
    for command in commands:
        assert isinstance(command, Command)
        assert command.ok or command.error.startswith("cmd.err.")
        assert "\n" not in command.text
        if command.name in (LABEL_ADD, LABEL_REMOVE) and command.ok:
            assert command.args and all(label_name_problem(a) is None for a in command.args)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.text(max_size=400))
def test_new_commands_never_crashes_on_any_text(before, after):
    assert len(new_commands(after, before)) <= len(parse_commands(after))


def test_overlong_command_line_is_refused_not_cut():
    names = " ".join(f"lab{i:03d}" for i in range(100))
    (command,) = parse_commands(f"/prguide label add {names}")
    assert command.error == "cmd.err.too_long"
    assert command.args == ()
