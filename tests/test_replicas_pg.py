"""Three ``prguide serve`` processes sharing one PostgreSQL schema and one sandbox.

100 merged pull requests (``PRGUIDE_REPLICA_PRS``), the smallest of the two verl
corpora (``corpus/verl`` and ``corpus/verl-2026h1``), are spread over four
repositories, one installation each, as an app installed on four organizations
sees them. Their 300 deliveries (each merge, and an ``edited`` and a ``labeled``
delivery the app ignores) go round-robin to the replicas over loopback, with 10 %
of the merges redelivered under new ids and 20 % of all delivery ids sent again, each
to another replica than before; one replica is killed with SIGKILL in the middle and started again,
and another runs with its clock a minute ahead of the others (``PRGUIDE_REPLICA_CLOCK_AHEAD``
seconds; ``time.time`` shifted in that process before prguide is imported).
Afterwards every merged pull request has exactly one guide comment and its labels,
no job is lost or parked, the jobs the dead replica held were taken over, the replica
ahead ran jobs and took over none of the live ones, every installation's token wrote
only to its own repository, and each installation's writes stayed within GitHub's
budget for it (80 in any minute, 500 in the hour), counted once for all replicas.

The write budget is per installation and paces the run by design: a burst of 8,
then 72 writes a minute, and 100 then 400 an hour. One installation's 25 pull
requests need about 65 writes, so the run takes about a minute. The same 100 pull
requests in one installation would need about 250 writes, paced past the first 100
by the hour's 400: more than twenty minutes.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import re
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
from bot.engine.build import build_guide
from bot.engine.marker import parse_marker
from bot.sandbox import bundle_in_repo
from bot.github_objects import fill_label
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot

pytestmark = [pytest.mark.corpus, pytest.mark.replicas]

SECRET = "replicas webhook secret"
PRS = int(os.environ.get("PRGUIDE_REPLICA_PRS", "100"))
#: Seconds the third replica's clock runs ahead of the others'.
AHEAD = float(os.environ.get("PRGUIDE_REPLICA_CLOCK_AHEAD", "60"))
#: Runs ``prguide serve`` with ``time.time`` shifted by ``CLOCK_AHEAD`` seconds, as on a
#: machine whose clock is off (patched before prguide is imported, so every default
#: ``clock=time.time`` in it sees the shift).
LAUNCHER = """
import os, runpy, sys, time
ahead = float(os.environ["CLOCK_AHEAD"])
wall, wall_ns = time.time, time.time_ns
time.time = lambda: wall() + ahead
time.time_ns = lambda: wall_ns() + int(ahead * 1e9)
sys.argv = ["prguide", "serve"]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
"""
#: The installations (id, account): each holds one repository, ``<account>/verl``.
INSTALLATIONS = ((101, "lab-a"), (102, "lab-b"), (103, "lab-c"), (104, "lab-d"))
#: The second corpus, beside ``corpus_dir``.
SECOND_CORPUS = "verl-2026h1"
#: Whole test, seconds: replicas start in a few seconds; each installation's write budget
#: (about three writes per pull request at 72 a minute, after a burst of 8) and the killed
#: replica's lease pace the rest.
DEADLINE = 90.0 + 3.0 * math.ceil(PRS / len(INSTALLATIONS))
_REPO_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)/")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    def __init__(self, name: str, env: dict[str, str], tmp_path: Path, *, ahead: float = 0.0):
        self.name = name
        self.port = free_port()
        self.env = {**env, "PORT": str(self.port), "PRGUIDE_DB": str(tmp_path / f"{name}.db"), "CLOCK_AHEAD": str(ahead)}
        self.log = tmp_path / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER], env=self.env, stdout=log, stderr=subprocess.STDOUT)

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


def smallest_bundles(folders: list[Path], count: int) -> list[dict]:
    """The ``count`` merged pull requests with the fewest files across ``folders`` (each number once)."""
    by_number: dict[int, dict] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            bundle = json.loads(path.read_text(encoding="utf-8"))
            if bundle["pull"].get("merged_at"):
                by_number.setdefault(bundle["pull"]["number"], bundle)
    bundles = sorted(by_number.values(), key=lambda b: (len(b["files"]), b["pull"]["number"]))
    if len(bundles) < count:
        pytest.skip(f"the corpora have {len(bundles)} merged pull requests, the test needs {count}")
    return bundles[:count]


def spread(bundles: list[dict]) -> list[tuple[int, str, dict]]:
    """``(installation id, repository, bundle moved there)`` for each bundle, round-robin over INSTALLATIONS."""
    out = []
    for i, bundle in enumerate(bundles):
        installation, account = INSTALLATIONS[i % len(INSTALLATIONS)]
        repo = f"{account}/verl"
        out.append((installation, repo, bundle_in_repo(bundle, repo)))
    return out


def busiest_minute(times: list[float]) -> int:
    """The most of ``times`` (seconds) in any 60-second window."""
    times = sorted(times)
    return max((sum(1 for t in times if s <= t < s + 60) for s in times), default=0)


async def test_three_replicas_lose_nothing_and_double_nothing(pg_schema, app_private_key, corpus_dir, tmp_path):  # noqa: F811
    url, schema = pg_schema
    started_at = time.monotonic()
    deadline = started_at + DEADLINE
    second = corpus_dir.parent / SECOND_CORPUS
    if not second.is_dir():
        pytest.skip(f"the second verl corpus not found at {second} (set PRGUIDE_SHARED to the shared/ folder)")
    pulls = spread(smallest_bundles([corpus_dir, second], PRS))
    rules = load_rules()
    rnd = random.Random(14)
    installations = [{"id": number, "account": account} for number, account in INSTALLATIONS]
    installation_of = {account: number for number, account in INSTALLATIONS}

    async with start_sandbox(app_private_key, bundles=[b for _, _, b in pulls], installations=installations) as sandbox:
        # Content writes (not GET, under /repos/) by installation; token requests are the app's own.
        write_times: dict[int, list[float]] = {number: [] for number, _ in INSTALLATIONS}
        record = sandbox.state.record

        def timed_record(method: str, path: str, status: int) -> None:
            match = _REPO_PATH.match(path)
            if method != "GET" and match:
                write_times[installation_of[match.group(1)]].append(time.monotonic())
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
            # A reconcile pass at an hour's turn would queue jobs no delivery asked for.
            "PRGUIDE_RECONCILE_INTERVAL": "0",
        }
        replicas = [Replica(f"r{i}", env, tmp_path, ahead=AHEAD if i == 2 else 0.0) for i in range(3)]
        ahead = replicas[2]
        for r in replicas:
            r.start()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
                await asyncio.gather(*(r.ready(session, deadline) for r in replicas))

                # 3 deliveries per pull request: its merge, and two it ignores (edited, labeled);
                # then 10 % of the merges again under new ids and 20 % of all ids again, elsewhere.
                sends: list[tuple[str, str, dict]] = []
                for installation, _, b in pulls:
                    n = b["pull"]["number"]
                    merged = pr_delivery(b, installation=installation)
                    sends.append((f"merge-{n}", "pull_request", merged))
                    for action, more in (
                        ("edited", {"changes": {"title": {"from": "An older title"}}}),
                        ("labeled", {"label": fill_label("needs-review", b["pull"]["base"]["repo"]["full_name"])}),
                    ):
                        other = {**pr_delivery(b, installation=installation), "action": action, **more}
                        sends.append((f"{action}-{n}", "pull_request", other))
                rnd.shuffle(sends)
                for installation, _, b in rnd.sample(pulls, max(1, len(pulls) // 10)):
                    again = pr_delivery(b, installation=installation)
                    sends.append((f"again-{b['pull']['number']}", "pull_request", again))
                for delivery in rnd.sample(sends, len(sends) // 5):
                    sends.insert(rnd.randrange(len(sends) // 2, len(sends) + 1), delivery)

                statuses: dict[str, list[int]] = {}
                killed_at = len(sends) // 2

                # Round-robin, except that a delivery id sent again goes to the next replica after the last one.
                targets: list[int] = []
                last: dict[str, int] = {}
                for i, (delivery_id, _, _) in enumerate(sends):
                    target = (last[delivery_id] + 1) % len(replicas) if delivery_id in last else i % len(replicas)
                    targets.append(target)
                    last[delivery_id] = target

                async def send(i: int, delivery_id: str, event: str, payload: dict) -> None:
                    body = json.dumps(payload).encode()
                    headers = {
                        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery_id,
                        "Content-Type": "application/json", "X-Hub-Signature-256": sign(SECRET, body),
                    }
                    for attempt in range(len(replicas) * 3):
                        target = replicas[(targets[i] + attempt) % len(replicas)]
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
                ran_ahead: set[int] = set()  # jobs seen running on the replica whose clock is ahead

                def look_at_the_replica_ahead() -> None:
                    with db.pool.connection() as conn:
                        ran_ahead.update(r[0] for r in conn.execute(
                            "SELECT id FROM jobs WHERE state = 'running' AND owner LIKE %s", (f"%:{ahead.proc.pid}:%",)
                        ))

                for start in range(0, len(sends), 10):
                    if start <= killed_at < start + 10:
                        victim = replicas[1]
                        # Kill it while it runs jobs (the write budget keeps jobs running for a while).
                        while not interrupted and time.monotonic() < deadline - 60:
                            look_at_the_replica_ahead()
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
                        look_at_the_replica_ahead()
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
                        # Jobs run more than once although their replica lived: taken over from it.
                        rerun = [r[0] for r in conn.execute(
                            "SELECT delivery_id FROM jobs WHERE attempts > 1 AND NOT id = ANY(%s)", (interrupted,)
                        )]
                        budgets = {r[0] for r in conn.execute("SELECT installation_id FROM write_budget")}
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
        # The replica a minute ahead took its share of the work, and no live replica's job:
        # only the killed replica's jobs ran twice.
        if AHEAD:
            assert ran_ahead, "the replica whose clock is ahead ran no job"
        assert rerun == [], f"{len(rerun)} job(s) of live replicas were taken over: {rerun[:10]}"
        # Nothing doubled: one guide comment per pull request, in its own repository, with its labels.
        bot = sandbox.state.bot_login
        for _, repo, b in pulls:
            n = b["pull"]["number"]
            guides = [c for c in sandbox.comments(repo, n) if c.user == bot and parse_marker(c.body) is not None]
            assert len(guides) == 1, (repo, n, len(guides))
            snapshot = PullRequestSnapshot.from_github(b["pull"], b["files"], b["reviews"], b["review_comments"])
            expected = build_guide(snapshot, rules)
            assert sorted(sandbox.labels(repo, n)) == sorted(expected.labels), (repo, n)
        # Each installation's token was used on its own repository only: nothing refused.
        refused = [r for r in sandbox.requests if r["status"] in (401, 403)]
        assert not refused, refused[:5]
        used = {installation for installation, _, _ in pulls}
        assert {t.installation_id for t in sandbox.state.tokens.values()} == used
        # The replicas kept one shared write budget per installation.
        assert budgets == used, budgets
        # Within each installation's budget, for all replicas together: 80 writes in any minute, 500 in the hour.
        budget = {number: (busiest_minute(times), len(times)) for number, times in write_times.items()}
        assert all(busiest <= 80 and total <= 500 for busiest, total in budget.values()), budget
        print(
            f"\n{len(sends)} deliveries for {PRS} PRs in {len(INSTALLATIONS)} installations,"
            f" {len(interrupted)} job(s) taken over from the killed replica, {len(ran_ahead)} run by the one {AHEAD:.0f} s ahead,"
            f" writes per installation (busiest minute, total) {budget},"
            f" {time.monotonic() - started_at:.1f} s"
        )
