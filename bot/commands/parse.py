"""Finding ``/prguide`` commands in a comment body.

Pure: text in, :class:`Command` values out. A command is a line of a Markdown
paragraph that starts with ``/prguide`` or with a mention of the app (``@prguide``),
case-insensitively. The body is tokenised with markdown-it (CommonMark, plus GitHub's
tables and strikethrough), so text GitHub shows as something other than the
commenter's own words never runs a command: fenced and indented code blocks, inline
code, block quotes (quote replies, nested or lazily continued) and HTML blocks and
comments. Several commands may stand in one comment, one per line.

Grammar (arguments are separated by spaces; a name with spaces is written in double
quotes, straight or curly, or as inline code)::

    /prguide refresh
    /prguide lang zh|en
    /prguide label add NAME...
    /prguide label remove NAME...
    /prguide why [LABEL]
    /prguide backfill [N]
    /prguide help

A line that starts like a command but does not follow the grammar still yields a
:class:`Command`, with ``error`` set, so the commenter can be told what was wrong.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt

from bot.engine.repo_config import MAX_BACKFILL

REFRESH = "refresh"
LANG = "lang"
LABEL_ADD = "label add"
LABEL_REMOVE = "label remove"
WHY = "why"
HELP = "help"
BACKFILL = "backfill"
#: The command names, in the order ``/prguide help`` lists them.
COMMANDS = (REFRESH, LANG, LABEL_ADD, LABEL_REMOVE, WHY, BACKFILL, HELP)

#: Languages ``/prguide lang`` accepts, with the spellings people use for them.
LANG_ALIASES: Mapping[str, str] = {"en": "en", "english": "en", "zh": "zh", "zh-cn": "zh", "cn": "zh", "中文": "zh"}

#: GitHub's limit on a label name, in characters ("Create a label").
MAX_LABEL_CHARS = 50
#: Commands read from one comment; the rest are refused, so one comment cannot fan out
#: into unbounded work.
MAX_COMMANDS = 10
#: Characters kept of a command line for quoting it back and comparing versions.
MAX_LINE_CHARS = 300

_PREFIX = "/prguide"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_ARG = re.compile(r'"([^"]*)"|“([^”]*)”|(["“][^\s]*)|(\S+)')
_SPACES = re.compile(r"\s+")

_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


@dataclass(frozen=True, slots=True)
class Command:
    """One command line of a comment.

    ``name`` is one of :data:`COMMANDS` (or what was written after the prefix when it
    is unknown; ``""`` when nothing was); ``args`` its arguments, unquoted (for
    ``lang`` the language code ``en``/``zh``; for ``label add``/``remove`` the label
    names; for ``why`` zero or one label name; for ``backfill`` zero or one count). ``text`` is the line as written after
    the prefix, with spaces collapsed (a longer line than :data:`MAX_LINE_CHARS` is
    refused with ``cmd.err.too_long``, its text shortened).
    ``error`` is ``None`` for a valid command, else the catalog key of what was
    wrong (see :mod:`bot.commands.messages`) with ``error_params``.
    """

    name: str
    args: tuple[str, ...] = ()
    text: str = ""
    error: str | None = None
    error_params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the command follows the grammar."""
        return self.error is None

    @property
    def key(self) -> str:
        """What makes two command lines the same command (for edited comments).

        Label names compare case-insensitively, as on GitHub.
        """
        return _SPACES.sub(" ", self.text).strip().casefold()


def parse_commands(body: str | None, *, app_slug: str = "prguide") -> list[Command]:
    """Every command line in a comment ``body``, in order.

    ``app_slug`` is the GitHub App's slug; ``@{app_slug}`` (optionally followed by
    ``[bot]``, ``:`` or ``,``) works like ``/prguide``. CRLF and CR line ends are
    accepted. Lines after the first :data:`MAX_COMMANDS` commands yield one error
    command (``cmd.err.too_many``). Never raises on any text.
    """
    if not body:
        return []
    prefix = _prefix_re(app_slug)
    commands: list[Command] = []
    extra = 0
    for line in _command_lines(body, prefix):
        if len(commands) >= MAX_COMMANDS:
            extra += 1
            continue
        commands.append(_parse_line(line))
    if extra:
        commands.append(Command("", text="…", error="cmd.err.too_many", error_params={"limit": MAX_COMMANDS, "count": extra}))
    return commands


def new_commands(body: str | None, before: str | None, *, app_slug: str = "prguide") -> list[Command]:
    """The commands in an edited comment ``body`` that its earlier version ``before`` lacked.

    ``before`` is ``changes.body.from`` of an ``issue_comment`` ``edited`` webhook
    ("Webhook events and payloads", issue_comment); ``None`` when the body did not
    change. A command written twice now and once before counts once as new.
    """
    if before is None:
        return []
    seen = Counter(c.key for c in parse_commands(before, app_slug=app_slug))
    fresh = []
    for command in parse_commands(body, app_slug=app_slug):
        if seen[command.key] > 0:
            seen[command.key] -= 1
            continue
        fresh.append(command)
    return fresh


def split_arguments(text: str) -> list[str] | None:
    """Split ``text`` at spaces, keeping ``"double quoted"`` (or “curly”) parts whole.

    Returns ``None`` when a quote is left open. Apostrophes are ordinary characters,
    so ``don't-merge`` is one name.
    """
    args = []
    for match in _ARG.finditer(text):
        straight, curly, unterminated, bare = match.groups()
        if unterminated is not None:
            return None
        args.append(straight if straight is not None else curly if curly is not None else bare)
    return args


def label_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a GitHub label name (a catalog key), or ``None`` when it can.

    GitHub refuses names over :data:`MAX_LABEL_CHARS` characters ("Create a label");
    empty names, control characters and commas are refused too (a comma splits names
    in GitHub's older label inputs, and a control character cannot be typed back).
    """
    if not name.strip():
        return "cmd.err.label_empty"
    if len(name) > MAX_LABEL_CHARS:
        return "cmd.err.label_long"
    if _CONTROL.search(name):
        return "cmd.err.label_control"
    if "," in name:
        return "cmd.err.label_comma"
    return None


def _prefix_re(app_slug: str) -> re.Pattern[str]:
    mention = re.escape("@" + app_slug.strip().lstrip("@")) + r"(?:\[bot\])?[:,]?"
    return re.compile(rf"(?:{re.escape(_PREFIX)}|{mention})(?=\s|$)", re.IGNORECASE)


def _command_lines(body: str, prefix: re.Pattern[str]) -> Iterator[str]:
    """The text after the prefix of every paragraph line that starts with it."""
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    tokens = _MD.parse(text)
    for i, token in enumerate(tokens):
        if token.type != "inline" or i == 0 or tokens[i - 1].type != "paragraph_open":
            continue
        if _in_blockquote(tokens, i):
            continue
        for line in _lines(token.children or ()):
            if not line or line[0].type != "text":
                continue
            match = prefix.match(line[0].content)
            if match:
                yield _line_text(line, match.end())


def _in_blockquote(tokens: Sequence[Any], index: int) -> bool:
    depth = 0
    for token in tokens[:index]:
        if token.type == "blockquote_open":
            depth += 1
        elif token.type == "blockquote_close":
            depth -= 1
    return depth > 0


def _lines(children: Sequence[Any]) -> Iterator[list[Any]]:
    """Inline tokens grouped by rendered line: a new line starts after each line break."""
    line: list[Any] = []
    for child in children:
        if child.type in ("softbreak", "hardbreak"):
            yield line
            line = []
        else:
            line.append(child)
    yield line


def _line_text(line: Sequence[Any], start: int) -> str:
    parts = [line[0].content[start:]]
    for child in line[1:]:
        if child.type == "text":
            parts.append(child.content)
        elif child.type == "code_inline":
            # A name written as inline code is one argument, spaces and all.
            content = child.content
            parts.append(f'"{content}"' if '"' not in content else content)
        # HTML (comments included) and formatting marks are not part of the command.
    return " ".join("".join(parts).split())


def _parse_line(text: str) -> Command:
    if len(text) > MAX_LINE_CHARS:
        # Refuse rather than cut: a cut line could name a label nobody asked for.
        return Command("", text=text[: MAX_LINE_CHARS - 1] + "…", error="cmd.err.too_long", error_params={"limit": MAX_LINE_CHARS})
    args = split_arguments(text)
    if args is None:
        return Command("", text=text, error="cmd.err.quote")
    if not args:
        return Command("", text=text, error="cmd.err.empty")
    verb, rest = args[0].casefold(), args[1:]
    if verb == "label":
        return _parse_label(text, rest)
    if verb in (REFRESH, HELP):
        if rest:
            return Command(verb, text=text, error="cmd.err.no_args", error_params={"command": verb})
        return Command(verb, text=text)
    if verb == LANG:
        if len(rest) != 1:
            return Command(LANG, text=text, error="cmd.err.lang_arity")
        code = LANG_ALIASES.get(rest[0].casefold())
        if code is None:
            return Command(LANG, text=text, error="cmd.err.lang_unknown", error_params={"value": rest[0]})
        return Command(LANG, (code,), text=text)
    if verb == WHY:
        if len(rest) > 1:
            return Command(WHY, text=text, error="cmd.err.why_arity")
        if rest and (problem := label_name_problem(rest[0])):
            return Command(WHY, text=text, error=problem, error_params={"value": rest[0], "limit": MAX_LABEL_CHARS})
        return Command(WHY, tuple(rest), text=text)
    if verb == BACKFILL:
        return _parse_backfill(text, rest)
    return Command(args[0], text=text, error="cmd.err.unknown", error_params={"value": args[0]})


def _parse_backfill(text: str, rest: list[str]) -> Command:
    """``backfill [N]``: N a whole number of pull requests, 1 to :data:`bot.engine.repo_config.MAX_BACKFILL`."""
    if not rest:
        return Command(BACKFILL, text=text)
    value = rest[0]
    if len(rest) > 1 or not value.isascii() or not value.isdigit() or not 1 <= int(value) <= MAX_BACKFILL:
        return Command(BACKFILL, text=text, error="cmd.err.backfill_count", error_params={"value": " ".join(rest), "limit": MAX_BACKFILL})
    return Command(BACKFILL, (str(int(value)),), text=text)


def _parse_label(text: str, rest: list[str]) -> Command:
    if not rest or rest[0].casefold() not in ("add", "remove"):
        return Command("label", text=text, error="cmd.err.label_action")
    name = LABEL_ADD if rest[0].casefold() == "add" else LABEL_REMOVE
    names = rest[1:]
    if not names:
        return Command(name, text=text, error="cmd.err.label_none", error_params={"command": name})
    for label in names:
        problem = label_name_problem(label)
        if problem:
            return Command(name, text=text, error=problem, error_params={"value": label, "limit": MAX_LABEL_CHARS})
    unique: dict[str, str] = {}
    for label in names:
        unique.setdefault(label.casefold(), label)
    return Command(name, tuple(unique.values()), text=text)
