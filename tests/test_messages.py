"""The message catalogue is complete in both languages and every key in use exists."""

import re
from pathlib import Path

import pytest

from bot.engine.render.messages import MESSAGES, format_params, t

ROOT = Path(__file__).resolve().parents[1]


def test_every_message_has_both_languages_with_the_same_placeholders():
    for key, texts in MESSAGES.items():
        assert set(texts) == {"en", "zh"}, key
        fields = {lang: set(re.findall(r"{(\w+)}", text)) for lang, text in texts.items()}
        assert fields["en"] == fields["zh"], key


def test_chinese_messages_are_actually_chinese():
    untranslated = [k for k, v in MESSAGES.items() if v["en"] == v["zh"] and re.search(r"[a-z]{4,}", v["en"])]
    assert untranslated == []


def test_every_key_used_in_code_exists():
    used = set()
    for path in (ROOT / "bot").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r'"((?:factor|focus|follow|h|changed|tests|deps|review|labels|summary|verdict|config)\.[a-z_.]+)"', text))
    missing = sorted(k for k in used if k not in MESSAGES)
    assert missing == []


def test_params_are_made_safe():
    out = format_params("en", {"names": ("a", "b", "c"), "count": 5, "people": ("@bob",), "text": "<b>@x</b>", "lines": 12345})
    assert out["names"] == "`a`, `b`, `c`…"
    assert out["people"] == "**bob**"
    assert "<" not in out["text"] and "@x" not in out["text"]
    assert out["lines"] == "12,345"


def test_unknown_key_raises():
    with pytest.raises(KeyError):
        t("no.such.key", "en")
