"""``prguide guide --narrator URL``: narration offline against a scripted model, JSON report."""

from __future__ import annotations

import asyncio
import json

from sandbox_helpers import synthetic_bundle

from bot.cli import main
from bot.sandbox.llm import Reply, ScriptedModel


def bundle_file(tmp_path):
    """A pull request of 20 changed files: a quick read, which is narrated (a skim is not)."""
    path = tmp_path / "7.json"
    path.write_text(json.dumps(synthetic_bundle(7, files=20)), encoding="utf-8")
    return path


async def test_guide_json_carries_the_narration_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRGUIDE_LLM_MODEL", "llama3.1:8b")
    monkeypatch.setenv("PRGUIDE_LLM_API_KEY", "sk-cli-secret-key-000")
    answer = {"summary": "Twenty modules change together {F1}.", "why_it_matters": ["It touches module_0099 {F1}."], "focus_reasons": {}}
    async with ScriptedModel([Reply.json(answer)]) as model:
        code = await asyncio.to_thread(main, ["guide", str(bundle_file(tmp_path)), "--format", "json", "--narrator", model.base_url])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["narration"] == {"model": "llama3.1:8b", "kept": 1, "rejected": 1, "fallback_reason": None}
    assert "**Twenty modules change together.**" in data["markdown"] and "module_0099" not in data["markdown"]  # made up: rejected
    assert "sk-cli-secret-key-000" not in out + err


async def test_history_style_failures_keep_the_engine_guide(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRGUIDE_LLM_MODEL", "m")
    monkeypatch.setenv("PRGUIDE_LLM_URL", "")
    async with ScriptedModel([Reply.error(500)]) as model:
        monkeypatch.setenv("PRGUIDE_LLM_URL", model.base_url)
        code = await asyncio.to_thread(main, ["guide", str(bundle_file(tmp_path)), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["narration"]["fallback_reason"] == "server_error" and "narrated by" not in data["markdown"]


def test_narrator_without_a_model_name_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PRGUIDE_LLM_MODEL", raising=False)
    code = main(["guide", str(bundle_file(tmp_path)), "--narrator", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert code != 0 and "--model" in err and "PRGUIDE_LLM_MODEL" in err and len(err.strip().splitlines()) == 1


async def test_the_model_is_named_with_a_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRGUIDE_LLM_MODEL", "not-this-one")
    answer = {"summary": "Three modules change together {F1}.", "why_it_matters": [], "focus_reasons": {}}
    async with ScriptedModel([Reply.json(answer)]) as model:
        argv = ["guide", str(bundle_file(tmp_path)), "--format", "json", "--narrator", model.base_url, "--model", "qwen2.5-coder:7b"]
        code = await asyncio.to_thread(main, argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["narration"]["model"] == "qwen2.5-coder:7b" and model.requests[0]["model"] == "qwen2.5-coder:7b"


def test_a_model_without_a_narrator_server_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PRGUIDE_LLM_URL", raising=False)
    assert main(["guide", str(bundle_file(tmp_path)), "--model", "m"]) != 0
    err = capsys.readouterr().err
    assert "--narrator URL" in err and len(err.strip().splitlines()) == 1


def test_narrator_url_must_be_http(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRGUIDE_LLM_MODEL", "m")
    assert main(["guide", str(bundle_file(tmp_path)), "--narrator", "ftp://x"]) != 0
    assert "must be http(s)" in capsys.readouterr().err


def test_without_a_narrator_nothing_changes(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PRGUIDE_LLM_URL", raising=False)
    assert main(["guide", str(bundle_file(tmp_path)), "--format", "json"]) == 0
    assert "narration" not in json.loads(capsys.readouterr().out)


async def test_a_guide_that_is_safe_to_skip_is_not_narrated_offline_either(corpus_dir, tmp_path, monkeypatch, capsys):
    """The CLI narrates what the app narrates: quick and deep reads; a skim or "Safe to skip" guide sends nothing."""
    monkeypatch.setenv("PRGUIDE_LLM_MODEL", "m")
    answer = {"summary": "Docs change {F1}.", "why_it_matters": [], "focus_reasons": {}}
    async with ScriptedModel([Reply.json(answer)]) as model:
        argv = ["guide", str(corpus_dir / "7406.json"), "--format", "json", "--narrator", model.base_url]  # a docs line
        code = await asyncio.to_thread(main, argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["reading_level"] == "skip" and model.requests == []
    assert "narration" not in data and "narrated by" not in data["markdown"]
