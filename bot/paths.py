"""Where prguide finds its shipped configuration (default rule files, settings)."""

from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    """Return the folder holding ``rules/``, ``examples/`` and ``settings.yml``.

    ``PRGUIDE_CONFIG_DIR`` wins when set (the Docker image sets it); otherwise the
    ``config/`` folder beside the ``bot`` package in a source checkout.
    """
    override = os.environ.get("PRGUIDE_CONFIG_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent.parent / "config"


def default_rules_dir() -> Path:
    """Return the folder of rule files applied to every repository by default."""
    return config_dir() / "rules"
