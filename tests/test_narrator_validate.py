"""The narrator's pure parts: fact sheet, validator, placeholder filling, prompt packing."""

from __future__ import annotations

import time

import pytest

from bot.narrator.facts import build_fact_sheet
from bot.narrator.prompt import ANSWER_TOKENS, build_prompt, estimate_tokens
from bot.narrator.render import Narration, explain, fill, narrate_markdown, narration_from
from bot.narrator.validate import SchemaError, check_answer, check_sentence, parse_answer
from bot.engine.marker import parse_marker
from tests.narrator_helpers import DATA, engine_markdown, fid, sid

SHEET = build_fact_sheet(DATA)


def test_fact_sheet_gives_every_fact_an_id_and_every_name_a_symbol():
    kinds = [f.kind for f in SHEET.facts]
    assert kinds[0] == "summary" and "breaking" in kinds and "behaviour" in kinds and "review" in kinds
    assert [f.id for f in SHEET.facts] == [f"F{i}" for i in range(1, len(SHEET.facts) + 1)]
    for name in ("storage/upload.py", "upload_chunk", "RETRIES", "3", "5", "2.32.3", "max_tries", "config/storage.yml", "503"):
        assert name in SHEET.symbols.values(), name
    assert SHEET.points == {"P1": "the retry loop is new", "P2": "largest test change"}
    assert not any("starts at 1" in f.text for f in SHEET.facts)  # the base factor says nothing


def test_grounded_sentence_is_kept_and_filled_as_code_spans():
    b = fid(SHEET, "behaviour")
    v = check_sentence(f"Uploads now retry {{{sid(SHEET, '5')}}} times in {{{sid(SHEET, 'upload_chunk')}}} {{{b}}}.", SHEET)
    assert v.kept and v.cites == (b,)
    assert fill(v.text, SHEET) == "Uploads now retry `5` times in `upload_chunk`."


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("Uploads now go through retry_upload_chunk {F3}.", "identifier"),  # a function not in the diff
        ("The UploadManager class retries {F3}.", "identifier"),
        ("See storage/retry.py for the loop {F3}.", "identifier"),
        ("It calls storage.client.retry on failure {F3}.", "identifier"),
        ("It wraps `upload` in a loop {F3}.", "identifier"),
        ("Uploads now retry 7 times {F3}.", "number"),  # wrong number
        ("The client library moves to 2.40.1 {F3}.", "number"),  # wrong version
        ("Uploads now retry 5 times.", "number"),  # right number, but no fact cited
        ("Uploads retry in {S999} {F3}.", "unknown_id"),
        ("Uploads retry {F99}.", "unknown_id"),
        ("Ping @octocat about it {F3}.", "identifier"),
        ("Read [this](https://evil.example) {F3}.", "identifier"),
        ("", "shape"),
    ],
)
def test_each_kind_of_invention_is_rejected(sentence, reason):
    assert check_sentence(sentence, SHEET).reason == reason


def test_numbers_are_allowed_when_a_cited_fact_states_them():
    b = fid(SHEET, "behaviour")
    assert check_sentence(f"The retry count goes from 3 to 5 {{{b}}}.", SHEET).kept
    assert check_sentence("The retry count goes from 3 to 5 {F1}.", SHEET).reason == "number"  # F1 does not say it


def test_chinese_sentences_are_checked_the_same_way():
    b = fid(SHEET, "behaviour")
    assert check_sentence(f"上传失败时现在会重试 {{{sid(SHEET, '5')}}} 次，避免一次性失败 {{{b}}}。", SHEET).kept
    assert check_sentence(f"上传改由 retry_upload 处理 {{{b}}}。", SHEET).reason == "identifier"
    assert check_sentence(f"重试次数改为 7 次 {{{b}}}。", SHEET).reason == "number"
    assert fill(f"在 {{{sid(SHEET, 'upload_chunk')}}} 中重试 {{{b}}}。", SHEET) == "在 `upload_chunk` 中重试。"


def test_schema_errors_are_reported():
    for text, words in [("not json", "not JSON"), ("[1]", "object"), ('{"summary": 1, "why_it_matters": [], "focus_reasons": {}}', "summary"),
                        ('{"summary": "a", "why_it_matters": ["a", "b", "c", "d"], "focus_reasons": {}}', "at most"),
                        ('{"summary": "a", "why_it_matters": [], "focus_reasons": []}', "focus_reasons"),
                        ('{"summary": "a", "why_it_matters": [], "focus_reasons": {}, "extra": 1}', "unknown keys")]:  # fmt: skip
        with pytest.raises(SchemaError, match=words):
            parse_answer(text)
    fenced = parse_answer('```json\n{"summary": "a", "why_it_matters": "b", "focus_reasons": {}}\n```')
    assert fenced.why_it_matters == ("b",)


def test_rejected_parts_fall_back_to_the_engine_and_markdown_says_who_narrated():
    b = fid(SHEET, "behaviour")
    answer = parse_answer(
        '{"summary": "Uploads survive a transient outage {%s}.", "why_it_matters": ["It retries {%s} times {%s}.", "It uses retry_helper {%s}."],'
        ' "focus_reasons": {"P1": "The loop decides how long a caller waits {%s}.", "P2": "Look at FooBar {%s}.", "P9": "x"}}'
        % (b, sid(SHEET, "5"), b, b, b, b)
    )
    checked = check_answer(answer, SHEET)
    assert (checked.kept, checked.rejected) == (3, 3)
    narration = narration_from(checked, SHEET, "qwen2.5-coder")
    md = narrate_markdown(engine_markdown(), narration, "en", key="k1")
    assert "**Uploads survive a transient outage.**" in md and "Bug fix in storage." not in md
    assert "Why it matters: It retries `5` times." in md and "retry_helper" not in md
    assert "1. `storage/upload.py`: the retry loop is new\n   Why read it: The loop decides how long a caller waits." in md
    assert "FooBar" not in md and "2. `tests/test_upload.py`: largest test change\n\n" in md
    assert "narrated by qwen2.5-coder" in md
    assert parse_marker(md).extra["narrated"] == {"model": "qwen2.5-coder", "key": "k1"}
    lines = explain(narration, SHEET, "en")
    assert lines[0] == "Narrated sentences and the facts they cite" and any(line.startswith(f"summary: cites {b} (") for line in lines)


def test_a_rejected_summary_keeps_the_engine_summary_and_nothing_kept_changes_nothing():
    narration = Narration("m", None, ("Fine {F1}.",), {}, {"why.1": ()}, 1, 1)
    md = narrate_markdown(engine_markdown("zh"), narration, "zh")
    assert "**Bug fix in storage.**" in md and "为什么重要： Fine {F1}." in md and "由 m 根据" in md
    assert explain(narration, SHEET, "zh")[1] == "why.1：未引用事实"
    empty = Narration("m", None, (), {}, {}, 0, 2)
    assert narrate_markdown(engine_markdown(), empty, "en") == engine_markdown()


def test_filled_prose_is_neutralised():
    assert fill("A <b>bold</b> claim {F1}.", SHEET) == "A &lt;b&gt;bold&lt;/b&gt; claim."


def test_prompt_packs_highest_ranked_facts_first_and_names_the_rest():
    full = build_prompt(SHEET)
    assert not full.dropped and "F1 [summary]" in full.user and "P1 is" in full.user
    assert "storage/upload.py" in full.user and "Simplified Chinese" not in full.system
    tight = build_prompt(SHEET, budget=full.tokens + ANSWER_TOKENS - 40)
    assert tight.dropped and tight.tokens + ANSWER_TOKENS <= full.tokens + ANSWER_TOKENS - 40
    ranks = {f.id: f.rank for f in SHEET.facts}
    assert min(ranks[i] for i in tight.dropped) >= 3  # breaking, behaviour, focus and summary stay
    assert {"F1", fid(SHEET, "breaking"), fid(SHEET, "behaviour")} <= set(tight.packed)
    assert f"{tight.dropped[0]} (" in tight.user  # listed by name only
    zh = build_prompt(build_fact_sheet({**DATA, "lang": "zh"}))
    assert "Simplified Chinese" in zh.system


def test_hundreds_of_behaviour_facts_leave_room_for_the_focus_points():
    # A big pull request has a behaviour fact per example script; the points the
    # narrator words must still fit, and the user-facing facts keep their rank.
    noise = [{"kind": "env_added", "symbol": f"VAR_{i}", "path": f"examples/run_{i}.sh", "new": "1", "user_facing": False}
             for i in range(300)]  # fmt: skip
    key = {"kind": "default_changed", "symbol": "data.shuffle", "path": "cfg.yaml", "old": "true", "new": "false", "user_facing": True}
    sheet = build_fact_sheet({**DATA, "behaviour": [*noise, key]})
    prompt = build_prompt(sheet)
    points = [f.id for f in sheet.facts if f.point]
    assert points and set(points) <= set(prompt.packed)
    shuffle = next(f for f in sheet.facts if "data.shuffle" in f.text)
    assert shuffle.id in prompt.packed and not shuffle.minor
    assert sum(1 for f in sheet.facts if f.kind == "behaviour" and not f.minor) == 12


def test_largest_fact_first_within_a_rank():
    data = {"lang": "en", "follow_ups": ["short one", "a much longer follow up that says a great deal more words"]}
    sheet = build_fact_sheet(data)
    roomy = build_prompt(sheet)
    assert roomy.packed[0] == "F2"


def test_token_estimate_is_conservative():
    assert estimate_tokens("abcdef") == 2 and estimate_tokens("中文") == 2 and estimate_tokens("") == 0


def test_validator_costs_well_under_5_ms_per_guide():
    answer = parse_answer('{"summary": "Uploads survive an outage {F2}.", "why_it_matters": ["a {F1}.", "b {F2}.", "c 3 {F3}."], "focus_reasons": {"P1": "d {F1}."}}')
    started = time.perf_counter()
    for _ in range(200):
        check_answer(answer, SHEET)
    assert (time.perf_counter() - started) / 200 < 0.005


def test_a_huge_fact_sheet_stays_within_the_budget_and_counts_what_it_leaves_out():
    data = {"lang": "en", "follow_ups": [f"follow up number {i} about some_function_{i} in pkg/mod_{i}.py" for i in range(300)]}
    prompt = build_prompt(build_fact_sheet(data), budget=1200)
    assert prompt.tokens + ANSWER_TOKENS <= 1200 and prompt.packed
    assert "more" in prompt.user and len(prompt.dropped) > 40
