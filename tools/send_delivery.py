"""Send one signed merged-pull-request delivery to a prguide trial and print the guide it posts.

For the ``compose.yaml`` trial (or any prguide pointed at ``prguide sandbox``): the pull
request -- this checkout's latest commit, or ``--bundle FILE`` -- is added to the
sandbox (``POST /_sandbox/pulls``), its ``pull_request`` ``closed`` delivery (merged) is
signed with the webhook secret and posted to prguide, then the sandbox is asked
(``GET /_sandbox/state``) until the guide comment is there.

    python tools/send_delivery.py [--webhook URL] [--sandbox URL] [--secret S] [--bundle FILE] [--timeout SECONDS]

Exit status 0 when the comment landed, 1 otherwise. Only the given URLs are contacted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.demo import delivery_headers, latest_commit_bundle, merged_event  # noqa: E402

INSTALLATION_ID = 1


def _request(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - URLs the user gave
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def send(webhook: str, sandbox: str, secret: str, bundle: dict, *, timeout: float = 60.0) -> dict:
    """Add ``bundle`` to the sandbox, deliver its merge to ``webhook``; return ``{"status", "comment", "labels"}``.

    ``comment`` is ``None`` when no guide landed within ``timeout`` seconds.
    """
    status, body = _request(
        f"{sandbox}/_sandbox/pulls", data=json.dumps({"bundle": bundle}).encode(), headers={"Content-Type": "application/json"}
    )
    if status != 201:
        raise RuntimeError(f"the sandbox refused the pull request: {status} {body[:200]!r}")
    added = json.loads(body)
    owner, name = added["repo"].split("/", 1)
    repository = {"name": name, "full_name": added["repo"], "private": False, "owner": {"login": owner, "type": "User"}}
    payload = json.dumps(merged_event(bundle["pull"], repository, installation_id=INSTALLATION_ID)).encode()
    status, _ = _request(webhook, data=payload, headers=delivery_headers(payload, secret, str(uuid.uuid4())))
    issue = f"{added['repo']}#{added['number']}"
    deadline = time.monotonic() + timeout
    while status == 202 and time.monotonic() < deadline:
        _, state = _request(f"{sandbox}/_sandbox/state")
        found = json.loads(state)
        if found["comments"].get(issue):
            return {"status": status, "issue": issue, "comment": found["comments"][issue][-1]["body"],
                    "labels": found["labels"].get(issue, [])}
        time.sleep(0.2)  # polling a condition, bounded by the deadline
    return {"status": status, "issue": issue, "comment": None, "labels": []}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module text)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--webhook", default="http://127.0.0.1:8080/webhook", help="prguide's webhook URL")
    parser.add_argument("--sandbox", default="http://127.0.0.1:9000", help="the sandbox's URL")
    parser.add_argument("--secret", default=os.environ.get("PRGUIDE_TRY_SECRET", "compose-trial-secret"))
    parser.add_argument("--bundle", type=Path, help="a pull request bundle JSON (default: this checkout's latest commit)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the comment")
    args = parser.parse_args(argv)
    bundle = json.loads(args.bundle.read_text(encoding="utf-8")) if args.bundle else latest_commit_bundle(ROOT)
    try:
        result = send(args.webhook, args.sandbox.rstrip("/"), args.secret, bundle, timeout=args.timeout)
    except (OSError, RuntimeError) as exc:
        print(f"send_delivery: {exc}", file=sys.stderr)
        return 1
    if result["comment"] is None:
        print(f"send_delivery: webhook answered {result['status']}; no guide on {result['issue']} yet", file=sys.stderr)
        return 1
    print(f"{result['issue']} labels: {', '.join(result['labels']) or '-'}\n\n{result['comment']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
