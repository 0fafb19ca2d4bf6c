"""Git repositories built commit by commit in a temporary folder, with fixed names and dates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

START = 1_700_000_000  # 2023-11-14T22:13:20Z


class Repo:
    """A git repository built commit by commit with fixed names and dates."""

    def __init__(self, path: Path):
        self.path = path
        self.clock = START
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def env(self, author: str, committer: str) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(self.path),
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": author,
            "GIT_AUTHOR_EMAIL": "author@example.com",
            "GIT_AUTHOR_DATE": f"@{self.clock} +0000",
            "GIT_COMMITTER_NAME": committer,
            "GIT_COMMITTER_EMAIL": "committer@example.com",
            # Committed a minute after authoring, so tests can tell which date is used.
            "GIT_COMMITTER_DATE": f"@{self.clock + 60} +0000",
        }

    def git(self, *args: str, author: str = "Dev One", committer: str = "Dev One", stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(author, committer),
            check=True,
        )
        return done.stdout.strip()

    def write(self, name: str, content: str | bytes) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def commit(self, message: str, *, author: str = "Dev One", add: tuple[str, ...] = ("-A",)) -> str:
        if add:
            self.git("add", *add)
        self.git("commit", "-q", "--allow-empty", "-F", "-", author=author, committer="GitHub", stdin=message)
        self.clock += 3600
        return self.git("rev-parse", "HEAD")
