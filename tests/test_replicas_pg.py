"""Three ``prguide serve`` processes sharing one PostgreSQL schema and one sandbox.

Deliveries go round-robin to the replicas over loopback, with duplicates (the same
delivery id sent to another replica) and redeliveries of merges under new ids; one
replica is killed with SIGKILL in the middle and started again. Afterwards every
merged pull request has exactly one guide comment and its labels, no job is lost or
parked, and the writes stayed within GitHub's per-installation budget, counted once
for all replicas.

The number of pull requests is ``PRGUIDE_REPLICA_PRS`` (default 20, not 100): the
write budget (80 a minute per installation) is the bottleneck by design, and 100
merged PRs take about four minutes of writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from loopback import pr_delivery
from sandbox_helpers import APP_ID, app_private_key, start_sandbox  # noqa: F401

from bot.app import pg
from bot.app.pgjobs import PgJobStore
from bot.app.webhook import sign
from bot.engine import build_guide
from bot.marker import parse_marker
from bot.rules import load_rules
from bot.snapshot import PullRequestSnapshot

pytestmark = [pytest.mark.corpus, pytest.mark.replicas]

SECRET = "replicas webhook secret"
REPO = "verl-project/verl"
PRS = int(os.environ.get("PRGUIDE_REPLICA_PRS", "20"))
#: Whole test, seconds: replicas start in a few seconds; the write budget (about three writes per PR at 72 a minute) and the killed replica's lease pace the rest.
DEADLINE = 60.0 + 5.0 * PRS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    def __init__(self, name: str, env: dict[str, str], tmp_path: Path):
        self.name = name
        self.port = free_port()
        self.env = {**env, "PORT": str(self.port), "PRGUIDE_DB": str(tmp_path / f"{name}.db")}
        self.log = tmp_path / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve"], env=self.env, stdout=log, stderr=subprocess.STDOUT
            )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck replica
                self.proc.kill()

    async def ready(self, session: aiohttp.ClientSession, deadline: float) -> None:
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.log.read_text()[-3000:]
            try:
                async with session.get(f"{self.url}/healthz") as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
        raise AssertionError(f"{self.name} did not start: {self.log.read_text()[-3000:]}")


def smallest_bundles(corpus: Path, count: int) -> list[dict]:
    bundles = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(corpus.glob("*.json"))]
    bundles = [b for b in bundles if b["pull"].get("merged_at")]
    bundles.sort(key=lambda b: (len(b["files"]), b["pull"]["number"]))
    if len(bundles) < count:
        pytest.skip(f"the corpus has {len(bundles)} merged pull requests, the test needs {count}")
    return bundles[:count]


async def test_three_replicas_lose_nothing_and_double_nothing(pg_schema, app_private_key, corpus_dir, webhook_payload, tmp_path):  # noqa: F811
    url, schema = pg_schema
    started_at = time.monotonic()
    deadline = started_at + DEADLINE
    bundles = smallest_bundles(corpus_dir, PRS)
    template = webhook_payload("pull_request", "closed.payload.json")
    rules = load_rules()
    rnd = random.Random(14)

    async with start_sandbox(app_private_key, bundles=bundles) as sandbox:
        write_times: list[float] = []
        record = sandbox.state.record

        def timed_record(method: str, path: str, status: int) -> None:
            if method != "GET":
                write_times.append(time.monotonic())
            record(method, path, status)

        sandbox.state.record = timed_record
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PRGUIDE_", "GITHUB_"))},
            "GITHUB_APP_ID": str(APP_ID),
            "GITHUB_PRIVATE_KEY": app_private_key.decode(),
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITHUB_API_URL": sandbox.base_url,
            "HOST": "127.0.0.1",
            "PRGUIDE_DATABASE_URL": url,
            "PRGUIDE_DATABASE_SCHEMA": schema,
            "PRGUIDE_JOB_LEASE": "3",
            "PRGUIDE_WORKERS": "4",
            "PRGUIDE_LOG_LEVEL": "WARNING",
        }
        replicas = [Replica(f"r{i}", env, tmp_path) for i in range(3)]
        for r in replicas:
            r.start()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
                await asyncio.gather(*(r.ready(session, deadline) for r in replicas))

                # 3 deliveries per pull request: its merge, and two it ignores (edited, labeled);
                # then 10 % of the merges again under new ids and 20 % of all ids again, elsewhere.
                sends: list[tuple[str, str, dict]] = []
                for b in bundles:
                    n = b["pull"]["number"]
                    merged = pr_delivery(template, b)
                    sends.append((f"merge-{n}", "pull_request", merged))
                    for action in ("edited", "labeled"):
                        other = pr_delivery(template, b)
                        other["action"] = action
                        sends.append((f"{action}-{n}", "pull_request", other))
                rnd.shuffle(sends)
                for b in rnd.sample(bundles, max(1, len(bundles) // 10)):
                    sends.append((f"again-{b['pull']['number']}", "pull_request", pr_delivery(template, b)))
                for delivery in rnd.sample(sends, len(sends) // 5):
                    sends.insert(rnd.randrange(len(sends) // 2, len(sends) + 1), delivery)

                statuses: dict[str, list[int]] = {}
                killed_at = len(sends) // 2

                async def send(i: int, delivery_id: str, event: str, payload: dict) -> None:
                    body = json.dumps(payload).encode()
                    headers = {
                        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery_id,
                        "Content-Type": "application/json", "X-Hub-Signature-256": sign(SECRET, body),
                    }
                    for attempt in range(len(replicas) * 3):
                        target = replicas[(i + attempt) % len(replicas)]
                        try:
                            async with session.post(f"{target.url}/webhook", data=body, headers=headers) as resp:
                                statuses.setdefault(delivery_id, []).append(resp.status)
                                if resp.status < 500:
                                    return
                        except aiohttp.ClientError:
                            pass  # the killed replica: GitHub would redeliver; send it elsewhere
                        await asyncio.sleep(0.05)
                    raise AssertionError(f"no replica took {delivery_id}")

                db = pg.connect(url, schema=schema, migrate_components=())
                interrupted: list[int] = []
                for start in range(0, len(sends), 10):
                    if start <= killed_at < start + 10:
                        victim = replicas[1]
                        # Kill it while it runs jobs (the write budget keeps jobs running for a while).
                        while not interrupted and time.monotonic() < deadline - 60:
                            with db.pool.connection() as conn:
                                interrupted = [r[0] for r in conn.execute(
                                    "SELECT id FROM jobs WHERE state = 'running' AND owner LIKE %s",
                                    (f"%:{victim.proc.pid}:%",),
                                )]
                            await asyncio.sleep(0.05)
                        pid = victim.proc.pid
                        victim.kill()
                        # What it ran when it died: a job seen running above may have finished
                        # in between, so only the rows still held by the dead process count.
                        with db.pool.connection() as conn:
                            interrupted = [r[0] for r in conn.execute(
                                "SELECT id FROM jobs WHERE state = 'running' AND owner LIKE %s", (f"%:{pid}:%",),
                            )]
                        victim.start()
                    await asyncio.gather(*(send(start + j, *s) for j, s in enumerate(sends[start : start + 10])))
                await replicas[1].ready(session, deadline)

                store = PgJobStore(db)
                try:
                    while True:
                        counts = store.counts()
                        if counts["queued"] == counts["running"] == 0:
                            break
                        assert time.monotonic() < deadline, f"jobs still open: {counts}"
                        await asyncio.sleep(0.2)
                    with db.pool.connection() as conn:
                        rows = conn.execute("SELECT delivery_id, state, outcome FROM jobs").fetchall()
                        taken_over = conn.execute(
                            "SELECT id, state, attempts FROM jobs WHERE id = ANY(%s)", (interrupted,)
                        ).fetchall()
                finally:
                    store.close()
        finally:
            for r in replicas:
                r.stop()

        # Nothing lost: every merge and redelivery became exactly one job, all done.
        merges = {d for d, _, _ in sends if d.startswith(("merge-", "again-"))}
        assert {d for d, _, _ in rows} == merges
        assert all(state == "done" for _, state, _ in rows), rows
        assert all(s < 500 or s == 503 for codes in statuses.values() for s in codes)
        # The jobs the killed replica was running were taken over after their lease and finished.
        assert interrupted, "the victim never ran a job"
        assert all(state == "done" and attempts >= 2 for _, state, attempts in taken_over), taken_over
        # Nothing doubled: one guide comment per pull request, with its labels.
        bot = sandbox.state.bot_login
        for b in bundles:
            n = b["pull"]["number"]
            guides = [c for c in sandbox.comments(REPO, n) if c.user == bot and parse_marker(c.body) is not None]
            assert len(guides) == 1, (n, len(guides))
            snapshot = PullRequestSnapshot.from_github(b["pull"], b["files"], b["reviews"], b["review_comments"])
            expected = build_guide(snapshot, rules)
            assert sorted(sandbox.labels(REPO, n)) == sorted(expected.labels), n
        # Within the budget for all replicas together: 80 writes in any minute, 500 in the hour.
        write_times.sort()
        busiest = max((sum(1 for t in write_times if s <= t < s + 60) for s in write_times), default=0)
        assert busiest <= 80 and len(write_times) <= 500, (busiest, len(write_times))
        print(
            f"\n{len(sends)} deliveries for {PRS} PRs, {len(interrupted)} job(s) taken over from the killed replica,"
            f" {len(write_times)} writes (busiest minute {busiest}),"
            f" {time.monotonic() - started_at:.1f} s"
        )
