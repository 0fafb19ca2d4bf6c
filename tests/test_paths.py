"""Where the shipped rule files are found: env override, source checkout, installed data files."""

from pathlib import Path

from bot import paths


def test_env_override_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("PRGUIDE_CONFIG_DIR", str(tmp_path))
    assert paths.config_dir() == tmp_path
    assert paths.default_rules_dir() == tmp_path / "rules"


def test_source_checkout_config(monkeypatch):
    monkeypatch.delenv("PRGUIDE_CONFIG_DIR", raising=False)
    assert paths.config_dir() == Path(paths.__file__).resolve().parent.parent / "config"
    assert (paths.default_rules_dir() / "size.yml").is_file()


def test_installed_data_files_when_there_is_no_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv("PRGUIDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr(paths, "__file__", str(tmp_path / "site-packages" / "bot" / "paths.py"))
    monkeypatch.setattr(paths.sys, "prefix", str(tmp_path / "venv"))
    assert paths.config_dir() == tmp_path / "venv" / "share" / "prguide" / "config"
