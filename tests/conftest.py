"""Shared fixtures: where the real corpus and GitHub fixtures live, skipping when absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PRGUIDE_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "verl"
WEBHOOKS = SHARED / "fixtures" / "webhooks"
REST = SHARED / "fixtures" / "rest"


def _need(path: Path, what: str) -> Path:
    if not path.exists():
        pytest.skip(f"{what} not found at {path} (set PRGUIDE_SHARED to the shared/ folder)")
    return path


@pytest.fixture
def corpus_dir() -> Path:
    """The folder of real merged verl PR bundles; skips the test when absent."""
    return _need(CORPUS, "the verl PR corpus")


@pytest.fixture
def load_bundle_json(corpus_dir):
    """Return a function reading one corpus bundle (``{"pull", "files", ...}``) by PR number."""

    def load(number: int) -> dict:
        return json.loads((corpus_dir / f"{number}.json").read_text(encoding="utf-8"))

    return load


@pytest.fixture
def webhook_payload():
    """Return a function reading a real webhook payload example, e.g. ``("pull_request", "closed.payload.json")``."""

    def load(event: str, name: str) -> dict:
        path = _need(WEBHOOKS / event / name, f"webhook fixture {event}/{name}")
        return json.loads(path.read_text(encoding="utf-8"))

    return load
