"""What a pull request's description says, read from the Markdown body of its template.

Many projects ship a PR template with ``### What does this PR do?``, ``### Test``,
``### API and Usage Example``, ``### Design & Code Changes`` and ``### Checklist``
sections, whose instructions (HTML comments, ``> Add **concise** overview...`` quotes,
unticked ``- [ ]`` items, placeholder code) stay in the body when the author does not
delete them. :func:`parse_description` drops that boilerplate and returns the author's
own words by section; :func:`check_against_diff` tells which identifiers the
description mentions the merged diff actually contains.

Pure and total: ``None``, bytes-free text of any shape, CRLF line ends and HTML are
accepted; nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from bot.engine.analysis.model import DiffAnalysis
from bot.engine.analysis.reordered import reordered

#: Longest body read; GitHub caps a PR body at 65,536 characters.
MAX_BODY = 65_536
_MAX_IDENTIFIERS = 200

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_TAG = re.compile(r"</?[A-Za-z][^>\n]{0,500}>")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
#: A checklist item, ticked or not: the PR template's to-do list, never the author's design.
_UNTICKED = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[xX ]\]\s+)?(.*\S)")
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]{1,60})")
#: :data:`_FLAG` without its look-behind: a literal start lets ``re`` jump between
#: candidates (ten times faster on long bodies); :func:`_flags` checks the character before.
_FLAG_CANDIDATE = re.compile(r"--[A-Za-z][\w-]{1,60}")
_WORD_OR_DASH = re.compile(r"[\w-]")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
_REVERT_PR = re.compile(r"\bReverts?\s+(?:([\w.-]+/[\w.-]+))?#(\d+)", re.I)
_REVERT_SHA = re.compile(r"\bThis reverts commit ([0-9a-f]{7,40})", re.I)
#: ``(?<=[.!?])\s+(?=...)`` written to start with its first space, so that the search skips
#: every other character instead of trying a look-behind at each.
_SENTENCE_END = re.compile(r"\s(?<=[.!?]\s)\s*(?=[A-Z0-9`\"'(])")

#: Section names by what they hold; a heading is matched on lower-cased words.
_SECTIONS = (
    ("what", ("what does this pr do", "what this pr does", "what", "summary", "description", "overview", "motivation")),
    ("why", ("why", "motivation", "background", "context")),
    ("design", ("design & code changes", "design and code changes", "design", "code changes", "changes", "implementation",
                "fix", "the fix", "solution", "approach", "proposed changes", "main changes", "key changes")),
    ("test", ("test", "tests", "testing", "test plan", "how was this tested")),
    ("breaking", ("breaking", "breaking changes", "breaking change", "compatibility")),
    ("api", ("api and usage example", "api", "usage", "usage example")),
    ("checklist", ("checklist", "checklist before starting", "checklist before submitting")),
)
#: Words of template instructions that are not the author's own.
_TEMPLATE_PHRASES = (
    "add **concise** overview",
    "add concise overview",
    "demonstrate the high-level design",
    "demonstrate how the api changes",
    "for changes that can not be tested by ci",
    "# add code snippet or script",
    "please check all the following items",
    "paste at least one query link",
    "reference related github issues and prs",
    # the title-format notes under "Format the PR title as …", left when its checkbox went
    "{modules}` include",
    "if this pr involves multiple modules",
    "{type}` is in",
    "if this pr breaks any api",
    "[breaking][fsdp, megatron]",
    # the older template's placeholder, copied in as it was (verl #1350, #1891)
    "add one-line overview of what this pr aims",
    "aims to achieve or accomplish",
)
#: Any of :data:`_TEMPLATE_PHRASES` in lower-cased text: one scan per line instead of one per phrase.
_TEMPLATE_PHRASE = re.compile("|".join(re.escape(p) for p in _TEMPLATE_PHRASES))
#: An ASCII line shorter than this holds no phrase (lower-casing keeps its length).
_SHORTEST_PHRASE = min(map(len, _TEMPLATE_PHRASES))


@dataclass(frozen=True, slots=True)
class Description:
    """A parsed PR description.

    ``sections`` maps a section id (``what``, ``why``, ``design``, ``test``,
    ``breaking``, ``api``, ``checklist``, or the lower-cased heading text for others)
    to its cleaned text; ``purpose`` is the first sentence of the ``what`` section (or
    of the text before any heading) when it is a real sentence; ``design_points`` the
    bullet items of the ``design`` section; ``breaking_text`` the ``breaking`` section;
    ``revert_of`` ``"owner/repo#N"``, ``"#N"`` or a commit sha when the body says what it
    reverts; ``mentioned_identifiers`` code spans, ``--flags`` and file paths, in
    first-seen order.
    """

    purpose: str = ""
    design_points: tuple[str, ...] = ()
    breaking_text: str = ""
    sections: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    revert_of: str = ""
    mentioned_identifiers: tuple[str, ...] = ()


_NOT_HEADING_WORD = re.compile(r"[^\w&\s]")


def _section_id(heading: str) -> str:
    text = _NOT_HEADING_WORD.sub(" ", heading.lower())
    text = " ".join(text.split())
    for sid, names in _SECTIONS:
        if text in names:
            return sid
    for sid, names in _SECTIONS:
        if any(text.startswith(n) for n in names if len(n) > 4):
            return sid
    return text


#: GitHub strikethrough (``~~text~~``, no space just inside, within a paragraph: line breaks
#: but no blank line); a ``~~~`` fence line is not one.
_STRUCK = re.compile(r"(?<!~)~~(?![~\s])(?:[^~\n]|\n(?![ \t]*\n)|~(?!~)){1,2000}?(?<![~\s])~~(?!~)")
#: The same, for the other readers of a description (:mod:`bot.engine.history.follows`).
STRUCK = _STRUCK


def _clean(body: str) -> str:
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    body = _COMMENT.sub("", body)
    if "~~" in body:
        # Struck-through words are what the author took back: never their purpose, never a
        # name the diff is checked for.
        body = _STRUCK.sub("", body)
    body = _TAG.sub("", body)
    lines = []
    in_code = False
    skipping = False  # inside a template paragraph being dropped
    code: list[str] = []
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            if in_code:
                # Template placeholder code blocks hold only comments.
                if any(c.strip() and not c.strip().startswith("#") for c in code[1:]):
                    lines.extend(code)
                    lines.append(line)
                code, in_code = [], False
            else:
                code, in_code = [line], True
            continue
        if in_code:
            code.append(line)
            continue
        if skipping and stripped and not stripped.startswith(_BLOCK_START) and not _BULLET.match(line):
            # A hard-wrapped template sentence goes on here (Markdown's lazy continuation)
            # until it ends; the author often writes on the very next line.
            skipping = not stripped.endswith(_SENTENCE_ENDS)
            continue
        skipping = False
        if "[" in line and _UNTICKED.match(line):
            skipping = not stripped.endswith(_SENTENCE_ENDS)
            continue
        if stripped.startswith(">"):
            quoted = stripped.lstrip("> ").lower()
            if not quoted or quoted.startswith("[!") or _TEMPLATE_PHRASE.search(quoted):
                skipping = bool(quoted) and not stripped.endswith(_SENTENCE_ENDS)
                continue
        if (len(stripped) >= _SHORTEST_PHRASE or not stripped.isascii()) and _TEMPLATE_PHRASE.search(stripped.lower()):
            skipping = not stripped.endswith(_SENTENCE_ENDS)
            continue
        lines.append(line)
    if in_code:
        lines.extend(code)
    return "\n".join(lines)


#: How a template sentence ends (then the author's own words may follow on the next line).
_SENTENCE_ENDS = (".", "!", "?", ":")

_LINK = re.compile(r"!?\[([^\]\n]{0,200})\]\([^)\s]{0,500}\)")
_BARE_URL = re.compile(r"^\s*<?https?://\S+>?\s*$")


_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def _first_sentence(text: str, *, over_template: bool = False) -> str:
    """The first informative sentence of ``text`` (see :func:`_informative`). A
    paragraph's hard-wrapped lines are read as one text up to the sentence end; list
    items, tables, code, quotes, HTML and images are skipped; a link keeps its text.
    With ``over_template`` (the "what" section, whose template opens with a quote) a quote
    that opens ``text`` is read as the author's own words."""
    opening = over_template
    for paragraph in _PARAGRAPH_BREAK.split(text):
        lines = [line.strip() for line in paragraph.split("\n") if line.strip() and not _BARE_URL.match(line)]
        if opening and lines and lines[0].startswith(">") and not lines[0].lstrip("> ").startswith("[!"):
            # Authors often write over the template's "> Add concise overview …" and keep its
            # quote marker (the template's own words were dropped by _clean): their text.
            # Only there: a quote elsewhere is someone else's words (the issue's "… now
            # crashes"), never what this change does.
            lines = [line.lstrip(">").strip() for line in lines if line.lstrip(">").strip()]
        opening = opening and not lines
        if lines and _BULLET.match(lines[0]) and not _UNTICKED.match(lines[0]):
            # A list: its first item, read to its end over hard-wrapped lines.
            lines = [_bullets("\n".join(lines))[0]]
        para = _BOLD_UNDERSCORE.sub(r"\1", _LINK.sub(_link_text, " ".join(lines)).replace("**", ""))
        # An aside pointing elsewhere ("(follow-up to #7060; …)") is dropped, the sentence kept.
        para = _REFERRING_ASIDE.sub("", para)
        if not para or para.startswith(("|", "```", "!", "<", ">")) or _BULLET.match(para):
            continue
        # "e.g. `x`" is no sentence end.
        if _may_abbreviate(para):
            para = _ABBREVIATION.sub(lambda m: m.group(0).replace(".", "\0"), para)
        for sentence in _SENTENCE_END.split(para):
            sentence = sentence.replace("\0", ".").strip()
            # "Fix: sort buffers by name …" says it after its label.
            labelled = _LABEL.match(sentence)
            if labelled is not None and len(sentence) > labelled.end():
                rest = sentence[labelled.end() :]
                sentence = rest[:1].upper() + rest[1:]
            cut = _TRAILING_PARTICIPLE.search(sentence)
            if cut is not None:
                sentence = sentence[: cut.start()] + "."
            if sentence.endswith(" by:"):
                # "… match canonical GRPO by:" before its list of means says what it does.
                sentence = sentence[: -len(" by:")] + "."
            if sentence.endswith(":") and not _dangling(sentence.lower()) and sentence.split()[-1].lower() not in _INTRODUCING:
                # "Fix two crashes … during prefill:" before its list is a whole sentence.
                sentence = sentence[:-1].rstrip() + "."
            if len(sentence) > MAX_PURPOSE_CHARS:
                sentence = _main_clause(sentence)
                if len(sentence) > MAX_PURPOSE_CHARS:
                    continue  # too long to quote whole; a later sentence may do
            if _informative(sentence):
                return sentence[:300]
    return ""


#: Characters of an author's sentence a summary quotes whole.
MAX_PURPOSE_CHARS = 240
#: Where a long sentence may be cut, keeping a whole main clause: before the list a
#: colon opens, a dash or semicolon aside, or a purpose clause ("so that …").
_CLAUSE_CUT = re.compile(r": | — | -- |; |,? so that |,? so ")


def _main_clause(sentence: str) -> str:
    """``sentence`` cut at its first clause boundary (:data:`_CLAUSE_CUT`) after eight
    words, ended with a full stop; unchanged when there is none."""
    for m in _CLAUSE_CUT.finditer(sentence):
        head = sentence[: m.start()].rstrip(" ,")
        if len(head.split()) >= 8 and head.count("(") == head.count(")") and head.count("`") % 2 == 0:
            return head + "."
    return sentence


#: A label before the sentence that says what the change does ("Fix: sort …").
_LABEL = re.compile(r"(?:fix|the fix|solution|change|changes|summary|tl;dr|in short)\s*:\s+(?=[a-z])", re.I)
#: Last words of a sentence that only introduces what follows ("… are as follows:").
_INTRODUCING = frozenset({"follows:", "following:", "below:", "are:", "is:", "include:", "includes:", "here:", "as:", "like:"})


def _link_text(m: re.Match[str]) -> str:
    # An image says nothing a sentence can keep; a link's text reads on without its URL.
    return "" if m.group(0).startswith("!") else m.group(1)


#: ``__bold__`` (not a dunder name such as ``Class.__init__``).
_BOLD_UNDERSCORE = re.compile(r"(?<![\w.])__(?=\S)([^_\n]+?)(?<=\S)__(?![\w])")
#: A parenthesised aside holding a reference, link or "follow-up to".
_REFERRING_ASIDE = re.compile(r"\s?\((?=[^()]*(?:#\d|https?://|follow-?up|see ))[^()]*\)")
_ABBREVIATION = re.compile(r"\b(?:e\.g\.|i\.e\.|etc\.|vs\.|approx\.|cf\.)", re.I)


def _may_abbreviate(text: str) -> bool:
    """False when :data:`_ABBREVIATION` cannot match ``text``: ASCII text (lower-cased, it
    holds the same letters) with none of its words. Other text may: case-insensitive
    matching also takes letters such as ``ſ`` for ``s``."""
    if not text.isascii():
        return True
    low = text.lower()
    return "e.g." in low or "i.e." in low or "etc." in low or "vs." in low or "approx." in low or "cf." in low
#: Openings of sentences that point elsewhere instead of saying what the change does.
_POINTERS = ("see ", "please see", "please refer", "refer to", "for details", "for more details", "related:", "cc ", "ref:")
#: Openings of stories, greetings and notes: context, not what the change does.
_STORIES = ("hi ", "hi,", "hello", "hey ", "dear ", "thanks", "thank you", "as discussed", "as title", "as the title",
            "follow-up", "follow up", "followup", "this is a follow", "tl;dr", "note:", "update:", "fyi", "previously",
            "currently", "before this", "in the past", "recently", "when ", "if ", "while ",
            # a clause of circumstance first: what follows states a situation ("After migrating …,
            # there is no longer …"), not what this change does
            "after ", "since ", "because ", "as ")  # fmt: skip
#: Words of PR templates that are no one's own.
_TEMPLATE_WORDS = ("if possible", "specific changes", "what does this pr do", "concise overview", "describe your change",
                   "checklist", "- [ ]",
                   # a sentence pointing at what comes after it says nothing alone
                   "the following", "as follows", " below")  # fmt: skip
#: Last words that leave a sentence unfinished (its link or code block was on the next line).
_DANGLING = frozenset("a an the at to in of from by with on for and or as via see here below following: e.g. i.e.".split())
#: ``owner/repo#12`` is a reference too, and "that PR" points at one the sentence does not name.
#: A login is letters, digits and dashes: ``@function_tool`` and ``@torch.no_grad`` are
#: decorators, not mentions.
#: ("a + b" is arithmetic or a pair, not a joined list; "- " and "* " mid-sentence are items.)
_REFERENCE = re.compile(r"https?://|www\.|[\w.-]/[\w.-]+#\d|(?i:that|the above|the previous) (?i:pr|pull request|commit)\b|(?<![\w.])@[A-Za-z0-9-]+(?!\w|\.\w)|(?<![\w&])#\d+|:\s*\d[.)]\s|(?:^|\s)[-*]\s|^\+\s|\s\d{1,2}[.)]$")
#: What a sentence may start with before its verb ("This PR adds", "We now", "According to #1, …").
_LEAD_IN = re.compile(
    r"^(?:(?:this|the|our|my)\s+(?:current\s+)?(?:pr|pull request|change|commit|patch)\s+|in this pr,?\s+|here,?\s+|"
    r"according to [^,]{1,60},\s*|(?:we|i|it)\s+)(?:also\s+|mainly\s+|simply\s+|just\s+|will\s+|now\s+)?",
    re.I,
)
#: "also" among a sentence's first words: it adds to a change said before it.
_ALSO = re.compile(r"(?:\S+\s+){0,3}also\b")
#: A last clause of one "-ing" word: what it went on to name was a link or reference now gone
#: ("…, resolving." after "resolving #123" lost its reference).
_TRAILING_PARTICIPLE = re.compile(r",\s*\w+ing\s*\.?$")
#: Verbs that say what a change does (with -s, -es, -ed, -d, -ing forms).
_CHANGE_VERBS = frozenset(
    """add fix support make use remove replace introduce enable disable allow implement refactor update move rename
    avoid prevent ensure prioritize prioritise set change switch bump upgrade downgrade drop delete skip ignore handle
    correct improve optimize optimise reduce increase expose extend pass forward propagate unify split merge migrate
    revert restore deprecate document clarify clean simplify speed align adapt guard raise validate check register
    load save convert cast patch tweak limit cap wrap reuse respect honor honour let keep apply return log solve
    resolve separate decouple integrate provide stop start default defer cache sync fall gate lower bound
    pin unpin install configure modify rewrite adjust persist emit warn wire attach construct compute normalize
    normalise preserve retain store write read expand fuse shard free release reset clear offload broadcast gather
    reorder sort filter mask pad truncate clamp clip scale retry detect report print show display record track count
    require accept reject forbid restrict relax route dispatch schedule launch spawn initialize initialise create
    build generate produce parse serialize serialise deserialize encode decode tokenize rebuild reload override
    overwrite replicate share lend trim repair fill leverage shrink grow extract inline isolate defer await""".split()
)
#: Subjects that say nothing without an earlier sentence ("What's added is that it now …").
_VAGUE_SUBJECTS = ("it ", "it's", "what", "this is", "that ", "which ", "they ", "there ")
#: Objects that refer back to an earlier sentence.
_BACK_REFERENCES = frozenset({"it", "this", "that", "them", "these", "those", "by"})
#: Words that refer back only when nothing follows them but "of" ("fixes both of them",
#: "fixes all", not "passes all outputs").
_BACK_QUANTIFIERS = frozenset({"both", "all"})
#: Where a sentence's main clause ends: a comma or a subordinating word.
_SUBORDINATE = re.compile(r",|\b(?:when|if|so|because|that|which|where|while|since|after|before|unless|until)\b", re.I)
#: A finite verb after the subject ("… do not carry …").
_FINITE = re.compile(r"\b(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would)\b", re.I)
_IRREGULAR = frozenset({"made", "kept", "let", "set", "split", "fell"})


def _informative(sentence: str) -> bool:
    """True when ``sentence`` says what the change does: at least five words; no link,
    mention, issue reference, template words or inline list; not cut off (balanced
    brackets and code spans, no ending at ":" or a dangling word); no greeting, story
    or pointer; and a verb of change (:data:`_CHANGE_VERBS`) opens it after an optional
    lead-in (:data:`_LEAD_IN`), or it says what "now" or "no longer" happens."""
    lowered = sentence.lower()
    # "Convert `x` to `y`." names what it changes in four words.
    if len(sentence.split()) < (3 if "`" in sentence else 5) or lowered.startswith(("fixes #", "closes #", "resolves #", "this reverts commit")):
        return False
    if lowered.startswith(_POINTERS + _STORIES) or _dangling(lowered) or sentence.rstrip().endswith((":", ",", ";")):
        return False
    if _REFERENCE.search(sentence) or any(w in lowered for w in _TEMPLATE_WORDS):
        return False
    if sentence.count("(") != sentence.count(")") or sentence.count("[") != sentence.count("]") or sentence.count("`") % 2:
        return False
    if (" now " in f" {lowered} " or " no longer " in lowered or " should be " in lowered) and not lowered.startswith(_VAGUE_SUBJECTS):
        return True
    if _ALSO.match(lowered):
        return False  # "We also fixed …": a second change, the first one said elsewhere
    first = _LEAD_IN.sub("", sentence, count=1).split(maxsplit=2)
    quantified = len(first) > 1 and first[1].lower() in _BACK_QUANTIFIERS
    if quantified and (len(first) < 3 or re.match(r"of\b", first[2].lower())):
        return False
    if len(first) > 1 and first[1].lower() in _BACK_REFERENCES:
        return False  # "This PR fixes it by …": "it" is in a sentence not quoted
    if not first or not _change_verb(first[0].lower().strip("`*_\"'")):
        return False
    # "Released `megatron-core` 0.18.0 and 0.18.2 do not carry the fix": the opening word
    # qualifies the subject of a later verb; it says nothing this change does.
    main = _SUBORDINATE.split(_LEAD_IN.sub("", sentence, count=1), maxsplit=1)[0]
    return not (first[0].lower().endswith("ed") and _FINITE.search(main))


def _change_verb(word: str) -> bool:
    # "Auto-convert", "Re-support": the verb is after the prefix.
    word = word.removeprefix("auto-").removeprefix("re-")
    if word in _CHANGE_VERBS or word in _IRREGULAR:
        return True
    # No "-ing": "Using X with Y causes Z" opens a story, not a change.
    for suffix in ("s", "es", "ed", "d"):
        stem = word.removesuffix(suffix)
        if stem != word and (stem in _CHANGE_VERBS or (len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in _CHANGE_VERBS)):
            return True
    return False


def _dangling(lowered: str) -> bool:
    words = lowered.rstrip(".!?").split()
    return bool(words) and words[-1] in _DANGLING


def _identifiers(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for m in _CODE_SPAN.finditer(text):
        span = m.group(1).strip()
        if _PATH.fullmatch(span) or _FLAG.fullmatch(span):
            found[span] = None
        elif _IDENTIFIER.fullmatch(span):
            found[span.removesuffix("()")] = None
        else:
            key = span.split("=", 1)[0].strip()
            if key != span and _IDENTIFIER.fullmatch(key):
                found[key] = None  # ``trainer.foo=True`` mentions the key
    prose = _CODE_SPAN.sub(" ", text)
    for flag in _flags(prose):
        found[flag] = None
    # A path never spans lines, so only lines with a slash are searched (the look-behind
    # of _PATH is slow where it has to be tried at every position of long prose).
    offset = 0
    for line in prose.split("\n"):
        if "/" in line:
            for m in _PATH.finditer(line):
                start = offset + m.start()
                if "://" not in prose[max(0, start - 12) : start] and not m.group(1).startswith(("www.", "github.com")):
                    found[m.group(1)] = None
        offset += len(line) + 1
    return tuple([i for i in found if len(i) >= 3 and not _placeholder(i)][:_MAX_IDENTIFIERS])


#: Parts of a name that stand for "any" (``save_xx`` for the ``should_save_*`` properties).
_WILDCARD_PARTS = frozenset({"xx", "xxx", "xxxx", "yy", "yyy", "foo", "bar"})


def _placeholder(name: str) -> bool:
    """True for a name written as a pattern, not one identifier: ``save_xx``, ``get_*``,
    ``xxx_config`` (fresh-n #1350: "the description says this change adds save_xx")."""
    return "*" in name or any(part.lower() in _WILDCARD_PARTS for part in re.split(r"[_.\-]", name))


#: Lines that start a block of their own and so end a list item's paragraph.
_BLOCK_START = ("#", "```", "~~~", "|", ">", "<")


def _bullets(text: str) -> tuple[str, ...]:
    """The list items of ``text``, each as one line. A hard-wrapped item goes on over
    the following non-blank lines (Markdown's lazy continuation) until a blank line,
    another item or a line that starts a block of its own (heading, fence, table,
    quote, HTML)."""
    items: list[list[str]] = []
    open_item = False
    for line in text.split("\n"):
        stripped = line.strip()
        m = _BULLET.match(line)
        if m is not None:
            items.append([m.group(1).strip()])
            open_item = True
        elif open_item and stripped and not stripped.startswith(_BLOCK_START):
            items[-1].append(stripped)
        else:
            open_item = False
    return tuple(" ".join(parts) for parts in items)


def _flags(text: str) -> list[str]:
    """What ``_FLAG.finditer(text)`` finds, found faster. A candidate rejected for the
    character before it cannot hide a real flag: every flag starting inside it follows
    a word character or dash too."""
    out = []
    for m in _FLAG_CANDIDATE.finditer(text):
        start = m.start()
        if start == 0 or _WORD_OR_DASH.match(text, start - 1) is None:
            out.append(m.group(0))
    return out


def parse_description(body: object) -> Description:
    """Parse a PR body (GitHub's ``pull.body``: Markdown, may be ``None``) into a :class:`Description`."""
    if not isinstance(body, str) or not body.strip():
        return Description()
    raw = body[:MAX_BODY]
    revert = ""
    # Case-insensitive searches cannot skip ahead; most bodies never say "revert".
    if "revert" in raw.lower():
        m = _REVERT_PR.search(raw)
        if m is not None:
            revert = f"{m.group(1)}#{m.group(2)}" if m.group(1) else f"#{m.group(2)}"
        elif (m2 := _REVERT_SHA.search(raw)) is not None:
            revert = m2.group(1)
    text = _clean(raw)
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.split("\n"):
        h = _HEADING.match(line) if line[:4].lstrip()[:1] == "#" else None  # after at most three spaces
        if h is not None:
            current = _section_id(h.group(2))
            sections.setdefault(current, [])
            continue
        sections.setdefault(current, []).append(line)
    joined = {k: "\n".join(v).strip() for k, v in sections.items()}
    joined = {k: v for k, v in joined.items() if v}
    # A body without a "what" section ("## Problem", "## Fix") says what it does in its design
    # or fix section: its first sentence or list item.
    purpose = _first_sentence(joined.get("what", ""), over_template=True) or _first_sentence(joined.get("", "")) or _first_sentence(joined.get("design", ""))
    points = _bullets(joined.get("design", ""))
    return Description(
        purpose=purpose,
        design_points=points,
        breaking_text=joined.get("breaking", ""),
        sections=MappingProxyType(joined),
        revert_of=revert,
        mentioned_identifiers=_identifiers("\n".join(v for k, v in joined.items() if k != "checklist")),
    )


def check_against_diff(
    description: Description, diff: DiffAnalysis, patches: Sequence[object] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split ``description.mentioned_identifiers`` into ``(present, absent)`` in the merged diff.

    An identifier is present when it is a changed file's path (or its end), a touched,
    added or removed symbol (or the last part of one), a changed config key or field
    (or its end), a dependency name, or it appears anywhere in the patches: added,
    removed and context lines and hunk headers of every file, tests included
    (``patches``, the raw unified diffs; without them the added and removed lines).
    A dotted name is present when its last part is (``parser._parse_call`` in a test
    is the method ``_parse_call``); a flag ``--foo-bar`` when ``foo_bar`` is (argparse's
    spelling). Order is kept.
    """
    names: set[str] = set()
    for f in diff.files:
        names.add(f.path)
        for group in (f.symbols_touched, f.config_keys_added, f.config_keys_removed, f.config_keys_changed,
                      f.fields_added, f.fields_removed, f.fields_changed):  # fmt: skip
            for n in group:
                names.add(n)
                names.add(n.rpartition(".")[2])
        for d in (*f.definitions_added, *f.definitions_removed, *f.definitions_modified):
            names.add(d.name)
            names.add(d.name.rpartition(".")[2])
        names.update(d.name for d in f.dependency_changes)
    present: list[str] = []
    absent: list[str] = []
    texts = None
    orders: list[int | set[tuple[str, ...]]] = [0]  # names looked for by word order, then the patches' names
    for ident in description.mentioned_identifiers:
        ok = (
            ident in names
            or any(f.path.endswith("/" + ident) for f in diff.files)
            or ("." in ident and any(n.endswith("." + ident) for n in names))
            or _module_of_changed_file(ident, diff)
            or _method_of_changed_class(ident, names)
        )
        if not ok:
            if texts is None:
                texts = _patch_text(diff, patches)
            ok = any(v in texts for v in _spellings(ident)) or reordered(ident, texts, orders)
        (present if ok else absent).append(ident)
    return tuple(present), tuple(absent)


def _module_of_changed_file(ident: str, diff: DiffAnalysis) -> bool:
    """True when ``ident`` names a changed file's module or package as Python spells it:
    ``verl.model_merger`` for ``verl/model_merger/base.py``, ``glm4v`` for
    ``verl/models/transformers/glm4v.py`` (one path part, at least four characters)."""
    if "/" in ident or not _IDENTIFIER.fullmatch(ident):
        return False
    if "." in ident:
        folder = ident.replace(".", "/")
        return any(f.path.startswith(folder + "/") or f.path == folder + ".py" or f"/{folder}/" in f.path
                   or f.path.endswith(f"/{folder}.py") for f in diff.files)  # fmt: skip
    if len(ident) < 4:
        return False
    return any(ident in f.path.removesuffix(".py").split("/") for f in diff.files)


def _method_of_changed_class(ident: str, names: set[str]) -> bool:
    """True when ``ident`` is ``Class.method`` and the diff changes ``Class`` (a hunk deep in
    a method shows only its class in the diff; the method's name may not appear at all)."""
    owner, dot, method = ident.rpartition(".")
    return bool(dot) and owner in names and owner[:1].isupper() and method.isidentifier()


#: Characters of patch text searched (a 3,000-file pull request stays fast).
_MAX_PATCH_TEXT = 4_000_000


def _patch_text(diff: DiffAnalysis, patches: Sequence[object]) -> str:
    texts = [p for p in patches if isinstance(p, str)]
    if not texts:
        texts = ["\n".join((*f.added_lines, *f.removed_lines)) for f in diff.files]
    return "\n".join(texts)[:_MAX_PATCH_TEXT]


def _spellings(ident: str) -> tuple[str, ...]:
    """How ``ident`` may be written in code: itself, a dotted name's last part, a flag's
    name with dashes or underscores."""
    out = [ident]
    if ident.startswith("--"):
        name = ident[2:]
        out += [name, name.replace("-", "_")]
    elif "." in ident and not _PATH.fullmatch(ident):
        last = ident.rpartition(".")[2]
        if len(last) >= 4:
            out.append(last)
    return tuple(out)


#: Words that make a sentence promise something of this change ("adds `--foo`").
_PROMISE = re.compile(r"\b(?:add|adds|added|adding|introduc\w*|new|expose[sd]?|provides?|supports?)\b", re.I)


def _may_promise(text: str) -> bool:
    """False when :data:`_PROMISE` cannot match ``text`` (an ASCII text without any of its
    stems; see :func:`_may_abbreviate` for other text)."""
    if not text.isascii():
        return True
    low = text.lower()
    return "add" in low or "introduc" in low or "new" in low or "expose" in low or "provide" in low or "support" in low
#: Sections whose sentences say what this change does (not background, tests or setup).
_PROMISE_SECTIONS = ("what", "design", "api", "")
#: Headings of sections that list what the change brings ("Main code changes", "New model support").
_PROMISE_HEADING = re.compile(r"\b(?:changes?|support|adds?|added|new|features?|implementation)\b")
#: A name that looks like code: snake_case, dotted, or CamelCase with an inner capital.
_CODE_NAME = re.compile(r"_|\.|[a-z][A-Z]")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


_PARA_OR_ITEM = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")


def promised_missing(description: Description, absent: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(name, sentence)`` for each absent flag, option or function the description
    promises as part of this change: named in a code span (or as ``--flag``) in a
    sentence of the what/design/API text that says it adds, introduces or supports it.
    Paths, background, test commands and code blocks (benchmark settings) are not
    promises."""
    wanted = [a for a in absent if not _PATH.fullmatch(a) and (a.startswith("--") or _CODE_NAME.search(a))]
    if not wanted:
        return ()
    out: dict[str, str] = {}
    for sid, body in description.sections.items():
        if sid in _PROMISE_SECTIONS or not _PROMISE_HEADING.search(sid):
            continue
        # A section headed "Main code changes" / "Model support": its list and table
        # rows are the author's list of what this change brings, verb or not.
        for line in _FENCE.sub("", body).split("\n"):
            row = line.strip()
            if row.startswith("|") or _BULLET.match(line):
                for m in _CODE_SPAN.finditer(row):
                    name = m.group(1).strip().split("=", 1)[0].strip().removesuffix("()")
                    if name in wanted and name not in out:
                        out[name] = row[:300]
    for sid in _PROMISE_SECTIONS:
        text = _FENCE.sub("", description.sections.get(sid, ""))
        for para in _PARA_OR_ITEM.split(text):
            for sentence in _SENTENCE_END.split(" ".join(para.split())):
                for m in _PROMISE.finditer(sentence) if _may_promise(sentence) else ():
                    if _AFTER_PREPOSITION.search(sentence, max(0, m.start() - 16), m.start()):
                        continue  # "… for new abstract `BaseLoss`": what it is for, not what it adds
                    # The promised thing is the first name after the word, close to it:
                    # "adds a `--foo` flag", not "a new backend ... `bar`" or "#12 (`x`) adds".
                    name = _promised_name(sentence[m.end() : m.end() + _PROMISE_REACH])
                    if name in wanted and name not in out:
                        out[name] = sentence[:300]
    return tuple((n, out[n]) for n in wanted if n in out)


#: A preposition just before a promise word ("for new", "of added"): the name after it is
#: what the change is for or about, not something it adds. Searched in the 16 characters
#: before the word only (the longest preposition and article fit), so a hostile 64 KB
#: paragraph of promise words costs no quadratic scan.
_AFTER_PREPOSITION = re.compile(r"\b(?:for|of|from|to|with|by|on|in|into|against|than|like|over)\s+(?:the\s+|a\s+|an\s+)?\Z", re.I)
#: Characters after a promise word in which the promised name must start.
_PROMISE_REACH = 60
_FIRST_NAME = re.compile(r"`([^`\n]{1,200})`|(?<![\w-])(--[A-Za-z][\w-]{1,60})")


def _promised_name(text: str) -> str:
    m = _FIRST_NAME.search(text)
    if m is None:
        return ""
    if m.group(2):
        return m.group(2)
    span = m.group(1).strip()
    key = span.split("=", 1)[0].strip()
    return key.removesuffix("()")
