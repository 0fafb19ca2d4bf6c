"""Reply wording: the en/zh catalog, help, refusals, /prguide why, and the permission cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.engine.classify import Classification, Factor, LabelDecision
from bot.commands.decide import Refuse, decide, Actor, PullState, Remembered
from bot.commands.explain import render_why
from bot.commands.messages import MESSAGES, t
from bot.commands.parse import COMMANDS, parse_commands
from bot.commands.permissions import PermissionCache, role_of
from bot.commands.reply import compose_reply, help_text, refusal_text
from bot.engine.rules.model import RuleHit

ROOT = Path(__file__).resolve().parents[1]


def test_every_reply_message_has_both_languages_with_the_same_placeholders():
    for key, texts in MESSAGES.items():
        if not key.startswith("cmd."):
            continue
        assert set(texts) == {"en", "zh"}, key
        fields = {lang: set(re.findall(r"{(\w+)}", text)) for lang, text in texts.items()}
        assert fields["en"] == fields["zh"], key
        assert texts["en"] != texts["zh"], key


def test_every_reply_key_used_in_code_exists():
    used = set()
    for path in (ROOT / "bot" / "commands").glob("*.py"):
        used |= set(re.findall(r'"(cmd\.[a-z_]+\.[a-z_.]+)"', path.read_text(encoding="utf-8")))
    assert used, "the scan found the keys"
    assert sorted(k for k in used if k not in MESSAGES) == []


def test_help_lists_every_command_in_both_languages():
    for lang in ("en", "zh"):
        text = help_text(lang)
        for name in COMMANDS:
            assert f"`/prguide {name}" in text
    assert "作者" in help_text("zh")
    assert "relabel" in help_text("en", authors_relabel=True)


def test_quoted_input_cannot_ping_or_inject_html():
    (command,) = parse_commands("/prguide @everyone <img src=x onerror=alert(1)>")
    text = refusal_text(Refuse(command, command.error, dict(command.error_params)), "en")
    assert "@everyone" in text  # shown inside a code span, where GitHub does not mention anyone
    outside_code = re.sub(r"`+[^`]*`+", "", text)
    assert "@" not in outside_code and "<" not in outside_code
    assert "Usage:" in text and "/prguide help" in text


def test_unknown_command_shows_all_usages_and_bad_arguments_their_own():
    (unknown,) = parse_commands("/prguide frob")
    text = refusal_text(Refuse(unknown, unknown.error, dict(unknown.error_params)), "en")
    assert all(f"`/prguide {name}" in text for name in COMMANDS)
    (bad,) = parse_commands("/prguide lang fr")
    text = refusal_text(Refuse(bad, bad.error, dict(bad.error_params)), "zh")
    assert "用法" in text and "/prguide lang zh|en" in text and "/prguide help" not in text


def test_denials_carry_no_usage():
    (refusal,) = decide(parse_commands("/prguide refresh"), Actor("sam", "none"), Remembered(), PullState(True))
    text = refusal_text(refusal, "en")
    assert "write access" in text and "Usage" not in text


def test_reply_addresses_the_commenter_without_pinging():
    body = compose_reply("alice", ["one", "", "two"], "en")
    assert body == "**alice**:\n\none\n\ntwo"


CLASSIFICATION = Classification(
    labels=(LabelDecision("area/rollout", "rule", "rollout-area", "config/rules/areas.yml:12"), LabelDecision("keep-me", "human")),
    areas=("rollout",),
    change_type="fix",
    change_type_source="inferred",
    breaking=False,
    importance=3,
    factors=(Factor(1, "base", "factor.base"), Factor(2, "size", "factor.size", {"count": 40}), Factor(1, "x", "factor.rule", {"rule": "x"})),
    reading_level="skim",
    reading_minutes=2,
    audience={},
    hits=(
        RuleHit("rollout-area", "config/rules/areas.yml:12", labels=("area/rollout",), reasons=("files matched verl/workers/rollout/** (2 files)", "<b>@bob</b>")),
        RuleHit("x", "config/rules/x.yml:3", importance=1, reasons=("title matched /fix/",)),
    ),
    labels_removed_by_human=("bug",),
)


def test_why_explains_labels_rules_conditions_and_factors():
    text = render_why(CLASSIFICATION, "en")
    assert "`area/rollout` ← rule `rollout-area` (`config/rules/areas.yml:12`)" in text
    assert "files matched verl/workers/rollout/** (2 files)" in text
    assert "`keep-me` ← added by a maintainer" in text
    assert "`bug` was removed by a maintainer" in text
    assert "rule `x` (`config/rules/x.yml:3`)" in text and "title matched /fix/" in text
    assert "Importance 3/10" in text
    assert "- +2: 40 lines of code changed" in text
    assert "(the sum is kept between 1 and 10)" in text  # 1 + 2 + 1 = 4 shown as 3
    # Rule reasons may quote PR text and globs: they stand in code spans, where nothing renders.
    assert "condition: `<b>@bob</b>`" in text
    outside_code = re.sub(r"`+[^`]*`+", "", text)
    assert "<" not in outside_code and "@" not in outside_code


def test_why_for_one_label():
    text = render_why(CLASSIFICATION, "zh", "AREA/rollout")
    assert "`area/rollout` 的依据" in text and "keep-me" not in text and "重要度" not in text
    assert "removed by a maintainer" in render_why(CLASSIFICATION, "en", "bug")
    missing = render_why(CLASSIFICATION, "en", "nope")
    assert "`nope` is not among this guide's labels" in missing and "`area/rollout`" in missing


def test_message_singular_form():
    assert "1 more was ignored" in t("cmd.err.too_many", "en", {"limit": 10, "count": 1})
    assert "3 more were ignored" in t("cmd.err.too_many", "en", {"limit": 10, "count": 3})


# ----- permissions ------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, role",
    [
        ({"permission": "write", "role_name": "maintain"}, "maintain"),
        ({"permission": "admin", "role_name": "admin"}, "admin"),
        ({"permission": "read", "role_name": "triage"}, "triage"),
        ({"permission": "write", "role_name": "release-managers"}, "write"),  # a custom role counts as its base
        ({"permission": "none", "role_name": ""}, "none"),
        ({}, "none"),
    ],
)
def test_role_of_a_permission_answer(answer, role):
    assert role_of(answer) == role


class FakeClient:
    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    async def getitem(self, url, url_vars, **_options):
        self.calls.append(url_vars["username"])
        answer = self.answers[url_vars["username"]]
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_permission_cache_asks_once_per_ttl_and_treats_404_as_none():
    from bot.app.github import NotFound

    now = [0.0]
    cache = PermissionCache(ttl=60, clock=lambda: now[0])
    client = FakeClient({"mo": {"permission": "write", "role_name": "maintain"}, "ghost": NotFound("404")})
    assert await cache.role(client, "o/r", "mo") == "maintain"
    assert await cache.role(client, "O/R", "MO") == "maintain"
    assert await cache.role(client, "o/r", "ghost") == "none"
    assert client.calls == ["mo", "ghost"]
    now[0] = 61.0
    assert await cache.role(client, "o/r", "mo") == "maintain"
    assert client.calls == ["mo", "ghost", "mo"]
    cache.forget("o/r")
    await cache.role(client, "o/r", "mo")
    assert client.calls[-1] == "mo" and len(client.calls) == 4


def test_why_names_rule_files_relative_to_the_rules_folder(tmp_path, monkeypatch):
    """A server runs from anywhere: ``/prguide why`` (a public comment), the guide's data and its
    Markdown name a shipped rule as ``change-type.yml:N``, never by the folder it is kept in."""
    import json

    from sandbox_helpers import synthetic_bundle

    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.engine.snapshot import PullRequestSnapshot
    from bot.paths import default_rules_dir

    monkeypatch.chdir(tmp_path)
    bundle = synthetic_bundle(7)
    bundle["pull"]["title"] = 'Revert "feat: add the rollout cache"'
    snapshot = PullRequestSnapshot.from_github(bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"])
    guide = build_guide(snapshot, load_rules())
    text = render_why(guide.classification, "en")
    folder = str(default_rules_dir().parent.parent)
    assert guide.classification.hits and all(not h.source.startswith("/") for h in guide.classification.hits)
    assert re.search(r"\(`[a-z-]+\.yml:\d+`\)", text), text
    for shown in (text, guide.markdown, json.dumps(guide.data, ensure_ascii=False)):
        assert folder not in shown and "config/rules/" not in shown
