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

Meanwhile two things go wrong on purpose. The replicas narrate guides with a model
server that sends its headers and then a byte every half second, never the whole
answer (:mod:`bot.sandbox.llm`, ``trickle``), under a short ``PRGUIDE_LLM_TIMEOUT``:
every narration runs into its deadline, the engine's guide stays, and no guide waited
for the model. And before the merges come, installation 101 adds a repository whose
history it backfills (``installation_repositories.added``): a few pull requests into
the backfill, the sandbox says the installation's primary rate limit is spent until a
reset ``RESET_IN`` seconds later (an hour's window on GitHub), so its backfill and its
first merges meet the limit. The backfill jobs that meet it wait for the reset without
spending an attempt, every backfilled pull request's guide is stored once (no
comment), and the only refusals are that installation's, within that window.

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
from bot.feature_support import BACKFILL_EVENT, NARRATE_EVENT, NARRATED_LEVELS
from bot.app.pgjobs import PgJobStore
from bot.app.webhook import sign
from bot.engine.build import build_guide
from bot.engine.marker import parse_marker
from bot.sandbox import bundle_in_repo
from bot.sandbox.llm import NAMED_REPLIES, ScriptedModel
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
_REPO_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)/")
_COMMENT_POST = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments")
#: The repository installation 101 adds during the run, and how many merged pull requests it backfills.
HISTORY, BACKFILLED = "lab-a/history", 16
#: Backfilled pull requests whose files are read before the installation's rate limit runs out.
LIMIT_AFTER = 5
#: Backfill jobs held back by the spent limit before the merges are delivered.
HELD_FIRST = 3
#: Seconds from the limit running out to its reset (``x-ratelimit-reset``).
RESET_IN = 10
#: Each installation's primary limit an hour: GitHub Enterprise Cloud's, so that the backfill's
#: slots (3 requests per pull request at 80 % of the limit) are 0.9 s apart.
RATE_LIMIT = 15_000
#: ``PRGUIDE_LLM_TIMEOUT``: seconds a narration may take; the trickling model never finishes one.
LLM_DEADLINE = 2
_HISTORY_FILES = re.compile(rf"^/repos/{HISTORY}/pulls/\d+/files")
#: Whole test, seconds: replicas start in a few seconds; each installation's write budget
#: (about three writes per pull request at 72 a minute, after a burst of 8), the killed
#: replica's lease and the backfill's wait for the reset pace the rest.
DEADLINE = 90.0 + RESET_IN + 3.0 * math.ceil(PRS / len(INSTALLATIONS))


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


def _narrated_pull(key: str) -> tuple[str, int]:
    """``(repository, number)`` of a narration job's key, ``owner/repo#N:narration``."""
    match = re.fullmatch(r"([^#]+)#(\d+):narration", key)
    assert match, key
    return match.group(1), int(match.group(2))


def history_added(installation: int, account: str) -> dict:
    """The ``installation_repositories.added`` payload of ``HISTORY`` (GitHub's "Webhook events and payloads")."""
    return {
        "action": "added", "repository_selection": "selected",
        "installation": {"id": installation, "account": {"login": account, "type": "Organization"}},
        "repositories_added": [{"id": 9001, "name": HISTORY.split("/")[1], "full_name": HISTORY, "private": False}],
        "repositories_removed": [], "sender": {"login": "maintainer", "type": "User"},
    }  # fmt: skip


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
    limited_installation, limited_account = INSTALLATIONS[0]
    assert HISTORY.startswith(f"{limited_account}/")

    async with (
        start_sandbox(
            app_private_key, bundles=[b for _, _, b in pulls], installations=installations, rate_limit=RATE_LIMIT
        ) as sandbox,
        ScriptedModel([], repeat=NAMED_REPLIES["trickle"]) as model,
    ):
        sandbox.state.add_merged_pulls(HISTORY, BACKFILLED)
        sandbox.set_file(HISTORY, ".github/prguide.yml", f"backfill: {BACKFILLED}\n")
        # Content writes (not GET, under /repos/) by installation; token requests are the app's own.
        write_times: dict[int, list[float]] = {number: [] for number, _ in INSTALLATIONS}
        posted: dict[tuple[str, int], float] = {}  # first guide comment posted on each pull request (Unix s)
        refusals: list[tuple[float, str, int]] = []  # (Unix s, path, status) of every 401 and 403
        history_reads: list[str] = []
        limit: dict[str, float] = {}  # when the installation's limit ran out ("at") and its reset (Unix s)
        record = sandbox.state.record

        def timed_record(method: str, path: str, status: int) -> None:
            match = _REPO_PATH.match(path)
            if method != "GET" and match:
                write_times[installation_of[match.group(1)]].append(time.monotonic())
            comment = _COMMENT_POST.match(path)
            if method == "POST" and status == 201 and comment:
                posted.setdefault((comment.group(1), int(comment.group(2))), time.time())
            if status in (401, 403):
                refusals.append((time.time(), path, status))
            if method == "GET" and status == 200 and _HISTORY_FILES.match(path):
                history_reads.append(path)
                if len(history_reads) == LIMIT_AFTER:
                    # The installation's primary limit is spent, mid-backfill, until a reset soon.
                    bucket = sandbox.state.bucket(f"installation:{limited_installation}")
                    bucket.remaining, bucket.reset = 0, int(sandbox.state.now()) + RESET_IN
                    limit.update(at=time.time(), reset=float(bucket.reset))
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
            "PRGUIDE_JOB_LEASE": "6",  # heartbeats every 2 s: a loaded CI machine may stall one
            "PRGUIDE_WORKERS": "4",
            "PRGUIDE_LOG_LEVEL": "WARNING",
            # A reconcile pass at an hour's turn would queue jobs no delivery asked for.
            "PRGUIDE_RECONCILE_INTERVAL": "0",
            "PRGUIDE_LLM_URL": model.base_url,
            "PRGUIDE_LLM_MODEL": model.model,
            "PRGUIDE_LLM_TIMEOUT": str(LLM_DEADLINE),
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
                # First of all, installation 101 adds the repository it will backfill.
                added = ("history-added", "installation_repositories", history_added(limited_installation, limited_account))
                sends.insert(0, added)

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
                held: dict[int, int] = {}  # backfill jobs seen held back by the rate limit: most attempts seen then

                def look() -> None:
                    with db.pool.connection() as conn:
                        ran_ahead.update(r[0] for r in conn.execute(
                            "SELECT id FROM jobs WHERE state = 'running' AND owner LIKE %s", (f"%:{ahead.proc.pid}:%",)
                        ))
                        for job_id, attempts in conn.execute(
                            "SELECT id, attempts FROM jobs WHERE event = %s AND state = 'queued' AND error LIKE 'RateLimited%%'",
                            (BACKFILL_EVENT,),
                        ):
                            held[job_id] = max(held.get(job_id, 0), attempts)

                # The backfill is under way, and its installation's limit spent, before the merges come.
                await send(0, *sends[0])
                while len(history_reads) < LIMIT_AFTER or len(held) < HELD_FIRST:
                    assert time.monotonic() < deadline, f"the backfill read {len(history_reads)}, {len(held)} held back"
                    look()
                    await asyncio.sleep(0.05)
                for start in range(1, len(sends), 10):
                    if start <= killed_at < start + 10:
                        victim = replicas[1]
                        # Kill it while it runs jobs (the write budget keeps jobs running for a while).
                        while not interrupted and time.monotonic() < deadline - 60:
                            look()
                            with db.pool.connection() as conn:
                                interrupted = [r[0] for r in conn.execute(
                                    "SELECT id FROM jobs WHERE state = 'running' AND owner LIKE %s",
                                    (f"%:{victim.proc.pid}:%",),
                                )]
                            await asyncio.sleep(0.05)
                        pid = victim.proc.pid
                        with db.pool.connection() as conn:
                            assert conn.execute(
                                "SELECT 1 FROM pg_stat_activity WHERE application_name = %s", (f"prguide:{pid}",),
                            ).fetchone(), "the replica's connections do not carry its process id"
                        victim.kill()
                        # A commit it sent just before it died may still wait in its socket:
                        # its backends run what they got before they see the socket closed.
                        while True:
                            with db.pool.connection() as conn:
                                if not conn.execute(
                                    "SELECT 1 FROM pg_stat_activity WHERE application_name = %s", (f"prguide:{pid}",),
                                ).fetchone():
                                    break
                            assert time.monotonic() < deadline, "the killed replica's database sessions never ended"
                            await asyncio.sleep(0.05)
                        # What it ran when it died: a job seen running above may have finished
                        # in between, so only the rows still held by the dead process count.
                        with db.pool.connection() as conn:
                            interrupted = [r[0] for r in conn.execute(
                                "SELECT id FROM jobs WHERE state = 'running' AND owner LIKE %s", (f"%:{pid}:%",),
                            )]
                        victim.start()
                    await asyncio.gather(*(send(start + j, *s) for j, s in enumerate(sends[start : start + 10])))
                    look()
                await replicas[1].ready(session, deadline)

                store = PgJobStore(db)
                try:
                    while True:
                        look()
                        counts = store.counts()
                        if counts["queued"] == counts["running"] == 0 and len(history_reads) >= BACKFILLED:
                            break
                        if time.monotonic() >= deadline:
                            with db.pool.connection() as conn:
                                open_jobs = conn.execute(
                                    "SELECT delivery_id, state, attempts, not_before - extract(epoch FROM now()), error"
                                    " FROM jobs WHERE state IN ('queued', 'running')"
                                ).fetchall()
                            raise AssertionError(f"jobs still open: {counts}, {len(history_reads)} history reads: {open_jobs[:10]}")
                        await asyncio.sleep(0.2)
                    with db.pool.connection() as conn:
                        jobs = conn.execute(
                            "SELECT id, event, action, key, delivery_id, state, outcome, attempts, created_at, updated_at"
                            " FROM jobs"
                        ).fetchall()
                        # Jobs run more than once although their replica lived: taken over from it.
                        rerun = [r[0] for r in conn.execute(
                            "SELECT delivery_id FROM jobs WHERE attempts > 1 AND NOT id = ANY(%s)", (interrupted,)
                        )]
                        budgets = {r[0] for r in conn.execute("SELECT installation_id FROM write_budget")}
                        stored = [r[0] for r in conn.execute(
                            "SELECT number FROM tagview_guides WHERE repository = %s", (HISTORY,)
                        )]
                finally:
                    store.close()
        finally:
            for r in replicas:
                r.stop()

        by_id = {j[0]: j for j in jobs}
        merges_run = [j for j in jobs if j[1] == "pull_request"]
        narrations = [j for j in jobs if j[1] == NARRATE_EVENT]
        backfill = [j for j in jobs if j[1] == BACKFILL_EVENT]
        # Nothing lost: every merge and redelivery became exactly one job; every job is done.
        merges = {d for d, _, _ in sends if d.startswith(("merge-", "again-"))}
        assert sorted(j[4] for j in merges_run) == sorted(merges)
        assert [j for j in jobs if j[5] != "done"] == [], [j[:8] for j in jobs if j[5] != "done"][:10]
        assert all(s < 500 or s == 503 for codes in statuses.values() for s in codes)
        # The jobs the killed replica was running were taken over after their lease and finished.
        assert interrupted, "the victim never ran a job"
        taken_over = [by_id[i] for i in interrupted]
        assert all(j[5] == "done" and j[7] >= 2 for j in taken_over), [j[:8] for j in taken_over]
        # The replica a minute ahead took its share of the work, and no live replica's job:
        # only the killed replica's jobs ran twice (a wait for the rate limit spends no attempt).
        if AHEAD:
            assert ran_ahead, "the replica whose clock is ahead ran no job"
        assert rerun == [], f"{len(rerun)} job(s) of live replicas were taken over: {rerun[:10]}"
        # Nothing doubled: one guide comment per pull request, in its own repository, with its labels.
        bot = sandbox.state.bot_login
        narrated: set[tuple[str, int]] = set()  # pull requests whose guide the narrator is asked for
        for _, repo, b in pulls:
            n = b["pull"]["number"]
            guides = [c for c in sandbox.comments(repo, n) if c.user == bot and parse_marker(c.body) is not None]
            assert len(guides) == 1, (repo, n, len(guides))
            snapshot = PullRequestSnapshot.from_github(b["pull"], b["files"], b["reviews"], b["review_comments"])
            expected = build_guide(snapshot, rules)
            assert sorted(sandbox.labels(repo, n)) == sorted(expected.labels), (repo, n)
            # The model never finished a narration: the engine's guide stayed as it was posted.
            assert not parse_marker(guides[0].body).extra.get("narrated"), (repo, n)
            if expected.data.get("reading_level") in NARRATED_LEVELS:
                narrated.add((repo, n))

        # Narration never held a guide back: each was queued after its guide comment was up,
        # under a key of its own; every one ran into the model's deadline and edited nothing.
        assert narrated, "no guide was for narrating"
        narrating = {j[0]: _narrated_pull(j[3]) for j in narrations}  # job id: (repository, number)
        assert set(narrating.values()) == narrated
        early = [(j[3], round(posted[narrating[j[0]]] - j[8], 3)) for j in narrations if j[8] < posted[narrating[j[0]]]]
        assert early == [], early
        assert all(j[9] - j[8] >= LLM_DEADLINE - 0.1 for j in narrations)  # only the deadline ends a trickle
        assert len(model.requests) >= len(narrated)  # each reached the trickling server
        edits = [r for r in sandbox.requests if r["method"] == "PATCH" and "/issues/comments/" in r["path"]]
        assert edits == [], edits[:5]
        # Every merged pull request of the added repository has its guide stored once, without a comment.
        assert sorted(stored) == list(range(1, BACKFILLED + 1))
        assert all(sandbox.comments(HISTORY, n) == [] for n in range(1, BACKFILLED + 1))
        pull_jobs = [j for j in backfill if j[2] == "pull"]
        assert sorted(j[4].rsplit(":", 1)[1] for j in pull_jobs) == sorted(str(n) for n in range(1, BACKFILLED + 1))
        # The installation's limit ran out mid-backfill. The backfill jobs that met it were held
        # back with no attempt spent, and finished (at their first attempt) after the reset.
        assert limit, "the backfill never read enough pull requests for the limit to run out"
        assert len(held) >= HELD_FIRST, held
        assert all(attempts == 0 or i in interrupted for i, attempts in held.items()), held
        assert all(by_id[i][7] == 1 or i in interrupted for i in held), [by_id[i][:8] for i in held]
        assert all(by_id[i][9] >= limit["reset"] for i in held), [(by_id[i][4], by_id[i][9] - limit["reset"]) for i in held]
        # Each installation's token was used on its own repository only, and refused only while
        # the limited installation's window was spent: nothing else refused, no 401.
        outside = [r for r in refusals if not (
            r[2] == 403 and r[1].startswith(f"/repos/{limited_account}/") and limit["at"] <= r[0] <= limit["reset"] + 1
        )]  # fmt: skip
        assert outside == [], outside[:5]
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
            f" {len(narrations)} narrations for {len(narrated)} guides, {len(model.requests)} model calls, all timed out;"
            f" {len(held)} backfill job(s) of {len(backfill)} held back by the rate limit, {len(refusals)} refusal(s);"
            f" {time.monotonic() - started_at:.1f} s"
        )
