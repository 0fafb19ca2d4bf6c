"""The guide's one-sentence summary: what changed in behaviour, or a plain true count.

Pure. :func:`summary_claim` picks, in this order, the first source that qualifies:

0. ``author`` -- English only: the author's first informative sentence of the
   description (:attr:`bot.engine.analysis.description.Description.purpose`) when it
   names identifiers, files or models and every one occurs in the diff's changed lines,
   and it is not the title restated (raters took a quoted line or an old → new
   condition for no summary where the author's sentence said the change); a changed
   default that is the small pull request's one change (2.) still comes first;
1. ``edit`` -- for a small pull request, the most important exact change
   (:func:`bot.engine.focus.edits.main_edit`, worded by
   :func:`bot.engine.focus.edits.edit_sentence`);
2. ``fact`` -- for a small pull request whose one change is a behaviour fact (a
   changed default, a removed config key, an environment variable added or removed,
   a dependency floor raised), that fact;
3. ``quote`` -- when the only file that is not a test changed a line or two, those
   lines (:func:`one_quote`); for documentation, a quote cut off mid-line gives way to 7.;
4. ``new_file`` -- when that only file is new: the file, its size and what it defines;
5. ``tests`` -- when the pull request changes only tests and one file adds them, those tests;
6. ``author`` -- the author's sentence as in 0. that names nothing but is long enough
   (:data:`_VAGUE_WORDS`) to say more than a count;
7. ``docs`` -- a documentation-only pull request: the pages it adds (with their first
   heading), moves, removes or edits (with the headings it adds) (:func:`docs_summary`);
8. ``edit_among`` -- the weightiest exact change, said to be one of several;
   1. and 8. only when the edit's lines are at least half the changed code lines
   (:func:`covers_most`);
9. ``function`` -- the change is inside one function or method: which, and whether
   code was added, removed or changed (:func:`function_summary`);
10. ``point`` -- the guide's strongest exact focus point (a behaviour or breaking fact,
    an exact edit, a new or removed definition or config key, a dependency change), with
    its file, and how many more exact changes other files hold
    (:func:`bot.engine.render.summary_point.point_summary`);
11. ``only`` -- a pull request that changes tests, CI files, examples or documentation
    only, all of one kind: which files (:func:`bot.engine.render.summary_point.only_kind_summary`);
12. ``count`` -- a plain true count of what changed ("Changes 3 source files under
    `verl/trainer/` (+40/−12).").

There is no template guess ("Fix in AREA: changes X") and no restated title: when
nothing qualifies the summary says less. Each choice carries the evidence it rests on
(:class:`bot.engine.analysis.model.Evidence`), for the claim ledger.
"""

from __future__ import annotations

import builtins
import html
import posixpath
import re
from typing import NamedTuple, Protocol

from bot.engine.analysis.model import DiffAnalysis, Evidence
from bot.engine.focus import edits
from bot.engine.render import sanitize
from bot.engine.render.messages import t
from bot.engine.render.summary_point import only_kind_summary, point_summary
from bot.engine.snapshot import PullRequestSnapshot
from bot.locale import N_, NP_


class GuideFacts(Protocol):
    """What a summary reads of :class:`bot.engine.render.guide.GuideFacts` (which imports
    this module, so the shape is named here rather than imported)."""

    snapshot: PullRequestSnapshot
    analysis: DiffAnalysis
    purpose: str | None
    focus: tuple  # the guide's focus points (bot.engine.focus.model.FocusPoint), heaviest first


#: Summary sources, in the order they are tried.
SOURCES = ("edit", "fact", "quote", "new_file", "tests", "author", "docs", "edit_among", "function", "point", "only", "count")

#: A pull request is "small" (its summary may be one exact change) up to these many
#: changed lines and files of code that is neither test nor docs.
SMALL_LINES = 60
SMALL_FILES = 4
#: A behaviour fact is "the one change" only in a file changed this little.
FACT_FILE_LINES = 20
#: Behaviour fact kinds a summary may state, with their sentence.
_FACT_KINDS = ("default_changed", "key_removed", "env_added", "env_removed", "env_default_changed", "dep_floor_raised")
#: Files whose dependency facts are the package's own (a Dockerfile's pins may hold for
#: one architecture only).
_DEP_FILES = re.compile(r"(?:^|/)(?:requirements[\w.-]*\.txt|pyproject\.toml|setup\.py|setup\.cfg)$")
#: Characters of changed lines searched for the names an author's sentence uses; a
#: bigger diff is searched in its first lines only (the sentence is then not used
#: unless its names are found there).
_HAYSTACK_CHARS = 2_000_000
#: A sentence naming nothing the diff holds must have at least this many words to say
#: more than a count of the files.
_VAGUE_WORDS = 8
#: Diff evidence lines attached to an author's sentence.
_MAX_NAME_EVIDENCE = 3


class Summary(NamedTuple):
    """A summary sentence (Markdown, PR text neutralised), its source (one of
    :data:`SOURCES`) and the evidence it rests on."""

    text: str
    source: str
    evidence: tuple[Evidence, ...]


def summary_line(facts: GuideFacts, lang: str, *, plain: bool = False) -> str:
    """The one-sentence summary in ``lang``: Markdown with PR text neutralised, or with
    ``plain`` plain text without code spans or HTML entities (JSON ``summary``)."""
    text = choose(facts, lang).text
    return plain_text(text) if plain else text


def summary_claim(facts: GuideFacts, lang: str) -> tuple[str, tuple[Evidence, ...]]:
    """``(plain sentence, evidence)``: the summary as the claim ledger shows it."""
    s = choose(facts, lang)
    return plain_text(s.text), s.evidence


def summary_source(facts: GuideFacts, lang: str) -> str:
    """Which of :data:`SOURCES` the summary comes from."""
    return choose(facts, lang).source


_CODE_SPAN = re.compile(r"(`+) ?(.*?) ?\1")


def _span_text(m: re.Match[str]) -> str:
    return m.group(2)


def plain_text(text: str) -> str:
    """Markdown sentence -> plain text: code spans unwrapped, entities and escapes undone."""
    if "`" in text:
        text = _CODE_SPAN.sub(_span_text, text)
    return html.unescape(text.replace("\\[", "[").replace("\\]", "]"))


def choose(facts: GuideFacts, lang: str) -> Summary:
    """The summary of ``facts`` in ``lang`` (see the module docstring for the order).
    Raises ``KeyError`` for an unknown language."""
    # One guide asks several times (the sentence, the scale line, each shrink pass, JSON);
    # the last answer is kept with the facts object itself, so a new guide never reuses it.
    last = _last.get(lang)
    if last is not None and last[0] is facts:
        return last[1]
    summary = _choose(facts, lang)
    _last[lang] = (facts, summary)
    return summary


#: The last summary chosen per language: ``{lang: (facts, summary)}``.
_last: dict[str, tuple[object, Summary]] = {}


def _choose(facts: GuideFacts, lang: str) -> Summary:
    if lang not in ("en", "zh"):
        raise KeyError(f"unsupported language {lang!r}")
    analysis = facts.analysis
    author = author_evidence(facts.purpose, facts.snapshot.title, analysis) if lang == "en" and facts.purpose else None
    fact = one_fact(analysis) if is_small(analysis) else None
    if author is not None and sentence_names(facts.purpose) and fact is None:
        # The author's sentence, its names found in the changed lines, says what an exact
        # line cannot: raters took a quoted line or an old → new condition for no summary.
        return Summary(_end(sanitize.quote(facts.purpose, 240), lang), "author", author)
    if is_small(analysis):
        edit = edits.main_edit(analysis)
        if edit is not None and covers_most(edit, analysis):
            sentence = edits.edit_sentence(edit, lang).strip()
            if sentence:
                return Summary(_end(sentence, lang), "edit", (edit.evidence,))
        if fact is not None:
            return Summary(fact_sentence(fact, lang), "fact", (Evidence(fact.path, fact.line, fact.line, fact.old, fact.new),))
    quoted = one_quote(analysis)
    if quoted is not None:
        sentence = edits.edit_sentence(quoted, lang).strip()
        pages = docs_summary(analysis, lang) if "…" in sentence else None
        if pages is not None and _says_more_than_edits(analysis):
            return pages  # a documentation line cut off mid-word says less than the page it is on
        return Summary(_end(sentence, lang), "quote", (quoted.evidence,))
    added = new_file(analysis)
    if added is not None:
        names = tuple(d.name for d in added.definitions_added if "." not in d.name)[:3]
        params = {"file": added.path, "count": added.additions, "names": names}
        key = NP_("summary.new_file.defines", "summary.new_file.defines") if names else NP_("summary.new_file", "summary.new_file")
        text = t(key, lang, params)
        return Summary(_end(text, lang), "new_file", (Evidence(added.path, new=f"added, {added.additions} lines", source="metadata"),))
    tested = tests_only(analysis)
    if tested is not None:
        text = t("tests.added", lang, {"count": len(tested.tests_added), "file": tested.path, "names": tuple(tested.tests_added[:4])})
        return Summary(_end(text[:1].upper() + text[1:], lang), "tests", (Evidence(tested.path, new=", ".join(tested.tests_added[:4])),))
    if author is not None:
        return Summary(_end(sanitize.quote(facts.purpose, 240), lang), "author", author)
    pages = docs_summary(analysis, lang)
    if pages is not None:
        return pages
    # A count says what changed in no way a reader can use; one exact change, said to be
    # one of several, does (raters took "Changes 3 source files" for no summary at all).
    edit = edits.leading_edit(analysis)
    if edit is not None and covers_most(edit, analysis):
        sentence = edits.edit_sentence(edit, lang).strip()
        if sentence:
            return Summary(_end(t("summary.among", lang, {"change": sentence}, raw=True), lang), "edit_among", (edit.evidence,))
    one = function_summary(analysis, lang)
    if one is not None:
        return one
    # The count is the last resort: the guide's strongest exact focus point says what changed.
    title = facts.snapshot.title
    exact = point_summary(getattr(facts, "focus", ()), analysis, lang, reject=lambda en: restates(plain_text(en), title))
    if exact is not None:
        return Summary(_end(exact.text, lang), "point", exact.evidence)
    only = only_kind_summary(analysis, lang)
    if only is not None:
        return Summary(_end(only.text, lang), "only", only.evidence)
    return count_summary(facts, lang)


def covers_most(edit, analysis: DiffAnalysis) -> bool:
    """True when the lines of ``edit`` (its old and new statement) are at least half the
    pull request's changed code lines (blank and comment lines left out, tests and docs
    too): one edit is the summary only of a change it mostly is (a condition widened in
    a 1,000-line integration is not what that integration does)."""
    size = sum(len(text.splitlines()) or 1 for text in (edit.old, edit.new) if text)
    total = 0
    for f in analysis.files:
        if f.counts_as_code and f.kind not in ("test", "docs"):
            lines = f.added_lines + f.removed_lines
            # Without its lines (a patch GitHub left out) a file counts all it changed.
            total += sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#")) if lines else f.changes
            if 2 * size < total:
                return False
    return True


def _only_file(analysis: DiffAnalysis):
    """The only changed file that is not a test, generated or binary, or None."""
    files = [f for f in analysis.files if f.kind not in ("test", "generated", "binary")]
    return files[0] if len(files) == 1 else None


def one_quote(analysis: DiffAnalysis):
    """The pull request's whole change as one quote (:attr:`FileAnalysis.quote`, set only on a
    file without exact edits), or None: when the only file that is not a test, generated or
    binary changed a line or two."""
    only = _only_file(analysis)
    return only.quote if only is not None else None


def new_file(analysis: DiffAnalysis):
    """The only file that is not a test, generated or binary, when the pull request adds it
    whole (a new script, workflow or module), or None."""
    only = _only_file(analysis)
    return only if only is not None and only.status == "added" and only.additions else None


def tests_only(analysis: DiffAnalysis):
    """The one test file that adds tests when the pull request changes only tests, or None."""
    files = [f for f in analysis.files if f.kind not in ("generated", "binary")]
    if not files or any(f.kind != "test" for f in files):
        return None
    adding = [f for f in files if f.tests_added]
    return adding[0] if len(adding) == 1 else None


def is_small(analysis: DiffAnalysis) -> bool:
    """At most :data:`SMALL_LINES` changed lines in at most :data:`SMALL_FILES` files of code
    other than tests and docs (and at least one such file)."""
    code = [f for f in analysis.files if f.counts_as_code and f.kind not in ("test", "docs")]
    return 0 < len(code) <= SMALL_FILES and sum(f.changes for f in code) <= SMALL_LINES


def one_fact(analysis: DiffAnalysis):
    """The behaviour fact that is the pull request's one change, or None: the only fact
    of :data:`_FACT_KINDS` outside tests, docs and examples, in the only such file the
    PR changes, a file changed by at most :data:`FACT_FILE_LINES` lines and not
    deleted; a dependency fact only from the package's own requirement files, an
    environment variable fact only for a variable the code reads."""
    code = [f for f in analysis.files if f.counts_as_code and f.kind not in ("test", "docs", "example")]
    if len(code) != 1 or code[0].status == "removed" or code[0].changes > FACT_FILE_LINES:
        return None
    facts = [b for b in code[0].behaviour if b.kind in _FACT_KINDS]
    if len(facts) != 1:
        return None
    fact = facts[0]
    if fact.kind.startswith("dep_") and not _DEP_FILES.search(fact.path):
        return None
    if fact.kind.startswith("env_") and fact.detail != "read":
        return None  # a variable the code sets is worded by the focus point, with its condition
    return fact


def fact_sentence(fact, lang: str) -> str:
    """One sentence stating a behaviour fact of :data:`_FACT_KINDS`."""
    return t(f"summary.fact.{fact.kind}", lang, {"name": fact.symbol, "file": fact.path, "old": fact.old, "new": fact.new})


# --- the author's sentence ------------------------------------------------------------------

#: Names in a sentence that must occur in the changed lines: code spans, and words with
#: an underscore, a dot or ``()`` inside, digits beside letters (``qwen3_5``, ``FP8``),
#: an upper-case letter after a lower-case one (``TransferQueue``, ``vLLM``) or two or
#: more capitals (``QKV``).
_SPAN = re.compile(r"`([^`]{1,120})`")
_WORD = re.compile(r"[A-Za-z0-9_][\w.\-/]*\w(?:\(\))?")
_NAMEISH = re.compile(r"_|\w\.\w|\(\)|[a-z][A-Z]|[A-Z]{2}|[A-Za-z]\d|\d[A-Za-z]|/")
#: Capitalised acronyms every engineer writes in prose about any change.
_COMMON = frozenset({"pr", "prs", "ci", "ut", "api", "apis", "todo", "ok", "id", "ids", "url", "readme", "docs", "e.g", "i.e",
                     "gpu", "gpus", "cpu", "cpus", "npu", "npus", "cuda", "oom", "ooms", "cli", "json", "yaml", "io", "llm",
                     "llms", "rl", "sft", "ai"})
_LITERALS = frozenset({"True", "False", "None", "true", "false", "null"})
#: An acronym in prose ("FSDP", "AMD", "BF16") names a technology, not a changed identifier.
_ACRONYM = re.compile(r"[A-Z]{2,5}\d{0,2}")
_TITLE_NOISE = re.compile(r"^\s*(?:\[[^\]]*\]\s*)+:?\s*|^\s*[A-Za-z-]+(?:\([^)]*\))?!?:\s*|\s*\(#\d+\)\s*$")
_STOP = frozenset("a an the to of in on for and or with by from as is are be this that it its pr we our".split())
#: Share of a sentence's words that come from the title for it to be the title restated.
_TITLE_OVERLAP = 0.7


def author_evidence(sentence: str, title: str, analysis: DiffAnalysis) -> tuple[Evidence, ...] | None:
    """The evidence for using the author's ``sentence`` as the summary, or None when it
    must not be used: it restates ``title``, names nothing and is short (vague), or a
    name it uses is not in the diff's changed lines or paths. Evidence: the sentence itself, then up to
    :data:`_MAX_NAME_EVIDENCE` changed lines holding its names."""
    if restates(sentence, title):
        return None
    names = sentence_names(sentence)
    if not names and len(sentence.split()) < _VAGUE_WORDS:
        return None  # "Fix the github action for trtllm.": true, but says less than the count
    found: list[Evidence] = [Evidence(new=sentence, source="description")]
    if names:
        hay = _haystack(analysis)
        symbols = _changed_names(analysis)
        squashed = None
        for name in names:
            low = name.lower()
            if low in hay or low in symbols or name in _NOT_NAMES_OF_THIS_CHANGE:
                continue
            if "." in low and (any(low.endswith("." + k) for k in symbols if "." in k) or _changed_class(name, symbols)):
                continue  # "Class.method" and a YAML key's dotted path are found as changed names
            squashed = _squash(hay) if squashed is None else squashed
            if len(_squash(low)) >= 5 and _squash(low) in squashed:
                continue  # "Qwen3.5-122B" is the script's "qwen3_5_122b"
            return None
        for name in names[:_MAX_NAME_EVIDENCE]:
            ev = _line_with(analysis, name.lower())
            if ev is not None:
                found.append(ev)
    return tuple(found)


_DASH_OR_SLASH = re.compile(r"[-/]")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _squash(text: str) -> str:
    """Lower-case letters and digits only: how a model name is matched across spellings."""
    return _NOT_ALNUM.sub("", text.lower())


def _changed_class(name: str, symbols: set[str]) -> bool:
    """``Class.method`` whose class the diff changes: a hunk deep inside a method shows only
    its class (the hunk header), so the method's own name need not be in any changed line."""
    owner, _, method = name.rpartition(".")
    return owner[:1].isupper() and owner.lower() in symbols and method.isidentifier()


#: Names a sentence may use that are no name of the change: Python's built-in exceptions
#: and log levels ("fixes the AssertionError …" names the symptom).
_NOT_NAMES_OF_THIS_CHANGE = frozenset(
    [n for n in dir(builtins) if n.endswith(("Error", "Exception", "Warning"))]
    + ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
)


def sentence_names(sentence: str) -> list[str]:
    """The identifier-like names of ``sentence`` (see :data:`_NAMEISH`), lower-cased
    parts of code spans included, without repeats."""
    names: dict[str, None] = {}
    for span in _SPAN.findall(sentence):
        words = _WORD.findall(span)
        for word in words:
            word = word.removesuffix("()")
            # A span of several words (an error message, an expression) names only its
            # identifier-like words; ``True``/``None`` are no name of this change.
            if " " in span.strip() and not _NAMEISH.search(word):
                continue
            if len(word) >= 2 and not word.isdigit() and word not in _LITERALS:
                names[word] = None
    for word in _WORD.findall(_SPAN.sub(" ", sentence)):
        word = word.rstrip(".-/")
        # "CPU/GPU" is two words; "verl/utils/fs.py" one path.
        for part in _DASH_OR_SLASH.split(word) if "." not in word.rpartition("/")[2] else (word,):
            if len(part) >= 2 and _NAMEISH.search(part) and part.lower() not in _COMMON and not _version(part) \
                    and not _ACRONYM.fullmatch(part):
                names[part.removesuffix("()")] = None  # "eval()" is called as "eval(text)"
    return list(names)


_VERSION_WORD = re.compile(r"v?\d+(?:\.\d+)+")


def _version(word: str) -> bool:
    """``v0.16.0``, ``0.25``: versions are compared by their digits only, which tests rarely repeat."""
    return _VERSION_WORD.fullmatch(word) is not None


def restates(sentence: str, title: str) -> bool:
    """True when most words of ``sentence`` (:data:`_TITLE_OVERLAP`) are the title's."""
    words = _words(sentence)
    if not words:
        return True
    title_words = _words(_TITLE_NOISE.sub("", title or ""))
    return len(words & title_words) / len(words) >= _TITLE_OVERLAP


_ALNUM_RUN = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _ALNUM_RUN.findall(text.lower()) if w not in _STOP}


def _changed_names(analysis: DiffAnalysis) -> set[str]:
    """Lower-cased names the diff changes: touched symbols (and their last part), config
    keys and fields added, removed or changed (capped: a 3,000-file PR has many)."""
    names: set[str] = set()
    for f in analysis.files:
        for group in (f.symbols_touched, f.config_keys_added, f.config_keys_removed, f.config_keys_changed,
                      f.fields_added, f.fields_removed, f.fields_changed):  # fmt: skip
            for n in group:
                low = n.lower()
                names.add(low)
                names.add(low.rpartition(".")[2])
        if len(names) > _MAX_NAMES:
            break
    return names


#: Changed names collected to check an author's sentence against.
_MAX_NAMES = 5_000


def _haystack(analysis: DiffAnalysis) -> str:
    parts: list[str] = []
    size = 0
    for f in analysis.files:
        lines = (f.path, *f.added_lines, *f.removed_lines)
        whole = sum(map(len, lines)) + len(lines)
        if size + whole <= _HAYSTACK_CHARS:  # the usual case: the whole file fits
            parts += lines
            size += whole
            continue
        for line in lines:
            parts.append(line)
            size += len(line) + 1
            if size > _HAYSTACK_CHARS:
                return "\n".join(parts).lower()
    return "\n".join(parts).lower()


def _line_with(analysis: DiffAnalysis, name: str) -> Evidence | None:
    """The first changed line (or path) holding ``name``, as diff evidence (no line number:
    the analysis keeps changed lines without their positions); code before tests."""
    for f in sorted(analysis.files, key=lambda f: f.kind == "test"):
        if name in f.path.lower():
            return Evidence(f.path, source="diff")
        for line in f.added_lines:
            if name in line.lower():
                return Evidence(f.path, new=line.strip()[:160], source="diff")
        for line in f.removed_lines:
            if name in line.lower():
                return Evidence(f.path, old=line.strip()[:160], source="diff")
    return None


# --- a documentation-only pull request -------------------------------------------------------

#: A Markdown heading line (outside code blocks, not indented).
_MD_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
#: A reStructuredText section underline: one punctuation character repeated.
_RST_UNDERLINE = re.compile(r"([=\-~^\"'*+#`:.])\1{2,}[ \t]*$")
_HAS_WORD = re.compile(r"\w")
#: Pages a documentation summary names; the others are counted.
_MAX_PAGES = 3
#: Section titles named for one edited page.
_MAX_SECTIONS = 2


def page_headings(f) -> list[str]:
    """The headings among the added lines of a Markdown or reStructuredText page, in
    order: ``# Title`` lines outside fenced code, and unindented lines underlined by a
    repeated punctuation character (``Title`` then ``=====``). A heading whose text a
    removed line of the page had is not new: it moved or changed level (``#`` to ``##``,
    verl #2127, said to "add the sections")."""
    added = _headings(f.path, f.added_lines)
    if not added or not f.removed_lines:
        return added
    before = _headings(f.path, f.removed_lines)
    if not before:
        return added
    # Each side's headings as a set made once (made per heading, 3,000 of them cost 0.2 s a page).
    gone, came = set(before), set(added)
    kept = [h for h in added if h not in gone]
    # A heading removed that is not among the added ones was renamed or dropped: which of the
    # new headings renames it cannot be told, so none is said to be a new section (fresh-o
    # #1045: "Use vLLM v0.8.2" became "Upgrade to vLLM v0.8.2", said to "add the section").
    return [] if any(h not in came for h in before) else kept


def _headings(path: str, lines) -> list[str]:
    low = path.lower()
    md, rst = low.endswith((".md", ".markdown")), low.endswith(".rst")
    out: list[str] = []
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line.strip() or line[0].isspace():
            continue
        if md:
            m = _MD_HEADING.match(line)
            if m is not None and _HAS_WORD.search(m.group(1)):
                out.append(m.group(1).strip())
        elif rst and i + 1 < len(lines) and _RST_UNDERLINE.match(lines[i + 1]) and not _RST_UNDERLINE.match(line) \
                and _HAS_WORD.search(line) and not line.startswith(".."):
            out.append(line.strip())
    return out


def _title(text: str) -> str:
    return "“" + sanitize.quote(text.strip("*_` "), 80) + "”"


def _says_more_than_edits(analysis: DiffAnalysis) -> bool:
    """True when a documentation summary names more than "edits the page": a page
    added, moved or removed, or a heading added."""
    return any(f.status != "modified" or page_headings(f) for f in analysis.files if f.kind == "docs")


def docs_summary(analysis: DiffAnalysis, lang: str) -> Summary | None:
    """For a pull request that changes documentation pages only: which pages it adds
    (with their first heading), moves, removes, or edits (with the headings it adds),
    at most :data:`_MAX_PAGES` named; None when any other file changes."""
    files = [f for f in analysis.files if f.kind not in ("generated", "binary")]
    if not files or any(f.kind != "docs" for f in files):
        return None
    order = {"added": 0, "renamed": 1, "modified": 2, "removed": 3}
    parts: list[str] = []
    edited: list[str] = []  # pages edited without a new heading: one part at the end
    evidence: list[Evidence] = []
    for f in sorted(files, key=lambda f: order.get(f.status, 2))[:_MAX_PAGES]:
        page = sanitize.code(f.path)
        heads = page_headings(f) if f.status != "removed" else []
        if f.status == "added":
            key = N_("summary.docs.added.titled") if heads else N_("summary.docs.added")
            parts.append(t(key, lang, {"file": page, "title": _title(heads[0]) if heads else ""}, raw=True))
        elif f.status == "renamed" and f.previous_path:
            parts.append(t("summary.docs.moved", lang, {"old": sanitize.code(f.previous_path), "file": page}, raw=True))
        elif f.status == "removed":
            parts.append(t("summary.docs.removed", lang, {"file": page}, raw=True))
        elif heads:
            titles = t("list.and", lang).join(_title(h) for h in heads[:_MAX_SECTIONS])
            parts.append(t(NP_("summary.docs.sections", "summary.docs.sections"), lang,
                           {"file": page, "titles": titles, "count": len(heads[:_MAX_SECTIONS])}, raw=True))
        else:
            edited.append(page)
        evidence.append(Evidence(f.path, new=" / ".join(heads[:_MAX_SECTIONS]) or f"{f.status}, +{f.additions}/-{f.deletions}", source="diff"))
    if edited:
        parts.append(t(NP_("summary.docs.edited", "summary.docs.edited"), lang,
                       {"files": t("list.and", lang).join(edited), "count": len(edited)}, raw=True))
    if len(files) > _MAX_PAGES:
        parts.append(t(NP_("summary.docs.more", "summary.docs.more"), lang, {"count": len(files) - _MAX_PAGES}, raw=True))
    text = t("list.and", lang).join(parts)
    return Summary(_end(text[:1].upper() + text[1:], lang), "docs", tuple(evidence))


# --- one function ------------------------------------------------------------------------------


def only_symbol(analysis: DiffAnalysis):
    """``(file, name)`` when the pull request's code that is neither test nor docs changes
    inside one function or method only (a class holding a touched method counts as the
    method), else None."""
    code = [f for f in analysis.files if f.counts_as_code and f.kind not in ("test", "docs", "example")]
    if len(code) != 1 or code[0].status != "modified":
        return None
    touched = code[0].symbols_touched
    inner = [n for n in touched if not any(o != n and o.startswith(n + ".") for o in touched)]
    last = inner[0].rpartition(".")[2] if len(inner) == 1 else ""
    if not last or last[:1].isupper() or ("_" not in last and any(c.isupper() for c in last[1:])):
        # A class alone is where git's hunk header stops, not the method that changed.
        return None
    return code[0], inner[0]


def function_summary(analysis: DiffAnalysis, lang: str) -> Summary | None:
    """"Adds code to `Worker.run` in `verl/w.py`." when the change is inside one
    definition (:func:`only_symbol`): code added, removed or changed, said as such."""
    found = only_symbol(analysis)
    if found is None:
        return None
    f, name = found
    # No line counts: other lines of the file (an import) may have changed too; the scale
    # suffix says how many.
    params = {"name": name, "file": f.path}
    if f.additions and not f.deletions:
        key = N_("summary.function.added")
    elif f.deletions and not f.additions:
        key = N_("summary.function.removed")
    else:
        key = N_("summary.function.changed")
    evidence = Evidence(f.path, new=f"{name}: +{f.additions}/-{f.deletions}", source="diff")
    return Summary(_end(t(key, lang, params), lang), "function", (evidence,))


# --- the plain count --------------------------------------------------------------------------

#: File kinds a count names, in order; other kinds are counted as "other".
_COUNT_KINDS = ("source", "test", "config", "docs", "ci", "build", "example", "generated", "binary")


def count_summary(facts: GuideFacts, lang: str) -> Summary:
    """"Changes 2 source files and 1 test file under `verl/trainer/` (+40/−12)." from the
    changed files (GitHub's counts when the file list was cut)."""
    s, files = facts.snapshot, facts.analysis.files
    total = s.changed_files or len(files)
    additions = s.additions if s.additions or s.deletions else sum(f.additions for f in files)
    deletions = s.deletions if s.additions or s.deletions else sum(f.deletions for f in files)
    by_kind: dict[str, int] = {}
    for f in files:
        kind = f.kind if f.kind in _COUNT_KINDS else "source"
        by_kind[kind] = by_kind.get(kind, 0) + 1
    if sum(by_kind.values()) == total and by_kind:
        parts = [t(f"summary.count.{kind}", lang, {"count": by_kind[kind]}) for kind in _COUNT_KINDS if kind in by_kind]
        if len(parts) > 3:  # four kinds and more read as noise: say the number
            parts = [t("summary.count.files", lang, {"count": total})]
    else:
        parts = [t("summary.count.files", lang, {"count": total})]
    what = t("list.and", lang).join(parts)
    where = common_dir([f.path for f in files])
    params = {"files": what, "dir": sanitize.code(where) if where else "", "additions": f"{additions:,}", "deletions": f"{deletions:,}"}
    key = "summary.count.under" if where else "summary.count"
    text = t(key, lang, params, raw=True)
    return Summary(text, "count", (Evidence(new=f"{total} files, +{additions}/-{deletions}", source="metadata"),))


def common_dir(paths: list[str]) -> str:
    """The deepest directory holding every path (``"verl/trainer/"``), or ``""`` when
    they share none or there are none."""
    if not paths:
        return ""
    dirs = [posixpath.dirname(p) for p in paths]
    common = posixpath.commonpath(dirs) if all(dirs) else ""
    return common + "/" if common else ""


def _end(sentence: str, lang: str) -> str:
    sentence = sentence.rstrip()
    if sentence.endswith((".", "!", "?", "。", "！", "？")):
        return sentence
    return sentence + ("。" if lang == "zh" else ".")


