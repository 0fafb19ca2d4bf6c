"""Shared data for the narrator tests: a small guide's JSON data and its Markdown."""

from __future__ import annotations

from bot.engine.marker import MarkerState, render_marker
from bot.engine.render.messages import t

DATA = {
    "repository": "acme/widgets",
    "number": 42,
    "title": "Retry uploads when storage answers 503",
    "lang": "en",
    "engine_version": "test-1",
    "summary": "Bug fix in storage: upload_chunk now retries.",
    "breaking_reasons": [{"reason": "removes the option `max_tries` from `config/storage.yml`", "file": "config/storage.yml", "key": "x"}],
    "behaviour": [{"kind": "default_changed", "path": "storage/upload.py", "symbol": "RETRIES", "old": "3", "new": "5",
                   "detail": "", "line": 10, "user_facing": True}],
    "focus": [{"file": "storage/upload.py", "symbol": "upload_chunk", "reason": "the retry loop is new"},
              {"file": "tests/test_upload.py", "symbol": None, "reason": "largest test change"}],
    "dependencies": [{"name": "requests", "action": "bumped", "old": "2.31.0", "new": "2.32.3", "file": "requirements.txt", "bump": "minor"}],
    "follow_ups": ["update the storage runbook"],
    "importance_factors": [{"points": 1, "reason": "every merged PR starts at 1", "source": "base"},
                           {"points": 3, "reason": "breaks a public option", "source": "breaking"}],
    "areas": ["storage"],
    "review_highlights": [{"path": "storage/upload.py", "line": 12, "comments": 3, "opening": "should this back off?"}],
    "description": {"purpose": "Uploads failed for good on a transient 503.", "design_points": [], "sections": {}},
}  # fmt: skip


def engine_markdown(lang: str = "en") -> str:
    """A guide shaped like the engine's: marker, title, bold summary, focus list."""
    return (
        f"{render_marker(MarkerState(lang=lang, engine='test-1'))}\n### 📖 guide\n\nRetry uploads\n\n"
        f"**Bug fix in storage.** Read in 2 minutes.\n\n#### {t('h.focus', lang)}\n"
        "1. `storage/upload.py`: the retry loop is new\n2. `tests/test_upload.py`: largest test change\n\n#### Other\nend\n"
    )


def sid(sheet, text: str) -> str:
    """The symbol id of ``text`` in ``sheet``."""
    return next(k for k, v in sheet.symbols.items() if v == text)


def fid(sheet, kind: str) -> str:
    """The first fact id of ``kind``."""
    return next(f.id for f in sheet.facts if f.kind == kind)
