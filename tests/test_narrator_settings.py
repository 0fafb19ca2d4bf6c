"""The narrator's settings, repository switch and log redaction."""

from __future__ import annotations

import io
import json
import logging

import pytest
from test_settings import env, pem  # noqa: F401 - fixtures

from bot.app.logging import configure_logging, redact, redact_value
from bot.app.settings import SettingsError, from_env
from bot.feature_support import narration_wanted
from bot.engine.repo_config import RepoConfigError, parse_repo_config


def guide_of(level: str):
    from types import SimpleNamespace

    return SimpleNamespace(data={"reading_level": level})


QUICK = guide_of("quick")


def test_narrator_is_off_by_default(env):  # noqa: F811
    settings = from_env(env)
    assert settings.llm_url is None and not narration_wanted(settings, parse_repo_config(""), QUICK)


def test_narrator_settings_are_read_and_the_key_hidden(env):  # noqa: F811
    settings = from_env({**env, "PRGUIDE_LLM_URL": "http://127.0.0.1:11434/v1/", "PRGUIDE_LLM_MODEL": "qwen2.5-coder:7b",
                         "PRGUIDE_LLM_API_KEY": "sk-hidden-value-123", "PRGUIDE_LLM_TIMEOUT": "30",
                         "PRGUIDE_LLM_DAILY_TOKENS": "100000"})  # fmt: skip
    assert (settings.llm_url, settings.llm_model, settings.llm_timeout, settings.llm_daily_tokens) == (
        "http://127.0.0.1:11434/v1", "qwen2.5-coder:7b", 30, 100000)
    assert "sk-hidden-value-123" not in repr(settings)
    assert narration_wanted(settings, parse_repo_config("lang: zh\n"), QUICK)
    assert narration_wanted(settings, parse_repo_config("lang: zh\n"), guide_of("deep"))
    assert not narration_wanted(settings, parse_repo_config("narrator: off\n"), QUICK)
    # A skim or skip guide ("safe to skip") is not worth a model call, nor sending its text out.
    assert not narration_wanted(settings, parse_repo_config(""), guide_of("skim"))
    assert not narration_wanted(settings, parse_repo_config(""), guide_of("skip"))


def test_bad_narrator_settings_are_all_reported(env):  # noqa: F811
    with pytest.raises(SettingsError) as info:
        from_env({**env, "PRGUIDE_LLM_URL": "localhost:8000", "PRGUIDE_LLM_BUDGET": "10", "PRGUIDE_LLM_TIMEOUT": "x"})
    text = str(info.value)
    assert "PRGUIDE_LLM_URL must be an http(s) URL" in text and "PRGUIDE_LLM_MODEL must name the model" in text
    assert "PRGUIDE_LLM_BUDGET must be between" in text and "PRGUIDE_LLM_TIMEOUT must be a whole number" in text


@pytest.mark.parametrize(("text", "on"), [("narrator: off\n", False), ("narrator: on\n", True), ("narrator: 'off'\n", False), ("", True)])
def test_repository_switch(text, on):
    assert parse_repo_config(text).narrator is on


def test_a_bad_repository_switch_names_its_line():
    with pytest.raises(RepoConfigError, match=r"prguide.yml:2: narrator must be on or off, got 1"):
        parse_repo_config("lang: en\nnarrator: 1\n")


def test_the_model_key_is_redacted_from_every_log_line():
    key = "local-key-without-any-known-shape-42"
    redact_value(key)
    redact_value("short")  # too short to redact safely: ignored
    assert redact(f"calling with {key}") == "calling with [REDACTED]" and redact("short") == "short"
    stream = io.StringIO()
    handler = configure_logging("INFO", stream=stream)
    try:
        logging.getLogger("prguide.narrator").warning("server said no for %s", key, extra={"llm_api_key": key})
    finally:
        logging.getLogger().removeHandler(handler)
    line = json.loads(stream.getvalue().splitlines()[-1])
    assert key not in stream.getvalue() and line["llm_api_key"] == "[REDACTED]"
