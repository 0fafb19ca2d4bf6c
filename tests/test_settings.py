"""Settings are read once from the environment and every problem is reported together."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bot.app.settings import DEFAULT_API_URL, Settings, SettingsError, from_env


@pytest.fixture(scope="module")
def pem() -> str:
    # An EC key is as valid a PEM private key as RSA, and far quicker to generate.
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


@pytest.fixture
def env(pem, tmp_path) -> dict[str, str]:
    return {
        "GITHUB_APP_ID": "12345",
        "GITHUB_PRIVATE_KEY": pem,
        "GITHUB_WEBHOOK_SECRET": "s3cret",
        "PRGUIDE_DB": str(tmp_path / "jobs.sqlite3"),
    }


def test_minimal_environment_gives_defaults(env, tmp_path):
    settings = from_env(env)
    assert settings.app_id == 12345
    assert settings.webhook_secret == "s3cret"
    assert settings.api_url == DEFAULT_API_URL
    assert settings.port == 8080
    assert settings.lang == "en"
    assert settings.workers == 4
    assert settings.rules == ()
    assert settings.view_token is None
    assert settings.db_path == tmp_path / "jobs.sqlite3"
    assert settings.private_key.startswith("-----BEGIN PRIVATE KEY-----")


def test_every_problem_is_listed_in_one_error(tmp_path):
    with pytest.raises(SettingsError) as info:
        from_env(
            {
                "GITHUB_APP_ID": "abc",
                "GITHUB_PRIVATE_KEY": "not a key",
                "PORT": "99999",
                "PRGUIDE_LANG": "fr",
                "PRGUIDE_WORKERS": "0",
                "PRGUIDE_LOG_LEVEL": "chatty",
                "GITHUB_API_URL": "api.github.com",
                "PRGUIDE_RULES": str(tmp_path / "missing.yml"),
                "PRGUIDE_DB": str(tmp_path),
            }
        )
    problems = info.value.problems
    text = str(info.value)
    assert len(problems) == 10, problems
    for needle in (
        "GITHUB_APP_ID must be a whole number, got 'abc'",
        "GITHUB_PRIVATE_KEY is not a PEM private key",
        "GITHUB_WEBHOOK_SECRET is not set",
        "PORT must be between 0 and 65535, got 99999",
        "PRGUIDE_LANG must be one of en, zh, got 'fr'",
        "PRGUIDE_WORKERS must be between 1 and 64, got 0",
        "PRGUIDE_LOG_LEVEL must be one of",
        "GITHUB_API_URL must be an http(s) URL",
        "PRGUIDE_RULES: no such rule file or folder",
        "is a folder",
    ):
        assert needle in text


def test_missing_app_id_and_key_are_named():
    with pytest.raises(SettingsError) as info:
        from_env({"GITHUB_WEBHOOK_SECRET": "x"})
    text = str(info.value)
    assert "GITHUB_APP_ID is not set" in text
    assert "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH must be set" in text


def test_escaped_newlines_in_key_are_accepted(env, pem):
    env["GITHUB_PRIVATE_KEY"] = pem.strip().replace("\n", "\\n")
    assert from_env(env).private_key == pem


def test_key_from_file(env, pem, tmp_path):
    path = tmp_path / "app.pem"
    path.write_text(pem)
    del env["GITHUB_PRIVATE_KEY"]
    env["GITHUB_PRIVATE_KEY_PATH"] = str(path)
    assert from_env(env).private_key == pem


def test_key_file_unreadable_and_both_key_sources(env, tmp_path):
    env["GITHUB_PRIVATE_KEY_PATH"] = str(tmp_path / "absent.pem")
    with pytest.raises(SettingsError, match="set only one of GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH"):
        from_env(env)
    del env["GITHUB_PRIVATE_KEY"]
    with pytest.raises(SettingsError, match="GITHUB_PRIVATE_KEY_PATH: cannot read"):
        from_env(env)


def test_pem_shaped_garbage_is_refused(env):
    env["GITHUB_PRIVATE_KEY"] = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----"
    with pytest.raises(SettingsError, match="cannot be loaded as a private key"):
        from_env(env)


def test_rules_split_on_pathsep_and_commas(env, tmp_path):
    import os

    for name in ("a.yml", "b.yml", "c"):
        (tmp_path / name).touch()
    env["PRGUIDE_RULES"] = f"{tmp_path / 'a.yml'}{os.pathsep}{tmp_path / 'b.yml'}, {tmp_path / 'c'}"
    assert from_env(env).rules == (tmp_path / "a.yml", tmp_path / "b.yml", tmp_path / "c")


def test_values_are_normalised(env):
    env.update(
        {
            "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
            "PORT": "0",
            "PRGUIDE_LANG": "ZH",
            "PRGUIDE_WORKERS": "8",
            "PRGUIDE_LOG_LEVEL": "debug",
            "PRGUIDE_VIEW_TOKEN": "view-me",
            "HOST": "127.0.0.1",
        }
    )
    settings = from_env(env)
    assert settings.api_url == "https://ghe.example.com/api/v3"
    assert (settings.port, settings.lang, settings.workers) == (0, "zh", 8)
    assert settings.log_level == "DEBUG" and settings.log_level_number == 10
    assert settings.view_token == "view-me"
    assert settings.host == "127.0.0.1"


def test_repr_hides_secrets(env):
    env["PRGUIDE_VIEW_TOKEN"] = "view-token-value"
    settings = from_env(env)
    text = repr(settings)
    assert "s3cret" not in text
    assert "PRIVATE KEY" not in text
    assert "view-token-value" not in text
    assert "12345" in text


def test_settings_are_frozen(env):
    settings = from_env(env)
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]
    assert isinstance(settings, Settings)
    assert isinstance(settings.db_path, Path)


def test_classmethod_reads_the_same(env):
    assert Settings.from_env(env) == from_env(env)


@pytest.mark.parametrize(
    ("raw", "kept"),
    [("s3cret\n", "s3cret"), ("s3cret\r\n", "s3cret"), ("s3cret", "s3cret"), ("s3cret\n\n", "s3cret\n"), (" s3cret ", " s3cret ")],
)
def test_one_trailing_line_break_is_taken_off_the_webhook_secret(env, raw, kept):
    env["GITHUB_WEBHOOK_SECRET"] = raw
    assert from_env(env).webhook_secret == kept


def test_a_secret_that_still_has_whitespace_is_warned_about_without_quoting_it():
    from bot.app.settings import secret_warnings

    assert secret_warnings("s3cret") == []
    (warning,) = secret_warnings(" s3cret\n")
    assert "GITHUB_WEBHOOK_SECRET begins or ends with whitespace" in warning
    assert "s3cret" not in warning


def test_postgresql_settings_are_read_and_checked(env):
    settings = from_env({**env, "PRGUIDE_DATABASE_URL": "postgresql://db:5432/prguide", "PRGUIDE_DATABASE_SCHEMA": "guides",
                         "PRGUIDE_DB_POOL_MIN": "2", "PRGUIDE_DB_POOL_MAX": "8", "PRGUIDE_DB_POOL_TIMEOUT": "2.5",
                         "PRGUIDE_JOB_LEASE": "20", "PRGUIDE_ROLE": "Worker"})
    assert (settings.backend, settings.database_schema, settings.db_pool_min, settings.db_pool_max) == ("postgresql", "guides", 2, 8)
    assert (settings.db_pool_timeout, settings.job_lease, settings.role) == (2.5, 20.0, "worker")
    assert "db:5432" not in repr(settings)  # a URL may carry a password
    assert from_env(env).backend == "sqlite" and from_env(env).role == "all"
    for role in ("web", "worker"):  # a split role needs the shared queue
        with pytest.raises(SettingsError, match=f"PRGUIDE_ROLE \\(serve --role\\) {role} needs PRGUIDE_DATABASE_URL"):
            from_env({**env, "PRGUIDE_ROLE": role})
    with pytest.raises(SettingsError) as caught:
        from_env({**env, "PRGUIDE_DATABASE_URL": "mysql://db/x", "PRGUIDE_DATABASE_SCHEMA": "a-b", "PRGUIDE_DB_POOL_MIN": "9",
                  "PRGUIDE_DB_POOL_MAX": "3", "PRGUIDE_DB_POOL_TIMEOUT": "soon", "PRGUIDE_JOB_LEASE": "0", "PRGUIDE_ROLE": "both"})
    text = "\n".join(caught.value.problems)
    for name in ("PRGUIDE_DATABASE_URL", "PRGUIDE_DATABASE_SCHEMA", "PRGUIDE_DB_POOL_MIN (9)", "PRGUIDE_DB_POOL_TIMEOUT",
                 "PRGUIDE_JOB_LEASE", "PRGUIDE_ROLE"):
        assert name in text
def test_reconcile_look_back_setting(env):
    assert from_env(env).reconcile_max_lookback == 7 * 86400
    assert from_env({**env, "PRGUIDE_RECONCILE_MAX_LOOKBACK": "172800"}).reconcile_max_lookback == 172800
    with pytest.raises(SettingsError, match=r"PRGUIDE_RECONCILE_MAX_LOOKBACK must be at least twice PRGUIDE_RECONCILE_INTERVAL \(7200 seconds\), got 3600"):
        from_env({**env, "PRGUIDE_RECONCILE_MAX_LOOKBACK": "3600"})
    with pytest.raises(SettingsError, match="PRGUIDE_RECONCILE_MAX_LOOKBACK"):
        from_env({**env, "PRGUIDE_RECONCILE_MAX_LOOKBACK": "a week"})
    assert from_env({**env, "PRGUIDE_RECONCILE_INTERVAL": "0", "PRGUIDE_RECONCILE_MAX_LOOKBACK": "0"}).reconcile_max_lookback == 0


def test_reconcile_interval_setting(env):
    assert from_env(env).reconcile_interval == 3600
    assert from_env({**env, "PRGUIDE_RECONCILE_INTERVAL": "0"}).reconcile_interval == 0
    assert from_env({**env, "PRGUIDE_RECONCILE_INTERVAL": "600"}).reconcile_interval == 600
    with pytest.raises(SettingsError, match="PRGUIDE_RECONCILE_INTERVAL must be 0"):
        from_env({**env, "PRGUIDE_RECONCILE_INTERVAL": "5"})


def test_the_pool_keeps_six_connections_by_default_but_never_more_than_its_most(env):
    env = {**env, "PRGUIDE_DATABASE_URL": "postgresql://db/x"}
    assert (from_env(env).db_pool_min, from_env(env).db_pool_max) == (6, 10)
    small = from_env({**env, "PRGUIDE_DB_POOL_MAX": "2"})
    assert (small.db_pool_min, small.db_pool_max) == (2, 2)
    assert from_env({**env, "PRGUIDE_DB_POOL_MIN": "1"}).db_pool_min == 1
