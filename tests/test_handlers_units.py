"""Small decisions of the merged-PR job, as plain functions."""

from bot.app.routing import Services
from bot.feature_support import save_guide
from bot.engine.build import build_guide
from bot.engine.repo_config import parse_repo_config
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot
from bot.tagview.store import GuideStore


def services(rules):
    return Services(settings=None, clients=None, auth=None, rules=rules, metrics=None)


def test_disabling_a_rule_that_does_not_exist_is_reported():
    rules = load_rules()
    merged, problems = services(rules).rules_for(parse_repo_config("disable: [size-labels]\n"))
    assert merged is not rules
    assert any("size-labels" in p.message for p in problems)
    _, none = services(rules).rules_for(parse_repo_config("disable: [size-xs]\n"))
    assert none == ()


async def test_a_repository_seen_private_stays_private_in_the_tag_view(tmp_path):
    snapshot = PullRequestSnapshot(repository="o/r", number=3, title="fix: x", merged=True,
                                   files=(ChangedFile("a.py", additions=2, patch="@@ -1 +1,2 @@\n x\n+y"),))
    guide = build_guide(snapshot, load_rules())
    store = GuideStore(tmp_path / "g.db")
    await save_guide(store, guide, private=False)
    assert store.visibility("o/r") == "public"
    await save_guide(store, guide, private=True)
    assert store.visibility("o/r") == "private"
    await save_guide(store, guide, private=False)  # an old payload redelivered must not reopen it
    assert store.visibility("o/r") == "private"
