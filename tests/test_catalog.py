"""The message catalogue: complete in every shipped language, placeholders intact, the .pot up to date."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path

import pytest

import bot.locale as catalogue
from bot.locale import maintain
from bot.locale.indirect import IDS
from bot.engine.rules.reasons import Joined, Reason, in_language


def test_every_message_is_translated_in_every_shipped_language_with_the_same_placeholders():
    english = maintain.forms_of(maintain._read("en"))
    _ids, plurals = maintain.template_ids()
    assert set(catalogue.languages()) >= {"en", "zh"}
    problems = []
    for lang in catalogue.languages():
        problems += maintain.translation_problems(lang, maintain.forms_of(maintain._read(lang)), english, plurals)
    assert problems == []


def test_the_template_is_what_extraction_gives_today():
    found = maintain.extract()
    assert maintain.stale_template(found) == []
    ids, _plurals = maintain.template_ids()
    assert set(maintain.forms_of(maintain._read("en"))) == ids


def test_every_indirectly_declared_id_is_still_used_somewhere():
    used = maintain.uses()
    found = maintain.extract()
    unused = [key for key in IDS if not used.files(key) and key not in found.ids]
    assert unused == []
    assert maintain.UNUSED_GROUP not in maintain.INDIRECT_PATH.read_text(encoding="utf-8")
    declared, plural = maintain.indirect_ids()
    assert declared | plural == set(IDS)


def test_translation_problems_catches_what_it_should():
    english = {"a": ("Hello {name}",), "n": ("1 file", "{count} files")}
    ok = maintain.translation_problems("zh", {"a": ("你好 {name}",), "n": ("{count} 个文件",)}, english, {"n"})
    assert ok == []
    problems = maintain.translation_problems(
        "zh", {"a": ("你好 {user}",), "extra": ("x",)}, english, {"n"}
    )
    assert "zh: a has placeholders ['user'], English has ['name']" in problems
    assert "zh: n has no translation" in problems
    assert "zh: extra is not a message of the source catalogue" in problems
    assert maintain.translation_problems("zh", {"a": None, "n": ("",)}, english, {"n"}) == [
        "zh: a has no translation",
        "zh: n has no translation",
    ]
    # English itself: a plural message needs its two forms.
    assert maintain.translation_problems("en", {"a": ("Hi {name}",), "n": ("{count} files",)}, english, {"n"}) == [
        "en: n should be a plural message"
    ]


def test_glued_ids_are_recognised():
    literals = {"focus.fact.key_removed", ".plain", ".many", "x"}
    assert maintain._glued("focus.fact.key_removed.plain.many", literals)
    assert maintain._glued("focus.fact.key_removed.plain", literals)
    assert not maintain._glued("focus.fact.key_removed", literals)  # one literal is not glued
    assert not maintain._glued("focus.other.plain", literals)


def test_placeholders_reads_format_fields():
    assert maintain.placeholders("{count} of {total.x} {items[0]} {{literal}}") == {"count", "total", "items"}


def test_text_picks_plural_forms_by_count_and_refuses_unknown_ids():
    assert "1 rule matched" in catalogue.text("footer", "en", 1)
    assert "{count} rules matched" in catalogue.text("footer", "en", 3)
    assert "{count} rules matched" in catalogue.text("footer", "en", 0)
    assert "{count} rules matched" in catalogue.text("footer", "en")
    # Chinese words a sentence about exactly one thing apart (its Plural-Forms has two forms).
    assert "命中 1 条规则" in catalogue.text("footer", "zh", 1)
    assert "命中 {count} 条规则" in catalogue.text("footer", "zh", 2)
    assert catalogue.gettext("h.focus", "zh") == "阅读重点"
    assert catalogue.ngettext("footer", "footer", 1, "en").startswith("prguide {version} · 1 rule")
    with pytest.raises(KeyError):
        catalogue.text("no.such.message", "en")
    with pytest.raises(KeyError):
        catalogue.text("h.focus", "xx")
    assert catalogue.has("h.focus") and not catalogue.has("no.such.message")


def test_message_table_is_a_read_only_view():
    table = catalogue.MessageTable()
    assert table["h.focus"] == {"en": "What to focus on", "zh": "阅读重点"}
    assert "h.focus" in table and "nope" not in table and 3 not in table
    assert len(table) == len(list(table)) > 100
    assert "footer.one" in table and table["footer.one"]["en"].startswith("prguide {version} · 1 rule matched")
    assert "h.focus.one" not in table
    with pytest.raises(KeyError):
        table["nope"]


def test_reasons_are_english_strings_that_speak_other_languages():
    files = Reason("why.files.any", matched=2, considered=17, globs="**/*.md")
    reason = Reason("why.files", parts=Joined([files, Reason("why.files.all", considered=3, globs="a")]))
    assert reason == "files: 2 of 17 changed files match **/*.md; all 3 changed files match a"
    assert reason.in_language("zh") == "文件：17 个改动文件中有 2 个匹配 **/*.md；全部 3 个改动文件都匹配 a"
    assert reason.in_language("en") == reason
    kinds = Reason("why.kinds.any", matched=1, total=2, kinds=Joined(["docs", "test"], "why.or"))
    assert kinds == "1 of 2 changed files are docs or test"
    assert in_language("plain text", "zh") == "plain text"
    assert in_language(kinds, "zh") == "2 个改动文件中有 1 个属于 docs 或 test"
    restored = pickle.loads(pickle.dumps(reason))
    assert restored == reason and restored.in_language("zh") == reason.in_language("zh")
    assert Reason("why.lines_more", what=Reason("why.field.added"), pattern='"x"', path="a.py", count=1, line='"y"') == (
        'added lines match "x" in a.py and 1 more file: "y"'
    )


def test_the_command_line_checks_the_shipped_catalogue(capsys):
    assert maintain.main(["check"]) == 0


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A small package with a hand-written message table, laid out like prguide."""
    root = tmp_path / "toy"
    package = root / "bot"
    locale = package / "locale"
    (locale / "en" / "LC_MESSAGES").mkdir(parents=True)
    (locale / "zh" / "LC_MESSAGES").mkdir(parents=True)
    (root / "babel.cfg").write_text((maintain.MAPPING_PATH).read_text(encoding="utf-8"), encoding="utf-8")
    (package / "templates").mkdir()
    (package / "templates" / "page.html").write_text("<p>{{ t('page.title') }} {{ t.count(n, 'page.count') }}</p>\n")
    (package / "words.py").write_text(
        textwrap.dedent(
            '''
            """Words."""

            #: The table.
            MESSAGES = {
                "a.hello": {"en": "Hello {name}", "zh": "你好 {name}"},
                "files": {"en": "{count} files", "zh": "{count} 个文件"},
                "files.one": {"en": "1 file", "zh": "1 个文件"},
                "kind.x": {"en": "ex", "zh": "叉"},
                "dead": {"en": "nobody says this", "zh": "没人说"},
                "glued.plain": {"en": "glued", "zh": "粘"},
            }
            _CATALOG = {"en": {"page.title": "Title", "page.count": "{count} pages", "page.count_one": "1 page"}, "zh": {"page.title": "标题", "page.count": "{count} 页", "page.count_one": "1 页"}}


            def say(t, lang, kind):
                key = "glued"
                key += ".plain"
                return t("a.hello", lang) + t("files", lang) + t(f"kind.{kind}", lang) + t(key, lang)
            '''
        ),
        encoding="utf-8",
    )
    for name, value in {
        "ROOT": root,
        "PACKAGE": package,
        "LOCALE_DIR": locale,
        "POT_PATH": locale / "prguide.pot",
        "MAPPING_PATH": root / "babel.cfg",
        "INDIRECT_PATH": locale / "indirect.py",
    }.items():
        monkeypatch.setattr(maintain, name, value)
    monkeypatch.setattr(catalogue, "LOCALE_DIR", locale)
    return root


def test_absorb_moves_tables_into_po_files_and_out_of_the_code(toy: Path, capsys):
    for lang in ("en", "zh"):
        maintain._write(maintain._new_catalog(lang), catalogue.po_path(lang))
    assert maintain.main(["absorb", str(toy / "bot" / "words.py")]) == 0
    source = (toy / "bot" / "words.py").read_text(encoding="utf-8")
    assert "MESSAGES" not in source and "_CATALOG" not in source and "The table" not in source
    en = maintain.forms_of(maintain._read("en"))
    zh = maintain.forms_of(maintain._read("zh"))
    assert en["files"] == ("1 file", "{count} files") and zh["files"] == ("{count} 个文件",)
    assert en["page.count"] == ("1 page", "{count} pages")
    assert "files.one" not in en and en["dead"] == ("nobody says this",)
    assert en["kind.x"] == ("ex",) and zh["a.hello"] == ("你好 {name}",)
    declared, plural = maintain.indirect_ids()
    assert plural == {"files", "page.count"} and declared == {"kind.x", "dead", "glued.plain"}
    assert "message 'dead': no use found" in capsys.readouterr().err
    indirect = maintain.INDIRECT_PATH.read_text(encoding="utf-8")
    assert f'# {maintain.UNUSED_GROUP}\n    N_("dead"),' in indirect
    # Deleting the declaration and extracting again drops the message.
    maintain.INDIRECT_PATH.write_text(indirect.replace('    N_("dead"),\n', ""), encoding="utf-8")
    assert maintain.main(["extract"]) == 0
    assert "dead" not in maintain.forms_of(maintain._read("zh"))
    assert maintain.check() == []

    # A translation that loses its placeholder, or one that is missing, is caught.
    po = catalogue.po_path("zh")
    po.write_text(po.read_text(encoding="utf-8").replace("你好 {name}", "你好"), encoding="utf-8")
    assert maintain.main(["check"]) == 1
    assert "zh: a.hello has placeholders [], English has ['name']" in capsys.readouterr().err

    # New code using a new id makes the template stale until extraction runs.
    words = toy / "bot" / "words.py"
    words.write_text(words.read_text(encoding="utf-8") + '\n\ndef more(t, lang):\n    return t("b.new", lang)\n')
    assert any("out of date" in p for p in maintain.check())
    assert maintain.main(["extract"]) == 1  # the new id has no English text yet
    assert "b.new: no English text" in capsys.readouterr().err
    assert maintain.stale_template(maintain.extract()) == []


def test_duplicate_tables_with_different_texts_are_refused(toy: Path):
    (toy / "bot" / "other.py").write_text('MESSAGES = {"a.hello": {"en": "Hi", "zh": "嗨"}}\n', encoding="utf-8")
    with pytest.raises(SystemExit):
        maintain.absorb([toy / "bot" / "words.py", toy / "bot" / "other.py"])


# --- the quick .po reader ----------------------------------------------------------------------------

def _same_language(quick: catalogue.Language, babel: catalogue.Language) -> None:
    assert quick.ids == babel.ids and quick.plurals == babel.plurals
    assert quick.table.keys() == babel.table.keys()
    for key, found in quick.table.items():
        expected = babel.table[key]
        if isinstance(expected, str):
            assert found == expected, key
        else:
            assert found[0] == expected[0], key
            assert [found[1](n) for n in range(300)] == [expected[1](n) for n in range(300)], key


@pytest.mark.parametrize("lang", catalogue.languages())
def test_the_quick_reader_compiles_every_shipped_catalogue_as_babel_does(lang):
    assert catalogue._read(lang) is not None  # the shipped files never fall back to Babel
    _same_language(catalogue.language(lang), catalogue._babel_language(lang))


_PO_HEADER = textwrap.dedent(r'''
    msgid ""
    msgstr ""
    "Language: en\n"
    "Plural-Forms: nplurals=2; plural=(n != 1);\n"
    "Content-Type: text/plain; charset=utf-8\n"
''')


def test_the_quick_reader_keeps_what_gettext_would_serve(tmp_path):
    path = tmp_path / "x.po"
    path.write_text(_PO_HEADER + textwrap.dedent(r'''
        #, python-brace-format
        msgid "a"
        msgstr ""
        "two \"quoted\"\n"
        "lines"

        #, fuzzy
        msgid "b"
        msgstr "unsure"

        msgid "c"
        msgid_plural "c"
        msgstr[0] "one c"
        msgstr[1] ""
    '''), encoding="utf-8")
    po = catalogue._po.read(path)
    assert po is not None and po.nplurals == 2 and po.plural == "(n != 1)"
    assert po.messages == (
        catalogue._po.Message(("a",), ('two "quoted"\nlines',), False),
        catalogue._po.Message(("b",), ("unsure",), True),
        catalogue._po.Message(("c", "c"), ("one c", ""), False),
    )
    lookups = catalogue._Lookups(po, None)
    assert lookups.gettext("a") == 'two "quoted"\nlines'
    assert lookups.gettext("b") == "b"  # fuzzy: not served
    assert (lookups.ngettext("c", 1), lookups.ngettext("c", 5)) == ("one c", "c")


@pytest.mark.parametrize("entry", ['msgctxt "menu"\nmsgid "a"\nmsgstr "b"\n', '#~ msgid "old"\n#~ msgstr "gone"\n',
                                   'msgid "a"\nmsgstr "b"\n\nmsgid "a"\nmsgstr "c"\n', 'msgid "a"\n#. a comment\nmsgstr "b"\n'])  # fmt: skip
def test_the_quick_reader_leaves_what_it_does_not_know_to_babel(tmp_path, entry):
    path = tmp_path / "x.po"
    path.write_text(_PO_HEADER + "\n" + entry, encoding="utf-8")
    assert catalogue._po.read(path) is None
    path.write_text(_PO_HEADER.replace("Plural-Forms", "X-Plural"), encoding="utf-8")
    assert catalogue._po.read(path) is None
