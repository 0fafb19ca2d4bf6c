"""Where prguide finds its shipped configuration (default rule files, settings)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def config_dir() -> Path:
    """Return the folder holding ``rules/``, ``examples/`` and ``settings.yml``.

    ``PRGUIDE_CONFIG_DIR`` wins when set (the Docker image sets it); then the
    ``config/`` folder beside the ``bot`` package in a source checkout; then
    ``<prefix>/share/prguide/config``, where a regular ``pip install`` puts it.
    """
    override = os.environ.get("PRGUIDE_CONFIG_DIR")
    if override:
        return Path(override)
    checkout = Path(__file__).resolve().parent.parent / "config"
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / "prguide" / "config"


def default_rules_dir() -> Path:
    """Return the folder of rule files applied to every repository by default."""
    return config_dir() / "rules"
